"""A reassignment poll's reads in one flight: the reassignments in progress, each involved
broker's log dirs, and the ISR of the moving partitions (``PollReadsMixin.poll_reads``).

The ISR comes from a Metadata request of the moving topics (kafka-python, with the log dirs) or
from librdkafka's whole-cluster Metadata (read on the caller's thread meanwhile), whichever costs
less for the share of the cluster's partitions that is moving; the answer is the same either way.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from typing import Any

from console import collector

from .errors import KafkaOperationError, no_such_topic, topic_error
from .kp import check
from .replicas import ReplicasMixin
from .types import TopicPartition

#: A poll's ISR is read from the whole cluster's Metadata when its topics hold at least this share
#: of the cluster's partitions (see ``PollReadsMixin._isr_from_whole_cluster``).
WHOLE_ISR_SHARE = 0.5
#: Before the cluster's partitions have been counted, a poll whose topics hold at least this many
#: partitions reads the whole cluster once (and so counts it).
WHOLE_PROBE_PARTITIONS = 20_000


class PollReadsMixin(ReplicasMixin):
    """The reads of a reassignment poll cycle (see the module docstring)."""

    def reassigning(self, partitions: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        """Which of ``partitions`` Kafka lists as being reassigned: the keys of
        ``list_partition_reassignments(partitions)`` as ``(topic, partition)`` tuples, without a
        ``PartitionReassignment`` per partition (a poll asks about 10,000s every second)."""
        request = self._list_reassignments_request(list(partitions))
        if request is None:
            return set()
        return _reassigning(self._kp.send_to_controller(request))

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
        # librdkafka's answer (~3 objects per partition, no cycles) lives only here
        with collector.paused():
            try:
                self._reachable()
                md = self._list_topics()
            except KafkaOperationError as err:
                return err
            topics = md.topics
            per_topic = {name: len(t.partitions) for name, t in topics.items()}
            self._partition_counts = (per_topic, sum(per_topic.values()))
            out: PartitionIsr = {}
            for name in names:
                t = topics.get(name)
                if t is None:
                    out[name] = no_such_topic(name)
                    continue
                err = topic_error(t.error.code(), name) if t.error is not None else None
                if err is not None:
                    out[name] = err
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
        err = topic_error(t.error_code, t.name)
        if err is not None:
            out[t.name] = err
            continue
        keep = None if only is None else only.get(t.name, ())
        out[t.name] = {
            p.partition_index: (p.leader_id, tuple(p.isr_nodes))
            for p in t.partitions
            if keep is None or p.partition_index in keep
        }
    for name in names:
        if name not in out:
            out[name] = no_such_topic(name)
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
