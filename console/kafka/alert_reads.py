"""The alert evaluator's own live reads: the partitions' health from one Metadata (``partition_health``)
and the timestamp of the record at a position (``record_times``).

``partition_health`` keeps the whole cluster's Metadata as the C decoder left it (per topic: its
partitions packed, and its partition, under-replicated and offline counts): the counts a round needs
are those sums, and a topic's partitions are unpacked only where its counts cannot answer - under
min ISR on a topic with under-replicated or offline partitions or a replication factor below its
minimum, or the leaders of the partitions consumer groups read. Building every partition's row (the
snapshot's ``partition_layout``) costs ~15x the decoding at 100,000 partitions, every minute.

A consumer group's lag by time is how old its position is: now minus the timestamp of the record at
the committed offset (the oldest record the group has not consumed yet). Kafka has no request that
answers it, so the record is read: one bounded Fetch per leader carrying every lagging partition of
that leader, ``PARTITION_BYTES`` a partition, as a consumer would (replica -1, read committed not
required). A partition whose first batch is larger than its share comes back empty (Kafka returns
an oversized batch only for the first partition of a request, KIP-74): it is asked again alone, once.
"""

from __future__ import annotations

import marshal
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka.record.memory_records import MemoryRecords

from .errors import KafkaOperationError, from_code
from .metadata_read import WholeMetadata, WholeTopic
from .types import TopicPartition

PARTITION_BYTES = 64 * 1024  # a partition's share of a Fetch: its first batch, usually
TOTAL_BYTES = 8 * 1024 * 1024  # the whole answer's bound (Kafka's fetch.max.bytes is 50 MB)


def fetch_request(positions: Mapping[str, Iterable[tuple[int, int]]], max_bytes: int) -> Any:
    """A consumer's Fetch (v4-12, topics by name) of ``{topic: [(partition, offset)]}`` answering at
    once (no wait), ``max_bytes`` a partition."""
    from kafka.protocol.consumer import FetchRequest

    topic_cls = FetchRequest.FetchTopic
    part_cls = topic_cls.FetchPartition
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=TOTAL_BYTES,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            topic_cls(
                topic=name,
                partitions=[
                    part_cls(
                        partition=p, fetch_offset=offset, log_start_offset=-1, partition_max_bytes=max_bytes
                    )
                    for p, offset in parts
                ],
            )
            for name, parts in positions.items()
        ],
        forgotten_topics_data=[],
        rack_id="",
        min_version=4,
        max_version=12,  # v13 names topics by id
    )


def first_timestamp(records: bytes | None, offset: int) -> int | None:
    """The timestamp (ms) of the first record at or after ``offset`` in a Fetch answer's bytes; None
    when they hold no whole record there."""
    if not records:
        return None
    batches = MemoryRecords(bytes(records))
    while True:
        try:
            batch = batches.next_batch()
        except Exception:  # noqa: BLE001 - a truncated last batch: what came before is all there is
            return None
        if batch is None:
            return None
        for record in batch:
            if record.offset >= offset and record.timestamp is not None and record.timestamp >= 0:
                return int(record.timestamp)


@dataclass(frozen=True)
class PartitionHealth:
    """The partitions' health from one whole-cluster Metadata (see the module docstring)."""

    brokers: tuple[int, ...]  # the live brokers the answer names
    topics: tuple[str, ...]
    partitions: int
    under_replicated: int  # ISR shorter than the replicas
    offline: int  # no leader
    whole: WholeMetadata = field(repr=False, compare=False)

    def under_min_isr(self, min_isr: Mapping[str, int], default: int = 1) -> int:
        """Partitions whose ISR is shorter than their topic's ``min_isr`` (``default`` for a topic
        without one), counted per partition as the topic list and the fleet summary count them. A
        topic with every partition fully in sync has none when its minimum is 1 (a partition has a
        replica) or when every partition has at least the minimum of replicas (``_uniform``: the
        topic's "replication factor" is only its lowest partition id's); others are unpacked."""
        count = 0
        for name, t in self.whole.topics.items():
            if name is None or t.error_code:
                continue
            wanted = min_isr.get(name, default)
            if not t.under_replicated and (wanted <= 1 or (t.replication_factor >= wanted and _uniform(t))):
                continue  # every ISR as long as its replicas: at least one, and here at least ``wanted``
            count += sum(1 for _, _, _, isr in marshal.loads(t.packed) if len(isr) < wanted)
        return count

    def leaders(self, partitions: Iterable[tuple[str, int]]) -> dict[TopicPartition, int]:
        """The leader (-1: none) of each of ``partitions`` that exists; only their topics are unpacked."""
        wanted: dict[str, set[int]] = defaultdict(set)
        for topic, partition in partitions:
            wanted[topic].add(partition)
        out = {}
        for topic, ids in wanted.items():
            t = self.whole.topics.get(topic)
            if t is None or t.error_code:
                continue
            for pid, leader, _, _ in marshal.loads(t.packed):
                if pid in ids:
                    out[TopicPartition(topic, pid)] = leader
        return out


def _uniform(t: WholeTopic) -> bool:
    """True when every partition of ``t`` has exactly ``t.replication_factor`` replicas and as many
    in its ISR, read off the packed bytes' list counts without unpacking them. The C decoder's
    layout (marshal): 5 bytes of list header, then per partition a 4-tuple header (5), id and leader
    (5 each), the replicas' list (5 + 5 a replica) and the ISR's (5 + 5 a member). If partition i
    starts at ``5 + i * stride`` and both its counts are the factor, it is ``stride`` long and the
    next starts at the next multiple: so checking every partition's two counts at those offsets
    proves all of them (a topic that fails is unpacked and counted partition by partition)."""
    rf, n, packed = t.replication_factor, t.partitions, t.packed
    stride = 25 + 10 * rf
    if not 0 <= rf < 1 << 31 or len(packed) != 5 + n * stride:
        return False
    count = rf.to_bytes(4, "little")
    for first in (5 + 16, 5 + 21 + 5 * rf):  # the replicas' count, the ISR's count
        for k in range(4):
            if packed[first + k :: stride] != count[k : k + 1] * n:
                return False
    return True


class AlertReadsMixin:
    """The gateway's reads for the alert evaluator (see the module docstring)."""

    def partition_health(self) -> PartitionHealth:
        """Every topic's partition counts from one Metadata (decoded in C, nothing unpacked)."""
        whole = self._whole_metadata()
        topics = {n: t for n, t in whole.topics.items() if n is not None and not t.error_code}
        return PartitionHealth(
            brokers=tuple(b.id for b in whole.brokers),
            topics=tuple(sorted(topics)),
            partitions=sum(t.partitions for t in topics.values()),
            under_replicated=sum(t.under_replicated for t in topics.values()),
            offline=sum(t.offline for t in topics.values()),
            whole=whole,
        )

    def record_times(
        self, positions: Mapping[TopicPartition, int], leaders: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, int | KafkaOperationError | None]:
        """For each partition, the timestamp (ms) of the record at its position (or the first one
        after it: compacted away, or deleted by retention); None when there is no record there yet
        (the position is the log end); a partition without a known leader, or whose leader failed,
        gets its error. One Fetch per leader, in flight together."""
        self._require_brokers("reading records")
        out: dict[TopicPartition, int | KafkaOperationError | None] = {}
        by_leader: dict[int, dict[str, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
        for tp, offset in positions.items():
            leader = leaders.get(tp, -1)
            if leader is None or leader < 0:
                out[tp] = KafkaOperationError(
                    5, "LEADER_NOT_AVAILABLE", f"{tp.topic}-{tp.partition} has no leader"
                )
                continue
            by_leader[leader][tp.topic].append((tp.partition, offset))
        empty = self._fetch_each(list(by_leader.items()), positions, out, PARTITION_BYTES)
        if empty:  # a first batch larger than its share: alone, Kafka returns it whole
            alone = [(leader, {tp.topic: [(tp.partition, positions[tp])]}) for leader, tp in empty]
            self._fetch_each(alone, positions, out)
        return out

    def _fetch_each(
        self, asks: list[tuple[int, Mapping]], positions, out, max_bytes: int = TOTAL_BYTES
    ) -> list[tuple[int, TopicPartition]]:
        if not asks:
            return []
        self._kp.broker_ids(expect=sorted({leader for leader, _ in asks}))
        answers = self._kp.send_many([(fetch_request(parts, max_bytes), leader) for leader, parts in asks])
        retry = []
        for (leader, parts), answer in zip(asks, answers, strict=True):
            if isinstance(answer, KafkaOperationError):
                out.update((TopicPartition(t, p), answer) for t, ps in parts.items() for p, _ in ps)
                continue
            for topic in answer.responses:
                for p in topic.partitions:
                    tp = TopicPartition(topic.topic, p.partition_index)
                    if tp not in positions:
                        continue
                    err = from_code(p.error_code)
                    if err is not None:
                        out[tp] = err
                        continue
                    found = first_timestamp(p.records, positions[tp])
                    out[tp] = found
                    if found is None and positions[tp] < p.high_watermark and max_bytes < TOTAL_BYTES:
                        retry.append((leader, tp))
        return retry
