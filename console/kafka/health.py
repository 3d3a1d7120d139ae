"""Whole-cluster reads walked straight out of the clients' answers, without per-partition objects.

The overview's health counts, and the telemetry snapshot's partition layout and replica sizes: at
100,000 partitions building a ``PartitionMetadata`` or a ``ReplicaLogInfo`` per partition only to
count or copy them costs more time and memory than the fetch.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from .base import GatewayBase
from .errors import KafkaOperationError, from_code
from .log_dirs_read import LogDirsBytesRequest, PartitionRecord, read_dirs
from .metadata_read import _Answer
from .topics import list_offsets_request, offset_timestamp
from .types import TopicMetadata, TopicSummary

#: DescribeLogDirs answers held at once (each is one broker's whole listing, as bytes, ~30 bytes
#: per replica): a big cluster's brokers are asked in flights of this many.
LOG_DIR_FLIGHT = 8

#: ListOffsets answers decoded at once (one per leader and spec, ~250 bytes per partition as
#: kafka-python objects).
OFFSETS_FLIGHT = 16


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

    def rows_by_leader(self) -> dict[int, array]:
        """``{leader: its rows}`` of the partitions that have a leader, rows in order (an int32
        each: at 1M partitions 4 MB, where lists of partition ids by topic were ~100 MB)."""
        out: dict[int, array] = {}
        for row, leader in enumerate(self.leader):
            if leader >= 0:
                rows = out.get(leader)
                if rows is None:
                    rows = out[leader] = array("i")
                rows.append(row)
        return out

    def partitions_of(self, rows: Iterable[int]) -> dict[str, list[int]]:
        """``{topic: [partition]}`` of ``rows`` (a request's grouping)."""
        topics, index, partition = self.topics, self.topic_index, self.partition
        out: dict[str, list[int]] = {}
        for row in rows:
            out.setdefault(topics[index[row]], []).append(partition[row])
        return out

    @classmethod
    def build(
        cls,
        brokers: Iterable[int],
        topics: Iterable[tuple[str, Any]],
        unpack: Callable[[Any], Iterable[tuple[int, int, Any, Any]]] | None = None,
    ) -> PartitionLayout:
        """From ``(name, partitions)`` pairs, a partition being ``(id, leader, replicas, isr)`` (as
        the whole-cluster answer packs them), or ``(name, packed)`` pairs and ``unpack(packed)``
        giving the partitions, called topic by topic as the rows are written (unpacked all at once
        before sorting, 1M partitions' tuples and lists were ~400 MB). Topics and partitions are
        sorted here."""
        names: list[str] = []
        topic_rows: dict[str, tuple[int, int]] = {}
        topic_index, partition, leader = array("i"), array("i"), array("i")
        replica_offsets, replicas, isr_offsets, isr = array("i", [0]), array("i"), array("i", [0]), array("i")
        for name, parts in sorted(topics, key=itemgetter(0)):
            i = len(names)
            names.append(name)
            parts = sorted(parts if unpack is None else unpack(parts))
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


class ReplicaSizes:
    """Each replica's size in bytes, one per slot of ``layout.replicas`` (-1: not answered), written
    as each broker's DescribeLogDirs answer is read (``put``): at 1M partitions 3M slots, 24 MB,
    where a map per (broker, topic) held ~1 GB until the snapshot's tables were built. A future
    replica (moving between a broker's dirs) counts for its dir only; a replica the layout does not
    give that broker (a partition created or moved since the Metadata) is left out."""

    __slots__ = ("layout", "values")

    def __init__(self, layout: PartitionLayout) -> None:
        self.layout = layout
        self.values = array("q", [-1]) * len(layout.replicas)

    def put(self, broker: int, topic: str, records: Iterable[PartitionRecord]) -> None:
        """``broker``'s records of ``topic`` (``(partition, size, offset lag, is future)``)."""
        layout = self.layout
        first, count = layout.topic_rows.get(topic, (0, 0))
        if not count:
            return
        partition, offsets, replicas, values = (
            layout.partition,
            layout.replica_offsets,
            layout.replicas,
            self.values,
        )
        for pid, size, _lag, future in records:
            if future:
                continue
            row = first + pid
            if not (0 <= pid < count and partition[row] == pid):
                row = layout.row_of(topic, pid)
                if row < 0:
                    continue
            for j in range(offsets[row], offsets[row + 1]):
                if replicas[j] == broker:
                    values[j] = size
                    break

    def leader_sizes(self) -> array:
        """Each row's size on its leader (-1: no leader, or the leader did not answer)."""
        layout = self.layout
        offsets, replicas, values = layout.replica_offsets, layout.replicas, self.values
        out = array("q", [-1]) * len(layout)
        for row, lead in enumerate(layout.leader):
            if lead >= 0:
                for j in range(offsets[row], offsets[row + 1]):
                    if replicas[j] == lead:
                        out[row] = values[j]
                        break
        return out

    def reduce(self, broker: int, answer: _Answer) -> tuple[LogDirUsage, ...]:
        """``broker``'s DescribeLogDirs answer (``LogDirsBytesRequest``'s bytes) -> its dirs, its
        replicas' sizes put here only once the whole answer was read (an unreadable answer, or the
        answer's error, raises KafkaOperationError and puts nothing)."""
        held: list[tuple[str, list[PartitionRecord]]] = []
        dirs = read_dirs(answer, lambda topic, records: held.append((topic, records)))
        for topic, records in held:
            self.put(broker, topic, records)
        return tuple(
            LogDirUsage(
                path,
                from_code(code),
                used,
                total if total >= 0 else None,
                usable if usable >= 0 else None,
            )
            for path, code, used, total, usable in dirs
        )


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
            ((name, t.packed) for name, t in whole.topics.items()),
            marshal.loads,
        )

    def log_dir_usage(
        self, layout: PartitionLayout
    ) -> tuple[dict[int, tuple[LogDirUsage, ...] | KafkaOperationError], ReplicaSizes]:
        """Every broker of ``layout``: its log dirs (or its error: not live, no answer, an
        unreadable answer), and every replica's size (DescribeLogDirs of all topics, read from
        the answer's bytes as it comes); brokers asked LOG_DIR_FLIGHT at a time."""
        sizes = ReplicaSizes(layout)
        # the same requests and not-live answers as describe_log_dirs (ReplicasMixin, same gateway)
        ids, out, asked = self._log_dir_requests(list(layout.brokers), None, LogDirsBytesRequest)
        for start in range(0, len(asked), LOG_DIR_FLIGHT):
            flight = asked[start : start + LOG_DIR_FLIGHT]
            answers = self._kp.send_many(flight)
            for i, (_, broker) in enumerate(flight):
                answer, answers[i] = answers[i], None  # each answer's bytes freed once read
                if isinstance(answer, KafkaOperationError):
                    out[broker] = answer
                    continue
                try:
                    out[broker] = sizes.reduce(broker, answer)
                except KafkaOperationError as exc:
                    out[broker] = exc
                del answer
        return {b: out[b] for b in ids}, sizes

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
        by_leader = layout.rows_by_leader()  # each leader's partitions grouped only while in flight
        keys = [(b, i) for i in range(len(timestamps)) for b in sorted(by_leader)]
        if not keys:
            return out
        self._kp.broker_ids(expect=sorted(by_leader))  # a leader restarted since the client looked
        row_of = layout.row_of
        for start in range(0, len(keys), OFFSETS_FLIGHT):
            flight = keys[start : start + OFFSETS_FLIGHT]
            answers = self._kp.send_many(
                [
                    (
                        list_offsets_request(
                            layout.partitions_of(by_leader[b]),
                            timestamps[i],
                            "READ_UNCOMMITTED",
                            self._timeout,
                        ),
                        b,
                    )
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
