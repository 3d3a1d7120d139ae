"""Moves between the log dirs of one broker (KIP-113 AlterReplicaLogDirs), as
``kafka-reassign-partitions.sh`` sends them for a plan's ``log_dirs``.

AlterReplicaLogDirs goes to the broker that holds the replicas (never the controller); its answer
has an error code per replica: LOG_DIR_NOT_FOUND (the broker has no such dir), KAFKA_STORAGE_ERROR
(the dir, or the replica's, is offline), REPLICA_NOT_AVAILABLE (the broker holds no replica of it),
UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION (a name too long for a future dir),
CLUSTER_AUTHORIZATION_FAILED (it needs ALTER on the cluster). A move's progress is read with
``describe_log_dirs`` (``ReplicasMixin``): the future replica is listed in its target dir with
``is_future``, beside the current one.
"""

from __future__ import annotations

from collections.abc import Mapping

from .base import GatewayBase, group_by_topic
from .errors import KafkaOperationError, from_code
from .types import OK, LogDirInfo, Ok, TopicPartition


class LogDirsMixin(GatewayBase):
    """AlterReplicaLogDirs, and one broker's log dirs."""

    def alter_replica_log_dirs(
        self, broker: int, dirs: Mapping[TopicPartition, str]
    ) -> dict[TopicPartition, Ok | KafkaOperationError]:
        """Ask ``broker`` to move each replica to its dir; per-replica result (a request that
        fails as a whole is every replica's error)."""
        from kafka.protocol.admin import AlterReplicaLogDirsRequest

        self._require_brokers("moving replicas between log dirs")
        if not dirs:
            return {}
        D = AlterReplicaLogDirsRequest.AlterReplicaLogDir
        T = D.AlterReplicaLogDirTopic
        by_dir: dict[str, list[TopicPartition]] = {}
        for tp, path in dirs.items():
            by_dir.setdefault(path, []).append(tp)
        request = AlterReplicaLogDirsRequest(
            dirs=[
                D(path=path, topics=[T(name=t, partitions=ps) for t, ps in group_by_topic(tps).items()])
                for path, tps in by_dir.items()
            ]
        )
        out: dict[TopicPartition, Ok | KafkaOperationError] = {}
        try:
            response = self._kp.send(request, broker)
        except KafkaOperationError as err:
            return dict.fromkeys(dirs, err)
        for t in response.results:
            for p in t.partitions:
                tp = TopicPartition(t.topic_name, p.partition_index)
                out[tp] = from_code(p.error_code) if p.error_code else OK
        return {
            tp: out.get(tp) or KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "no answer for this replica")
            for tp in dirs
        }

    def broker_log_dirs(
        self, broker: int, partitions: list[TopicPartition] | None = None
    ) -> tuple[LogDirInfo, ...]:
        """One broker's log dirs with their replicas (``partitions``: only those), future replicas
        included; KafkaOperationError when the broker cannot be asked."""
        got = self.describe_log_dirs([broker], partitions)[broker]  # type: ignore[attr-defined]
        if isinstance(got, KafkaOperationError):
            raise got
        return got
