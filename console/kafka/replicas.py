"""Replica placement: reassignments (KIP-455), log dirs (KIP-113), leader elections (KIP-460).

librdkafka has none of the first two, so all of these go over kafka-python's protocol classes
(the same code serves KIP-919 controller connections, except log dirs, which only brokers have).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .base import GatewayBase, group_by_topic
from .errors import KafkaOperationError, from_code
from .kp import check
from .types import OK, LogDirInfo, Ok, PartitionReassignment, ReplicaLogInfo, TopicPartition

ELECTION_TYPES = {"PREFERRED": 0, "UNCLEAN": 1}


class ReplicasMixin(GatewayBase):
    """Reassignments, log dirs, elections."""

    def alter_partition_reassignments(
        self, mapping: dict[TopicPartition, tuple[int, ...] | list[int] | None]
    ) -> dict[TopicPartition, Ok | KafkaOperationError]:
        """Start (target replicas) or cancel (None) reassignments; per-partition result."""
        from kafka.protocol.admin import AlterPartitionReassignmentsRequest

        if not mapping:
            return {}
        out: dict[TopicPartition, Ok | KafkaOperationError] = {}
        valid: dict[TopicPartition, list[int] | None] = {}
        for tp, replicas in mapping.items():
            if replicas is not None:
                reps = list(replicas)
                # broker ids: integers, not booleans (one C-level pass over the few types present)
                if not reps or not all(t is not bool and issubclass(t, int) for t in set(map(type, reps))):
                    out[tp] = KafkaOperationError(
                        39,
                        "INVALID_REPLICA_ASSIGNMENT",
                        f"replicas of {tp.topic}-{tp.partition} must be broker ids",
                    )
                    continue
                valid[tp] = reps
            else:
                valid[tp] = None
        if valid:
            T = AlterPartitionReassignmentsRequest.ReassignableTopic
            P = T.ReassignablePartition
            by_topic: dict[str, list] = {}
            for (topic, p), reps in valid.items():
                by_topic.setdefault(topic, []).append(P(partition_index=p, replicas=reps))
            topics = [T(name=topic, partitions=parts) for topic, parts in by_topic.items()]
            request = AlterPartitionReassignmentsRequest(timeout_ms=int(self._timeout * 1000), topics=topics)
            try:
                response = self._kp.send_to_controller(request)
                check(response)
            except KafkaOperationError as err:
                out.update(dict.fromkeys(valid, err))
            else:
                for t in response.responses:
                    for p in t.partitions:
                        tp = TopicPartition(t.name, p.partition_index)
                        out[tp] = from_code(p.error_code, p.error_message) if p.error_code else OK
                for tp in valid:
                    out.setdefault(
                        tp, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "no answer for this partition")
                    )
        return {tp: out[tp] for tp in mapping}

    def list_partition_reassignments(
        self, partitions: list[TopicPartition] | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        """Reassignments in progress (all, or among ``partitions``)."""
        response = self._list_reassignments(partitions)
        if response is None:
            return {}
        out = {}
        for t in response.topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                out[tp] = PartitionReassignment(
                    t.name,
                    p.partition_index,
                    tuple(p.replicas),
                    tuple(p.adding_replicas),
                    tuple(p.removing_replicas),
                )
        return out

    def _list_reassignments(self, partitions: list[tuple[str, int]] | None) -> Any:
        """The checked ListPartitionReassignments answer (None when ``partitions`` is empty)."""
        request = self._list_reassignments_request(partitions)
        if request is None:
            return None
        response = self._kp.send_to_controller(request)
        check(response)
        return response

    def _list_reassignments_request(self, partitions: list[tuple[str, int]] | None) -> Any:
        from kafka.protocol.admin import ListPartitionReassignmentsRequest

        T = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
        topics = (
            None
            if partitions is None
            else [
                T(name=topic, partition_indexes=parts) for topic, parts in group_by_topic(partitions).items()
            ]
        )
        if topics == []:
            return None
        return ListPartitionReassignmentsRequest(timeout_ms=int(self._timeout * 1000), topics=topics)

    def reassignment_poll_plan(
        self,
        moving: Iterable[tuple[str, int]],
        partitions: Mapping[int, Iterable[tuple[str, int]]],
        only: Mapping[str, Any] | None = None,
    ) -> Any:
        """A ``reassign_reads.PollPlan``: the ListPartitionReassignments of ``moving`` and each
        broker's DescribeLogDirs of ``partitions`` built once, for every cycle of that moving set
        (``reassignment_poll_reads``); ``only`` ({topic: partition ids}) keeps just those of the ISR."""
        from .reassign_reads import PollPlan

        return PollPlan(moving, partitions, int(self._timeout * 1000), only)

    def reassignment_poll_reads(
        self, plan: Any, topics: Iterable[str]
    ) -> tuple[set[tuple[str, int]], dict[int, Any], Any]:
        """``poll_reads(moving, partitions, topics, only)`` of the plan's moving set and brokers, its
        requests sent as built (``reassign_reads.planned_reads``): (listed, each broker's held
        replicas or error, the ISR of ``topics`` or its error). The listing's failure is raised."""
        from .reassign_reads import planned_reads

        return planned_reads(self, plan, topics)

    def describe_log_dirs(
        self,
        broker_ids: list[int] | None = None,
        partitions: list[TopicPartition] | Mapping[int, Iterable[TopicPartition]] | None = None,
    ) -> dict[int, tuple[LogDirInfo, ...] | KafkaOperationError]:
        """Log dirs of each broker (one request per broker) with per-replica size and lag.

        ``partitions`` is one filter for every broker, or ``{broker: partitions}`` asking each
        broker only about the partitions it may host (its brokers default to the mapping's keys):
        a poll of 10,000 moving partitions then names each partition to its 3-4 replicas only,
        not to every involved broker.
        """
        ids, out, asked = self._log_dir_requests(broker_ids, partitions)
        return self._log_dir_answers(ids, out, asked, self._kp.send_many(asked))

    def _log_dir_requests(
        self,
        broker_ids: list[int] | None,
        partitions: list[TopicPartition] | Mapping[int, Iterable[TopicPartition]] | None,
        request: Any = None,
    ) -> tuple[list[int], dict[int, Any], list[tuple[Any, int]]]:
        """(the brokers asked, the errors of those not live, ``[(request, broker)]``): each a
        ``request`` (a class; kafka-python's DescribeLogDirsRequest when None)."""
        self._require_brokers("describing log dirs")
        from kafka.protocol.admin import DescribeLogDirsRequest

        request = request or DescribeLogDirsRequest

        per_broker = isinstance(partitions, Mapping)
        if broker_ids is None and per_broker:
            broker_ids = list(partitions)
        ids = None if broker_ids is None else list(dict.fromkeys(broker_ids))
        live = self._kp.broker_ids(expect=ids or ())
        ids = live if ids is None else ids
        T = DescribeLogDirsRequest.DescribableLogDirTopic

        def filter_for(tps: Iterable[TopicPartition] | None) -> list[Any] | None:
            if tps is None:
                return None
            return [T(topic=topic, partitions=parts) for topic, parts in group_by_topic(tps).items()]

        shared = None if per_broker else filter_for(partitions)
        out: dict[int, Any] = {}
        asked = []
        for broker in ids:
            if broker not in live:
                out[broker] = KafkaOperationError(8, "BROKER_NOT_AVAILABLE", f"broker {broker} is not live")
            else:
                topics = filter_for(partitions.get(broker, ())) if per_broker else shared
                asked.append((request(topics=topics), broker))
        return ids, out, asked

    @staticmethod
    def _log_dir_answers(
        ids: list[int],
        out: dict[int, Any],
        asked: list[tuple[Any, int]],
        answers: list[Any],
    ) -> dict[int, Any]:
        """Each broker's answer as a tuple of ``LogDirInfo``, or its error."""
        # one request per broker, in flight together (kafka-python's I/O thread multiplexes them)
        for (_, broker), response in zip(asked, answers, strict=True):
            if isinstance(response, KafkaOperationError):
                out[broker] = response
                continue
            err = from_code(getattr(response, "error_code", 0), getattr(response, "error_message", None))
            if err is not None:
                out[broker] = err
            else:
                out[broker] = tuple(_log_dir(d) for d in response.results)
        return {b: out[b] for b in ids}

    def elect_leaders(
        self, election_type: str = "PREFERRED", partitions: list[TopicPartition] | None = None
    ) -> dict[TopicPartition, Ok | KafkaOperationError]:
        """Preferred or unclean leader election; per-partition result.

        ``partitions=None`` means every partition (Kafka then reports only partitions where an
        election was attempted). ELECTION_NOT_NEEDED comes back as that partition's error.
        """
        from kafka.protocol.admin import ElectLeadersRequest

        try:
            etype = ELECTION_TYPES[election_type.upper()]
        except (KeyError, AttributeError):
            raise KafkaOperationError(
                42, "INVALID_REQUEST", f"unknown election type {election_type!r}"
            ) from None
        T = ElectLeadersRequest.TopicPartitions
        tps = (
            None
            if partitions is None
            else [T(topic=topic, partitions=parts) for topic, parts in group_by_topic(partitions).items()]
        )
        if tps == []:
            return {}
        request = ElectLeadersRequest(
            election_type=etype, topic_partitions=tps, timeout_ms=int(self._timeout * 1000), min_version=1
        )
        try:
            response = self._kp.send_to_controller(request)
            check(response)
        except KafkaOperationError as err:
            if partitions is None:
                raise
            return dict.fromkeys(partitions, err)
        out: dict[TopicPartition, Ok | KafkaOperationError] = {}
        for r in response.replica_election_results:
            for p in r.partition_result:
                out[TopicPartition(r.topic, p.partition_id)] = from_code(p.error_code, p.error_message) or OK
        if partitions is not None:
            for tp in partitions:
                out.setdefault(
                    tp, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "no answer for this partition")
                )
        return out


def _log_dir(d: Any) -> LogDirInfo:
    """One log dir of a DescribeLogDirs answer (a hot path: 10,000s of replicas per poll)."""
    replicas: dict[TopicPartition, ReplicaLogInfo] = {}
    new = tuple.__new__  # the named tuples built without their Python-level __new__
    for t in d.topics:
        name = t.name
        for p in t.partitions:
            replicas[new(TopicPartition, (name, p.partition_index))] = new(
                ReplicaLogInfo, (p.partition_size, p.offset_lag, bool(p.is_future_key))
            )
    total = getattr(d, "total_bytes", -1)
    usable = getattr(d, "usable_bytes", -1)
    return LogDirInfo(
        d.log_dir,
        from_code(d.error_code),
        replicas,
        total if total is not None and total >= 0 else None,
        usable if usable is not None and usable >= 0 else None,
    )
