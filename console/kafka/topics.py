"""Topic mutations and offsets: create, delete, add partitions, list offsets."""

from __future__ import annotations

from typing import Any

from .base import GatewayBase
from .errors import KafkaOperationError, from_code
from .types import OK, NewPartitions, NewTopic, Ok, PartitionOffsets, TopicPartition

#: ``list_offsets`` specs besides an integer timestamp (ms).
OFFSET_SPECS = ("earliest", "latest", "max_timestamp")


class TopicsMixin(GatewayBase):
    """CreateTopics, DeleteTopics, CreatePartitions, ListOffsets."""

    def create_topics(
        self, specs: list[NewTopic], validate_only: bool = False
    ) -> dict[str, Ok | KafkaOperationError]:
        """Create topics in one batched request; per-topic result (``validate_only`` = dry run).

        Sent as one CreateTopics request over kafka-python's protocol classes so that every
        spec reaches Kafka and gets Kafka's own per-topic verdict (librdkafka rejects some
        specs locally and fails the whole batch).
        """
        self._require_brokers("creating topics")
        from kafka.protocol.admin import CreateTopicsRequest

        if not specs:
            return {}
        T = CreateTopicsRequest.CreatableTopic
        out: dict[str, Ok | KafkaOperationError] = {}
        todo = []
        for s in specs:
            if s.name in out or any(t.name == s.name for t in todo):
                out[s.name] = KafkaOperationError(42, "INVALID_REQUEST", f"topic '{s.name}' is listed twice")
                continue
            configs = [T.CreatableTopicConfig(name=str(k), value=None if v is None else str(v))
                       for k, v in (s.configs or {}).items()]
            if s.replica_assignment is not None:
                assignments = [T.CreatableReplicaAssignment(partition_index=i, broker_ids=list(r))
                               for i, r in enumerate(s.replica_assignment)]
                todo.append(T(name=s.name, num_partitions=-1, replication_factor=-1, assignments=assignments,
                              configs=configs))
            else:
                todo.append(T(name=s.name, num_partitions=s.partitions, replication_factor=s.replication_factor,
                              assignments=[], configs=configs))
        if todo:
            request = CreateTopicsRequest(topics=todo, timeout_ms=int(self._timeout * 1000),
                                          validate_only=validate_only)
            try:
                response = self._kp.send(request)
            except KafkaOperationError as err:
                out.update(dict.fromkeys((t.name for t in todo), err))
            else:
                for r in response.topics:
                    out.setdefault(r.name, from_code(r.error_code, r.error_message) or OK)
                for t in todo:
                    out.setdefault(t.name, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "no answer for this topic"))
        return {s.name: out[s.name] for s in specs}

    def delete_topics(self, names: list[str]) -> dict[str, Ok | KafkaOperationError]:
        """Delete topics; per-topic result."""
        self._require_brokers("deleting topics")
        if not names:
            return {}
        self._reachable()
        names = list(dict.fromkeys(names))
        futures = self._call(self._admin.delete_topics, names, operation_timeout=self._timeout,
                             what="delete topics", **self._admin_kwargs())
        return self._wait_all(futures, lambda k, v: OK, "delete topic")

    def create_partitions(
        self, specs: list[NewPartitions], validate_only: bool = False
    ) -> dict[str, Ok | KafkaOperationError]:
        """Grow topics to a new total partition count (optionally placing the new partitions)."""
        self._require_brokers("adding partitions")
        from kafka.protocol.admin import CreatePartitionsRequest

        if not specs:
            return {}
        T = CreatePartitionsRequest.CreatePartitionsTopic
        todo = []
        for s in specs:
            assignment = None if s.assignment is None else [
                T.CreatePartitionsAssignment(broker_ids=list(r)) for r in s.assignment]
            todo.append(T(name=s.topic, count=s.total_count, assignments=assignment))
        request = CreatePartitionsRequest(topics=todo, timeout_ms=int(self._timeout * 1000),
                                          validate_only=validate_only)
        try:
            response = self._kp.send(request)
        except KafkaOperationError as err:
            return {s.topic: err for s in specs}
        out: dict[str, Ok | KafkaOperationError] = {}
        for r in response.results:
            out.setdefault(r.name, from_code(r.error_code, r.error_message) or OK)
        return {s.topic: out.get(s.topic, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "no answer"))
                for s in specs}

    def list_offsets(
        self, partitions: list[TopicPartition], spec: str | int = "latest", isolation: str = "READ_UNCOMMITTED"
    ) -> dict[TopicPartition, PartitionOffsets | KafkaOperationError]:
        """Offsets for each partition by ``spec``: earliest, latest, max_timestamp or a timestamp (ms).

        librdkafka batches the requests per partition leader.
        """
        self._require_brokers("listing offsets")
        import confluent_kafka
        from confluent_kafka.admin import OffsetSpec

        if not partitions:
            return {}
        if isinstance(spec, int) and not isinstance(spec, bool):
            ospec = OffsetSpec.for_timestamp(spec)
        elif spec in OFFSET_SPECS:
            ospec = getattr(OffsetSpec, spec)()
        else:
            raise KafkaOperationError(42, "INVALID_REQUEST", f"unknown offset spec {spec!r}")
        self._reachable()
        request = {confluent_kafka.TopicPartition(tp.topic, tp.partition): ospec for tp in dict.fromkeys(partitions)}
        level = getattr(confluent_kafka.IsolationLevel, isolation)
        futures = self._call(self._admin.list_offsets, request, isolation_level=level, what="list offsets",
                             **self._admin_kwargs())
        by_key = {TopicPartition(k.topic, k.partition): f for k, f in futures.items()}

        def convert(_k: TopicPartition, r: Any) -> PartitionOffsets:
            epoch = r.leader_epoch if r.leader_epoch is not None and r.leader_epoch >= 0 else None
            ts = r.timestamp if r.timestamp is not None and r.timestamp >= 0 else None
            return PartitionOffsets(r.offset, ts, epoch)

        return self._wait_all(by_key, convert, "list offsets of")
