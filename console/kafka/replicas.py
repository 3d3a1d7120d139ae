"""Replica placement: reassignments (KIP-455), log dirs (KIP-113), leader elections (KIP-460).

librdkafka has none of the first two, so all of these go over kafka-python's protocol classes
(the same code serves KIP-919 controller connections, except log dirs, which only brokers have).
"""

from __future__ import annotations

import gc
from collections.abc import Container, Iterable, Mapping
from typing import Any

from .base import GatewayBase, group_by_topic
from .errors import KafkaOperationError, from_code
from .kp import check
from .types import OK, LogDirInfo, Ok, PartitionReassignment, ReplicaLogInfo, TopicPartition

ELECTION_TYPES = {"PREFERRED": 0, "UNCLEAN": 1}

#: A poll's ISR is read from the whole cluster's Metadata when its topics hold at least this share
#: of the cluster's partitions (see ``ReplicasMixin._isr_from_whole_cluster``).
WHOLE_ISR_SHARE = 0.5
#: Before the cluster's partitions have been counted, a poll whose topics hold at least this many
#: partitions reads the whole cluster once (and so counts it).
WHOLE_PROBE_PARTITIONS = 20_000


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
                if not reps or not all(isinstance(r, int) and not isinstance(r, bool) for r in reps):
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
            topics = [
                T(
                    name=topic,
                    partitions=[
                        P(partition_index=p, replicas=valid[TopicPartition(topic, p)]) for p in parts
                    ],
                )
                for topic, parts in group_by_topic(valid).items()
            ]
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
                        out[tp] = from_code(p.error_code, p.error_message) or OK
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

    def reassigning(self, partitions: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        """Which of ``partitions`` Kafka lists as being reassigned: the keys of
        ``list_partition_reassignments(partitions)`` as ``(topic, partition)`` tuples, without a
        ``PartitionReassignment`` per partition (a poll asks about 10,000s every second)."""
        request = self._list_reassignments_request(list(partitions))
        if request is None:
            return set()
        return _reassigning(self._kp.send_to_controller(request))

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

    def log_dirs_and_isr(
        self,
        partitions: Mapping[int, Iterable[TopicPartition]],
        topics: Iterable[str],
        only: Mapping[str, Container[int]] | None = None,
    ) -> tuple[dict[int, HeldReplicas | KafkaOperationError], PartitionIsr | KafkaOperationError]:
        """The replicas each broker holds among ``partitions`` (its DescribeLogDirs, as
        ``describe_log_dirs(partitions=partitions)`` asks it) and ``partition_isr(topics)``.

        A reassignment poll needs both in one cycle (sizes, and the ISR of replicas level with
        their leader); the ISR is read while the log dirs are (see ``_isr_from_whole_cluster``).
        Each broker's answer comes as ``{(topic, partition): (size, offset lag)}`` over its log
        dirs, future replicas (a move between the broker's own dirs) left out: what
        ``progress.flatten_logs`` makes of ``describe_log_dirs``, without a ``LogDirInfo`` and
        a ``ReplicaLogInfo`` per replica. ``only`` ({topic: partition ids}) keeps just those
        partitions of the ISR answer.
        """
        _, held, isr = self.poll_reads(None, partitions, topics, only)
        return held, isr

    def poll_reads(
        self,
        moving: Iterable[tuple[str, int]] | None,
        partitions: Mapping[int, Iterable[TopicPartition]],
        topics: Iterable[str],
        only: Mapping[str, Container[int]] | None = None,
    ) -> tuple[
        set[tuple[str, int]],
        dict[int, HeldReplicas | KafkaOperationError],
        PartitionIsr | KafkaOperationError,
    ]:
        """``reassigning(moving)`` and ``log_dirs_and_isr(partitions, topics, only)`` in one
        flight (a reassignment poll's reads; none waits for another). ``moving`` None: no
        ListPartitionReassignments (an empty set). Its failure is raised, as ``reassigning``
        raises it, once the other answers are in."""
        ids, out, asked = self._log_dir_requests(None, partitions)
        listing = None if moving is None else self._list_reassignments_request(list(moving))
        first = [] if listing is None else [(listing, None)]
        names = sorted(set(topics))
        whole = bool(names) and self._isr_from_whole_cluster(names)
        isr: PartitionIsr | KafkaOperationError = {}
        if whole:
            # the log dirs go out first; librdkafka's whole-cluster Metadata is read on this
            # thread meanwhile (it decodes in C and releases the GIL while it waits), while
            # kafka-python's I/O thread reads the log dirs' answers
            wait = self._kp.start_many([*first, *asked])
            try:
                isr = self._whole_cluster_isr(names, only)
            finally:
                answers = wait()
        elif names:
            answers = self._kp.send_many([*first, *asked, (_metadata_request(names), None)])
            isr = _isr_answer(names, answers[-1], only)
            self._note_partition_counts(answers[-1])
            answers = answers[:-1]
        else:
            answers = self._kp.send_many([*first, *asked])
        listed: set[tuple[str, int]] = set()
        if listing is not None:
            listed = _reassigning(answers[0])
            answers = answers[1:]
        return listed, self._log_dir_answers(ids, out, asked, answers, _held), isr

    def partition_isr(
        self, topics: Iterable[str], only: Mapping[str, Container[int]] | None = None
    ) -> PartitionIsr | KafkaOperationError:
        """``{topic: {partition: (leader, isr)} | error}`` from one Metadata request of ``topics``.

        Only what a poll reads (leaders for ListOffsets, the ISR for "In sync"): no per-partition
        metadata objects for the 1,000s of partitions of the named topics that are not moving.
        ``only`` ({topic: partition ids}) keeps just those. A failed request comes back as the
        error, not raised.
        """
        names = sorted(set(topics))
        if not names:
            return {}
        self._require_brokers("describing topics")
        return _isr_answer(names, self._kp.send_many([(_metadata_request(names), None)])[0], only)

    # -- where the ISR of a poll comes from ----------------------------------------------------
    # A Metadata request naming the topics is decoded by kafka-python in Python (~1.2 s for
    # 100,000 partitions here) on the I/O thread that also decodes the log dirs; librdkafka's
    # whole-cluster Metadata is decoded in C, on the caller's thread, while kafka-python reads the
    # log dirs (~0.3 s for the same 100,000). So when the named topics hold most of the cluster's
    # partitions, the whole cluster is cheaper to read than the named topics. The counts come from
    # earlier reads (``_partition_counts``: the partitions of every topic either read has seen, and
    # the cluster's total from the last whole read, moved by each named read's change to its
    # topics). Until the total is known, the whole cluster is read once the named topics are known
    # to hold WHOLE_PROBE_PARTITIONS or more (below that the named read is cheap whatever the
    # cluster's size); a huge cluster is then read whole once, not every cycle. Either way the
    # answer is the same ``PartitionIsr`` of the named topics.

    _partition_counts: tuple[dict[str, int], int | None] | None = None  # (per topic, cluster total)

    def _isr_from_whole_cluster(self, names: list[str]) -> bool:
        counts = self._partition_counts
        if self.conn.controller_mode or counts is None:
            return False  # nothing counted yet: the named read counts the named topics
        per_topic, total = counts
        named = sum(per_topic.get(n, 0) for n in names)  # a topic not seen yet: the named read counts it
        if total is None:
            return named >= WHOLE_PROBE_PARTITIONS
        return named >= WHOLE_ISR_SHARE * total

    def _whole_cluster_isr(
        self, names: list[str], only: Mapping[str, Container[int]] | None
    ) -> PartitionIsr | KafkaOperationError:
        """``partition_isr(names, only)`` from librdkafka's whole-cluster Metadata (see above): the
        same leaders and ISRs, a topic the answer does not list is UNKNOWN_TOPIC_OR_PARTITION. A
        failed read comes back as the error, not raised. Counts every topic's partitions."""
        was_enabled = gc.isenabled()
        gc.disable()  # librdkafka's answer (~3 objects per partition, no cycles) lives only here
        try:
            try:
                self._reachable()
                md = self._call(self._admin.list_topics, timeout=self._timeout, what="list topics")
            except KafkaOperationError as err:
                return err
            topics = md.topics
            per_topic = {name: len(t.partitions) for name, t in topics.items()}
            self._partition_counts = (per_topic, sum(per_topic.values()))
            out: PartitionIsr = {}
            for name in names:
                t = topics.get(name)
                if t is None:
                    out[name] = KafkaOperationError(
                        3, "UNKNOWN_TOPIC_OR_PARTITION", f"topic '{name}' does not exist"
                    )
                    continue
                err = from_code(t.error.code()) if t.error is not None else None
                if err is not None:
                    out[name] = err.with_message(f"{err.message} (topic '{name}')")
                    continue
                parts = t.partitions
                keep = parts if only is None else only.get(name, ())
                found = {}
                for i in keep:
                    p = parts.get(i)
                    if p is not None:
                        found[p.id] = (p.leader, tuple(p.isrs))
                out[name] = found
            del md, topics
            return out
        finally:
            if was_enabled:
                gc.enable()

    def _note_partition_counts(self, response: Any) -> None:
        """A named Metadata answer counts the named topics' partitions (the total, when known,
        moves by the change)."""
        if isinstance(response, KafkaOperationError):
            return
        per_topic, total = self._partition_counts or ({}, None)
        per_topic = dict(per_topic)
        for t in response.topics:
            n = 0 if t.error_code else len(t.partitions)
            if total is not None:
                total += n - per_topic.get(t.name, 0)
            per_topic[t.name] = n
        self._partition_counts = (per_topic, total)

    def _log_dir_requests(
        self,
        broker_ids: list[int] | None,
        partitions: list[TopicPartition] | Mapping[int, Iterable[TopicPartition]] | None,
    ) -> tuple[list[int], dict[int, Any], list[tuple[Any, int]]]:
        self._require_brokers("describing log dirs")
        from kafka.protocol.admin import DescribeLogDirsRequest

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
                asked.append((DescribeLogDirsRequest(topics=topics), broker))
        return ids, out, asked

    @staticmethod
    def _log_dir_answers(
        ids: list[int],
        out: dict[int, Any],
        asked: list[tuple[Any, int]],
        answers: list[Any],
        reduce: Any = None,
    ) -> dict[int, Any]:
        """Each broker's answer as a tuple of ``LogDirInfo`` (or ``reduce(results)``), or its error."""
        # one request per broker, in flight together (kafka-python's I/O thread multiplexes them)
        for (_, broker), response in zip(asked, answers, strict=True):
            if isinstance(response, KafkaOperationError):
                out[broker] = response
                continue
            err = from_code(getattr(response, "error_code", 0), getattr(response, "error_message", None))
            if err is not None:
                out[broker] = err
            elif reduce is not None:
                out[broker] = reduce(response.results)
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


# {topic: {partition: (leader, isr)}} or the topic's error (see ``partition_isr``)
PartitionIsr = dict[str, "dict[int, tuple[int, tuple[int, ...]]] | KafkaOperationError"]


def _metadata_request(names: list[str]) -> Any:
    from kafka.protocol.metadata import MetadataRequest

    T = MetadataRequest.MetadataRequestTopic
    return MetadataRequest(topics=[T(name=n) for n in names], allow_auto_topic_creation=False)


def _isr_answer(
    names: list[str], response: Any, only: Mapping[str, Container[int]] | None = None
) -> PartitionIsr | KafkaOperationError:
    """A Metadata answer -> ``{topic: {partition: (leader, isr)} | error}`` (a hot path: every
    partition of the moving partitions' topics, each poll cycle)."""
    if isinstance(response, KafkaOperationError):
        return response
    out: PartitionIsr = {}
    for t in response.topics:
        err = from_code(t.error_code)
        if err is not None:
            out[t.name] = err.with_message(f"{err.message} (topic '{t.name}')")
            continue
        keep = None if only is None else only.get(t.name, ())
        out[t.name] = {
            p.partition_index: (p.leader_id, tuple(p.isr_nodes))
            for p in t.partitions
            if keep is None or p.partition_index in keep
        }
    for name in names:
        if name not in out:
            out[name] = KafkaOperationError(3, "UNKNOWN_TOPIC_OR_PARTITION", f"topic '{name}' does not exist")
    return out


def _reassigning(response: Any) -> set[tuple[str, int]]:
    """A ListPartitionReassignments answer (or the error it came as, raised) -> its partitions."""
    if isinstance(response, KafkaOperationError):
        raise response
    check(response)
    return {(t.name, p.partition_index) for t in response.topics for p in t.partitions}


# {(topic, partition): (size, offset lag)}: the replicas one broker holds (``log_dirs_and_isr``)
HeldReplicas = dict[tuple[str, int], tuple[int, int]]


def _held(results: Any) -> HeldReplicas:
    """One broker's DescribeLogDirs results -> its replicas over every log dir, future replicas
    left out (a hot path: 10,000s of replicas per poll)."""
    found: HeldReplicas = {}
    for d in results:
        for t in d.topics:
            name = t.name
            for p in t.partitions:
                if not p.is_future_key:
                    found[(name, p.partition_index)] = (p.partition_size, p.offset_lag)
    return found


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
