"""Whole-cluster reads walked straight out of the clients' answers, without per-partition objects.

The overview's health counts, and the telemetry snapshot's partition layout and log dir sizes: at
100,000 partitions building a ``PartitionMetadata`` or a ``ReplicaLogInfo`` per partition only to
count or copy them costs more time and memory than the fetch.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .base import GatewayBase
from .errors import KafkaOperationError, from_code
from .topics import list_offsets_request, offset_timestamp
from .types import TopicMetadata, TopicSummary

#: DescribeLogDirs answers decoded at once (each is one broker's whole listing, ~200 bytes per
#: replica as kafka-python objects): a big cluster's brokers are asked in flights of this many.
LOG_DIR_FLIGHT = 8

#: ListOffsets answers decoded at once (one per leader and spec, ~250 bytes per partition as
#: kafka-python objects).
OFFSETS_FLIGHT = 16

#: Partition ids at or above this go to ``BrokerLogDirs.sparse`` (Kafka numbers partitions 0..n-1;
#: this only keeps a bogus answer from growing an array without bound).
_DENSE_IDS = 1 << 20


@dataclass(frozen=True, eq=False)
class PartitionLayout:
    """Every partition of one Metadata answer as flat columns, row by row: topics sorted by name,
    each topic's partitions by id (the order of ``list_topics_metadata().topics``).

    ``topic_rows[name] = (first row, partition count)``; ``topic_index[row]`` indexes ``topics``;
    a row's replicas are ``replicas[replica_offsets[row]:replica_offsets[row + 1]]``, its ISR
    likewise. The arrays are ``array('i')``: 4 bytes a value instead of an int object each.
    """

    brokers: tuple[int, ...]  # the live brokers of the answer, by id
    topics: tuple[str, ...]
    topic_rows: dict[str, tuple[int, int]]
    topic_index: array
    partition: array
    leader: array
    replica_offsets: array
    replicas: array
    isr_offsets: array
    isr: array

    def __len__(self) -> int:
        return len(self.partition)

    def row_of(self, topic: str, partition: int) -> int:
        """The row of ``topic``-``partition``, or -1."""
        first, count = self.topic_rows.get(topic, (0, 0))
        if 0 <= partition < count and self.partition[first + partition] == partition:
            return first + partition  # the usual case: ids 0..n-1
        for row in range(first, first + count):
            if self.partition[row] == partition:
                return row
        return -1

    def by_leader(self) -> dict[int, dict[str, list[int]]]:
        """``{leader: {topic: [partition]}}`` of the partitions that have a leader (ListOffsets' grouping)."""
        out: dict[int, dict[str, list[int]]] = {}
        topics, index, partition = self.topics, self.topic_index, self.partition
        for row, leader in enumerate(self.leader):
            if leader >= 0:
                out.setdefault(leader, {}).setdefault(topics[index[row]], []).append(partition[row])
        return out

    @classmethod
    def build(
        cls, brokers: Iterable[int], topics: Iterable[tuple[str, Iterable[tuple[int, int, Any, Any]]]]
    ) -> PartitionLayout:
        """From ``(name, partitions)`` pairs, a partition being ``(id, leader, replicas, isr)`` (as
        the whole-cluster answer packs them). Topics and partitions are sorted here."""
        names: list[str] = []
        topic_rows: dict[str, tuple[int, int]] = {}
        topic_index, partition, leader = array("i"), array("i"), array("i")
        replica_offsets, replicas, isr_offsets, isr = array("i", [0]), array("i"), array("i", [0]), array("i")
        for name, parts in sorted(topics, key=lambda pair: pair[0]):
            i = len(names)
            names.append(name)
            parts = sorted(parts)
            topic_rows[name] = (len(partition), len(parts))
            for pid, lead, reps, in_sync in parts:
                topic_index.append(i)
                partition.append(pid)
                leader.append(lead)
                replicas.extend(reps)
                replica_offsets.append(len(replicas))
                isr.extend(in_sync)
                isr_offsets.append(len(isr))
        return cls(
            tuple(sorted(brokers)),
            tuple(names),
            topic_rows,
            topic_index,
            partition,
            leader,
            replica_offsets,
            replicas,
            isr_offsets,
            isr,
        )

    @classmethod
    def from_metadata(cls, brokers: Iterable[int], topics: Iterable[TopicMetadata]) -> PartitionLayout:
        """From the console's ``TopicMetadata`` (the same layout as the gateway's walk)."""
        return cls.build(
            brokers, ((t.name, [(p.id, p.leader, p.replicas, p.isr) for p in t.partitions]) for t in topics)
        )


@dataclass(frozen=True)
class LogDirUsage:
    """One log dir of a broker: the bytes of every replica in it (moving ones included)."""

    path: str
    error: KafkaOperationError | None
    used_bytes: int
    total_bytes: int | None = None
    usable_bytes: int | None = None


@dataclass(frozen=True, eq=False)
class BrokerLogDirs:
    """One broker's DescribeLogDirs answer reduced: its dirs, and the size of each replica it holds
    (a future replica, moving between dirs, counts for its dir only): ``sizes[topic][partition]``,
    -1 for a partition it does not hold."""

    dirs: tuple[LogDirUsage, ...]
    sizes: dict[str, array] = field(default_factory=dict)
    sparse: dict[tuple[str, int], int] = field(default_factory=dict)

    def size(self, topic: str, partition: int) -> int:
        sizes = self.sizes.get(topic)
        if sizes is not None and 0 <= partition < len(sizes):
            return sizes[partition]
        return self.sparse.get((topic, partition), -1)

    @classmethod
    def reduce(cls, results: Iterable[Any]) -> BrokerLogDirs:
        """From DescribeLogDirs' ``results`` (one per dir: ``log_dir``, ``error_code``, ``topics``
        of ``partitions`` with ``partition_index``, ``partition_size``, ``is_future_key``)."""
        sizes: dict[str, array] = {}
        sparse: dict[tuple[str, int], int] = {}
        dirs = []
        for d in results:
            used = 0
            for t in d.topics:
                name = t.name
                mine = sizes.get(name)
                for p in t.partitions:
                    size = p.partition_size
                    used += size
                    if p.is_future_key:
                        continue
                    i = p.partition_index
                    if not 0 <= i < _DENSE_IDS:
                        sparse[(name, i)] = size
                        continue
                    if mine is None:
                        mine = sizes[name] = array("q")
                    if i >= len(mine):
                        mine.extend([-1] * (i + 1 - len(mine)))
                    mine[i] = size
            total = getattr(d, "total_bytes", -1)
            usable = getattr(d, "usable_bytes", -1)
            dirs.append(
                LogDirUsage(
                    d.log_dir,
                    from_code(d.error_code),
                    used,
                    total if total is not None and total >= 0 else None,
                    usable if usable is not None and usable >= 0 else None,
                )
            )
        return cls(tuple(dirs), sizes, sparse)


class HealthMixin(GatewayBase):
    """Counts and layouts that need no per-partition objects."""

    def topic_health(self) -> TopicSummary:
        """Topic and partition counts, under-replicated and offline partitions, internal topics.

        The same figures as ``summarize(list_topics_metadata().topics)`` (a partition is offline
        when it has no leader, under-replicated when its ISR is shorter than its replica list),
        counted by the decoder while it read Kafka's answer (``metadata_read.py``): no partition is read
        back.
        """
        whole = self._whole_metadata()
        partitions = under = offline = internal = 0
        for t in whole.topics.values():
            internal += t.internal
            partitions += t.partitions
            under += t.under_replicated
            offline += t.offline
        return TopicSummary(len(whole.topics), partitions, under, offline, internal)

    topic_summary = topic_health

    def partition_layout(self) -> PartitionLayout:
        """Every partition's leader, replicas and ISR from one Metadata fetch, as flat columns
        (the telemetry snapshot's rows; the same partitions, order and values as
        ``list_topics_metadata()``), read from the decoder's packed partitions."""
        whole = self._whole_metadata()
        return PartitionLayout.build(
            (b.id for b in whole.brokers),
            ((name, marshal.loads(t.packed)) for name, t in whole.topics.items()),
        )

    def log_dir_sizes(self, broker_ids: Iterable[int]) -> dict[int, BrokerLogDirs | KafkaOperationError]:
        """Every replica's size on each broker (DescribeLogDirs of all topics), each answer reduced
        to ``BrokerLogDirs`` as it is read; brokers asked LOG_DIR_FLIGHT at a time, so the decoded
        answers of a 30-broker cluster are never all held at once. A broker that is not live or
        does not answer comes back as its error."""
        # the same requests and not-live answers as describe_log_dirs (ReplicasMixin, same gateway)
        ids, out, asked = self._log_dir_requests(list(broker_ids), None)
        for start in range(0, len(asked), LOG_DIR_FLIGHT):
            flight = asked[start : start + LOG_DIR_FLIGHT]
            answers = self._kp.send_many(flight)
            for i, (_, broker) in enumerate(flight):
                response, answers[i] = answers[i], None  # each decoded answer freed once reduced
                if isinstance(response, KafkaOperationError):
                    out[broker] = response
                    continue
                err = from_code(getattr(response, "error_code", 0), getattr(response, "error_message", None))
                out[broker] = err if err is not None else BrokerLogDirs.reduce(response.results)
                del response
        return {b: out[b] for b in ids}

    def offsets_by_row(
        self, layout: PartitionLayout, specs: Iterable[str | int] = ("latest",)
    ) -> list[array]:
        """Every partition's offset for each spec, as one ``array('q')`` per spec aligned with
        ``layout``'s rows (-1 where there is no leader, no answer or a partition error): one
        ListOffsets per leader and spec (read uncommitted), OFFSETS_FLIGHT in flight at a time,
        each answer written into the arrays as it is read (``offsets_by_leader`` answers dicts
        keyed by ``(topic, partition)``: at 100,000 partitions those and the answers held together
        are ~90 MB)."""
        self._require_brokers("listing offsets")
        timestamps = [offset_timestamp(spec, "READ_UNCOMMITTED") for spec in specs]
        out = [array("q", [-1]) * len(layout) for _ in timestamps]
        by_leader = layout.by_leader()
        keys = [(b, i) for i in range(len(timestamps)) for b in sorted(by_leader)]
        if not keys:
            return out
        self._kp.broker_ids(expect=sorted(by_leader))  # a leader restarted since the client looked
        row_of = layout.row_of
        for start in range(0, len(keys), OFFSETS_FLIGHT):
            flight = keys[start : start + OFFSETS_FLIGHT]
            answers = self._kp.send_many(
                [
                    (list_offsets_request(by_leader[b], timestamps[i], "READ_UNCOMMITTED", self._timeout), b)
                    for b, i in flight
                ]
            )
            for n, (_, i) in enumerate(flight):
                response, answers[n] = answers[n], None  # each decoded answer freed once read
                if isinstance(response, KafkaOperationError):
                    continue
                target = out[i]
                for t in response.topics:
                    name = t.name
                    for p in t.partitions:
                        if not p.error_code:
                            row = row_of(name, p.partition_index)
                            if row >= 0:
                                target[row] = p.offset
                del response
        return out
