"""Reading and writing a topic's records: the message browser's and producer's Kafka calls.

Everything goes over the kafka-python request client (``self._kp``), so every connection the
console supports (TLS, SASL, OAUTHBEARER, GSSAPI) reads and writes records unchanged. A topic's
leaders come from one Metadata of that topic only (never the whole cluster's). Nothing joins a
group or commits an offset: reads are a consumer's Fetch with ``assign`` + ``seek`` semantics, at
READ_UNCOMMITTED like ``kafka-console-consumer``'s default.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka.partitioner import murmur2
from kafka.protocol.producer import ProduceRequest
from kafka.record.memory_records import MemoryRecordsBuilder

from .base import GatewayBase
from .errors import KafkaOperationError, from_code, no_such_topic
from .record_read import RawRecord, decode_records, fetch_request, partition_limits

__all__ = ["MessagesMixin", "PartitionRead", "ProducedRecord", "key_partition"]

#: Errors after which a partition's leader is looked up again and the call retried (nothing was
#: written): the leader moved, or a new topic's leader does not know it yet (metadata propagates).
#: UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER, FENCED/UNKNOWN_LEADER_EPOCH.
LEADER_MOVED = frozenset({3, 5, 6, 74, 75})
RETRY_PAUSES_S = (0.1, 0.3, 0.6)  # before each new look at the leaders
#: A read right after ``partition_bounds`` of the same topic (a browse: the bounds, then the
#: records) takes the leaders that call looked up, once, if it is this recent: one Metadata, not two.
#: A leader moved meanwhile only costs a retry (NOT_LEADER is in LEADER_MOVED, which looks again).
LEADERS_REUSE_S = 1.0
LEADERS_KEPT = 256  # topics whose bounds' leaders wait for their read, per gateway
FIRST_RECORD_BYTES = 1024.0  # the record size assumed until one is read


@dataclass(frozen=True)
class PartitionRead:
    """One partition's part of a read."""

    partition: int
    records: tuple[RawRecord, ...]  # in offset order, control records (transaction markers) left out
    next_offset: int  # where a following read of this partition continues
    log_start: int
    high_watermark: int
    error: KafkaOperationError | None = None


@dataclass(frozen=True)
class ProducedRecord:
    """Where a produced record was written."""

    partition: int
    offset: int
    timestamp: int  # ms: the record's CreateTime, or the broker's LogAppendTime when the topic uses it


@dataclass
class _Progress:
    position: int
    records: list[RawRecord] = field(default_factory=list)
    log_start: int = -1
    high_watermark: int = -1
    error: KafkaOperationError | None = None
    done: bool = False
    alone: bool = False  # its first batch is larger than its share: asked alone (KIP-74)


def key_partition(key: bytes, partitions: int) -> int:
    """The partition the Java client's default partitioner picks for a keyed record
    (``BuiltInPartitioner.partitionForKey``: the positive murmur2 of the key modulo the count)."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class MessagesMixin(GatewayBase):
    """partition_bounds, log_starts, offsets_for_time, read_records, produce_record."""

    def partition_bounds(self, topic: str) -> dict[int, tuple[int, int] | KafkaOperationError]:
        """Every partition of ``topic``: (log start offset, high watermark). Raises
        UNKNOWN_TOPIC_OR_PARTITION when the topic does not exist."""
        self._require_brokers("reading offsets")
        leaders = self._topic_leaders(topic)
        self._hand_leaders(topic, leaders)
        return self._bounds(topic, leaders, list(leaders))

    def log_starts(self, topic: str) -> dict[int, int | KafkaOperationError]:
        """Every partition of ``topic``: its log start offset alone (one ListOffsets, not two: a read
        from the oldest message takes its end from its Fetch answers' high watermarks). Raises
        UNKNOWN_TOPIC_OR_PARTITION when the topic does not exist."""
        self._require_brokers("reading offsets")
        leaders = self._topic_leaders(topic)
        self._hand_leaders(topic, leaders)
        out: dict[int, int | KafkaOperationError] = {}
        by_leader = self._group(topic, leaders, list(leaders), out)
        if by_leader:
            [(starts, errors)] = self.offsets_by_leader(by_leader, ("earliest",))
            for p in leaders:
                if p not in out:
                    err = errors.get((topic, p))
                    out[p] = err if err is not None else starts[(topic, p)]
        return {p: out[p] for p in sorted(leaders)}

    def offsets_for_time(
        self, topic: str, partitions: Iterable[int], timestamp_ms: int
    ) -> dict[int, int | None | KafkaOperationError]:
        """Per partition, the first offset whose record's timestamp is >= ``timestamp_ms`` (Kafka's
        ListOffsets by time); None when no record is that recent."""
        self._require_brokers("reading offsets")
        if isinstance(timestamp_ms, bool) or not isinstance(timestamp_ms, int) or timestamp_ms < 0:
            raise KafkaOperationError(
                42, "INVALID_REQUEST", f"a time must be ms since the epoch, not {timestamp_ms!r}"
            )
        leaders = self._topic_leaders(topic)
        wanted = list(dict.fromkeys(partitions))
        out: dict[int, int | None | KafkaOperationError] = {}
        by_leader = self._group(topic, leaders, wanted, out)
        [(offsets, errors)] = self.offsets_by_leader(by_leader, (timestamp_ms,))
        for (_, p), err in errors.items():
            out[p] = err
        for (_, p), offset in offsets.items():
            out[p] = offset if offset >= 0 else None
        return {p: out[p] for p in wanted}

    def read_records(
        self,
        topic: str,
        positions: Mapping[int, int],
        *,
        max_records: int,
        max_bytes: int,
        deadline_s: float,
    ) -> dict[int, PartitionRead]:
        """A consumer's Fetch from each ``{partition: offset}`` to the partitions' leaders in parallel,
        repeated until ``max_records`` per partition, ``max_bytes`` read in total, the deadline
        (``time.monotonic()`` seconds; one Fetch round is made whatever it says) or the high watermark.
        An offset below the log start (or past the high watermark) is that partition's
        OFFSET_OUT_OF_RANGE, with its bounds filled in."""
        self._require_brokers("reading records")
        handed = self.__dict__.get("_leaders_handed", {}).pop(topic, None)
        fresh = handed is not None and time.monotonic() - handed[0] < LEADERS_REUSE_S
        leaders = (
            handed[1] if fresh and all(p in handed[1] for p in positions) else self._topic_leaders(topic)
        )
        progress = {p: _Progress(int(offset)) for p, offset in positions.items()}
        for p, prog in progress.items():
            if p not in leaders:
                prog.error, prog.done = _no_partition(topic, p), True
        bytes_left, read_bytes, read_count, pauses = max(1, max_bytes), 0, 0, list(RETRY_PAUSES_S)
        rounds = 0
        while not rounds or (time.monotonic() < deadline_s and bytes_left > 0):  # one round at least
            rounds += 1
            active = {p: prog for p, prog in progress.items() if not prog.done}
            if not active:
                break
            avg = read_bytes / read_count if read_count else FIRST_RECORD_BYTES
            limits = partition_limits(
                {p: max_records - len(prog.records) for p, prog in active.items()}, avg, bytes_left
            )
            asks = self._fetch_asks(topic, leaders, active, limits, bytes_left)
            answers = self._kp.send_many([(req, leader) for leader, req, _, _ in asks])
            moved = False
            for (_, _, asked, budget), answer in zip(asks, answers, strict=True):
                if isinstance(answer, KafkaOperationError):
                    for p in asked:
                        progress[p].error, progress[p].done = answer, True
                    continue
                parts = [pd for t in answer.responses for pd in t.partitions if pd.partition_index in asked]
                answered = sum(len(pd.records or b"") for pd in parts)
                for pd in parts:
                    prog = progress[pd.partition_index]
                    spent = answered + limits[pd.partition_index] > budget  # no room was left for it
                    got = _take(prog, pd, max_records, spent)
                    bytes_left -= len(pd.records or b"")
                    if got:
                        read_bytes, read_count = read_bytes + len(pd.records or b""), read_count + got
                    moved |= prog.error is not None and prog.error.code in LEADER_MOVED
            if moved and pauses and time.monotonic() + pauses[0] < deadline_s:  # look again, ask again
                time.sleep(pauses.pop(0))
                leaders = self._topic_leaders(topic)
                for p, prog in progress.items():
                    if p in leaders and prog.error is not None and prog.error.code in LEADER_MOVED:
                        prog.error, prog.done = None, False
        out_of_range = [p for p, prog in progress.items() if prog.error is not None and prog.error.code == 1]
        bounds = self._bounds(topic, leaders, out_of_range) if out_of_range else {}
        for p in out_of_range:
            if isinstance(bounds.get(p), tuple):
                progress[p].log_start, progress[p].high_watermark = bounds[p]
                progress[p].error = _out_of_range(topic, p, progress[p].position, bounds[p])
        return {
            p: PartitionRead(
                p, tuple(prog.records), prog.position, prog.log_start, prog.high_watermark, prog.error
            )
            for p, prog in progress.items()
        }

    def produce_record(
        self,
        topic: str,
        *,
        partition: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[tuple[str, bytes | None]] = (),
        timestamp_ms: int | None = None,
    ) -> ProducedRecord:
        """Write one record with acks=all to its partition's leader. ``partition`` None: the Java
        client's default partitioner (murmur2 of the key; no key: any partition with a leader)."""
        self._require_brokers("producing a record")
        leaders = self._topic_leaders(topic)
        if partition is None:
            partition = self._choose_partition(topic, leaders, key)
        elif partition not in leaders:
            raise _no_partition(topic, partition)
        timestamp = int(time.time() * 1000) if timestamp_ms is None else int(timestamp_ms)
        records = _one_record_batch(timestamp, key, value, headers)
        pauses = list(RETRY_PAUSES_S)
        while True:
            leader = leaders.get(partition, -1)
            if leader < 0:
                raise _no_leader(topic, partition)
            answer = self._kp.send(_produce_request(topic, partition, records, self._timeout), leader)
            pd = answer.responses[0].partition_responses[0]
            err = from_code(pd.error_code, getattr(pd, "error_message", None))
            if err is None:
                append_time = getattr(pd, "log_append_time_ms", -1)
                return ProducedRecord(
                    partition, pd.base_offset, append_time if append_time >= 0 else timestamp
                )
            if not (pauses and err.code in LEADER_MOVED):  # only what was not written is sent again
                raise err.with_message(f"{err.message} ({topic}-{partition})")
            time.sleep(pauses.pop(0))
            leaders = self._topic_leaders(topic)

    # -- helpers ----------------------------------------------------------------------------

    def _hand_leaders(self, topic: str, leaders: dict[int, int]) -> None:
        """Keep a topic's leaders for the read that follows (LEADERS_REUSE_S)."""
        handed = self.__dict__.setdefault("_leaders_handed", {})
        if len(handed) >= LEADERS_KEPT:
            handed.clear()
        handed[topic] = (time.monotonic(), leaders)

    def _topic_leaders(self, topic: str) -> dict[int, int]:
        """``{partition: leader (-1: none)}`` of one topic, from a Metadata of that topic only."""
        meta = self.describe_topics([topic])[topic]
        if isinstance(meta, KafkaOperationError):
            raise meta if meta.name != "UNKNOWN_TOPIC_OR_PARTITION" else no_such_topic(topic)
        return {p.id: p.leader for p in meta.partitions}

    def _group(
        self, topic: str, leaders: Mapping[int, int], wanted: Iterable[int], out: dict
    ) -> dict[int, dict[str, list[int]]]:
        """``{leader: {topic: [partition]}}`` of ``wanted``; a partition without one gets its error."""
        by_leader: dict[int, dict[str, list[int]]] = defaultdict(dict)
        for p in wanted:
            leader = leaders.get(p)
            if leader is None:
                out[p] = _no_partition(topic, p)
            elif leader < 0:
                out[p] = _no_leader(topic, p)
            else:
                by_leader[leader].setdefault(topic, []).append(p)
        return by_leader

    def _bounds(
        self, topic: str, leaders: Mapping[int, int], wanted: Sequence[int]
    ) -> dict[int, tuple[int, int] | KafkaOperationError]:
        out: dict[int, tuple[int, int] | KafkaOperationError] = {}
        by_leader = self._group(topic, leaders, wanted, out)
        if by_leader:
            (starts, start_errors), (ends, end_errors) = self.offsets_by_leader(
                by_leader, ("earliest", "latest")
            )
            for p in wanted:
                if p in out:
                    continue
                err = start_errors.get((topic, p)) or end_errors.get((topic, p))
                out[p] = err if err is not None else (starts[(topic, p)], ends[(topic, p)])
        return {p: out[p] for p in sorted(wanted)}

    def _fetch_asks(
        self,
        topic: str,
        leaders: Mapping[int, int],
        active: Mapping[int, _Progress],
        limits: Mapping[int, int],
        bytes_left: int,
    ) -> list[tuple[int, object, set[int], int]]:
        """The next round's Fetches: one per leader with its partitions, and one per partition whose
        first batch is larger than its share (alone, Kafka returns it whole: KIP-74)."""
        groups: dict[int, list[int]] = defaultdict(list)
        alone = []
        for p, prog in active.items():
            leader = leaders.get(p, -1)
            if leader < 0:
                prog.error, prog.done = _no_leader(topic, p), True
            elif prog.alone:
                alone.append((leader, [p]))
            else:
                groups[leader].append(p)
        planned = alone + list(groups.items())
        share = max(1, bytes_left // max(1, len(planned)))  # the round reads at most what is left
        asks = []
        for leader, ps in planned:
            budget = min(share, sum(limits[p] for p in ps))
            parts = [(p, active[p].position, limits[p]) for p in ps]
            asks.append((leader, fetch_request(topic, parts, budget), set(ps), budget))
        if asks:
            self._kp.broker_ids(expect=sorted({leader for leader, _, _, _ in asks}))
        return asks

    def _choose_partition(self, topic: str, leaders: Mapping[int, int], key: bytes | None) -> int:
        if key is not None:
            return key_partition(key, len(leaders))
        led = sorted(p for p, leader in leaders.items() if leader >= 0)
        return random.choice(led or sorted(leaders))


def _take(prog: _Progress, pd: Any, max_records: int, spent: bool) -> int:
    """Add one partition's answer to its progress; how many records it gave. ``spent``: the
    answer's byte budget left no room for this partition (it is asked again with the others)."""
    err = from_code(pd.error_code)
    if err is not None:
        prog.error, prog.done = err, True
        return 0
    prog.high_watermark = pd.high_watermark
    start = getattr(pd, "log_start_offset", -1)
    if start is not None and start >= 0:
        prog.log_start = start
    decoded = decode_records(pd.records, pd.partition_index, prog.position, max_records - len(prog.records))
    prog.records.extend(decoded.records)
    if decoded.error is not None:  # a batch that cannot be read: the records before it stand
        prog.position, prog.error, prog.done = decoded.next_offset, decoded.error, True
        return len(decoded.records)
    stuck = decoded.next_offset == prog.position
    prog.position = decoded.next_offset
    if len(prog.records) >= max_records or prog.position >= prog.high_watermark:
        prog.done = True
    elif stuck and prog.alone:  # alone Kafka returns a first batch whole: nothing more now
        prog.done = True
    elif stuck and (pd.records or not spent):  # its first batch exceeds its share (KIP-74): alone
        prog.alone = True
    return len(decoded.records)


def _one_record_batch(
    timestamp: int, key: bytes | None, value: bytes | None, headers: Sequence[tuple[str, bytes | None]]
) -> bytes:
    """A v2 batch holding one uncompressed record; what kafka-python cannot write is INVALID_RECORD."""
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, offset=0)
    try:
        builder.append(timestamp=timestamp, key=key, value=value, headers=[(n, v) for n, v in headers])
    except (TypeError, ValueError, AssertionError, AttributeError) as exc:
        raise KafkaOperationError(87, "INVALID_RECORD", f"the record cannot be written: {exc}") from None
    builder.close()
    return bytes(builder.buffer())


def _produce_request(topic: str, partition: int, records: bytes, timeout_s: float) -> ProduceRequest:
    data = ProduceRequest.TopicProduceData
    return ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout_ms=int(timeout_s * 1000),
        topic_data=[
            data(name=topic, partition_data=[data.PartitionProduceData(index=partition, records=records)])
        ],
        min_version=3,
        max_version=12,  # v13 names topics by id
    )


def _no_partition(topic: str, partition: int) -> KafkaOperationError:
    return KafkaOperationError(
        3, "UNKNOWN_TOPIC_OR_PARTITION", f"partition {partition} of topic '{topic}' does not exist"
    )


def _no_leader(topic: str, partition: int) -> KafkaOperationError:
    return KafkaOperationError(5, "LEADER_NOT_AVAILABLE", f"{topic}-{partition} has no leader", True)


def _out_of_range(topic: str, partition: int, offset: int, bounds: tuple[int, int]) -> KafkaOperationError:
    start, end = bounds
    where = "before the log start" if offset < start else "past the high watermark"
    return KafkaOperationError(
        1,
        "OFFSET_OUT_OF_RANGE",
        f"offset {offset} of {topic}-{partition} is {where} (offsets {start} to {end} are held)",
    )
