"""Record batches as a consumer reads them: the Fetch that asks for them and their decoding.

A Fetch answer holds a partition's record batches as Kafka stored them (``MemoryRecords``): v2
batches, compressed whole with gzip, snappy, lz4 or zstd (kafka-python decodes each with its
library: python-snappy, lz4, zstandard). What a consumer sees is decided here the way the Java
consumer's ``CompletedFetch`` decides it:

* a compressed batch comes back whole, so its records before the fetch offset are skipped;
* control batches (transaction markers) are passed over, their offsets counted;
* after a whole batch the next offset is the batch's own ``next_offset`` (compaction may have removed
  its last records; their offsets are not read again);
* the answer may end inside a batch (Kafka cuts at the byte limit): the cut batch is not an error,
  the read continues from the last whole record's offset + 1;
* a first batch larger than the partition's limit comes back empty unless the partition is the first
  of the request (KIP-74): the caller asks such a partition alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka.protocol.consumer import FetchRequest
from kafka.record.memory_records import MemoryRecords

from . import record_batch
from .errors import KafkaOperationError

_TOPIC = FetchRequest.FetchTopic
_PARTITION = _TOPIC.FetchPartition
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")


@dataclass(frozen=True)
class RawRecord:
    """One record as Kafka holds it (bytes undecoded)."""

    partition: int
    offset: int
    timestamp: int | None  # ms since the epoch; None when the record carries none (-1)
    timestamp_type: str  # "CreateTime" or "LogAppendTime"
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    size: int  # serialized size of key + value + header names/values, in bytes


# A read builds up to 500 RawRecords: each is made without the frozen dataclass's __init__ (a guarded
# attribute write per field), its fields put in its __dict__ at once - the same instance, compared,
# hashed and printed by the dataclass's own methods.
_new = object.__new__
_set = object.__setattr__


def fetch_request(
    topic: str, asks: Iterable[tuple[int, int, int]], total_bytes: int, isolation: int = 0
) -> Any:
    """A consumer's Fetch (replica -1, no session, answering at once) of ``topic``'s
    ``[(partition, offset, partition_max_bytes)]``, at most ``total_bytes`` in the answer (beyond it
    only a first oversized batch, KIP-74). v4-12: v13 names topics by id."""
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=max(1, total_bytes),
        isolation_level=isolation,
        session_id=0,
        session_epoch=-1,
        topics=[
            _TOPIC(
                topic=topic,
                partitions=[
                    _PARTITION(
                        partition=p,
                        fetch_offset=offset,
                        log_start_offset=-1,
                        partition_max_bytes=max(1, limit),
                    )
                    for p, offset, limit in asks
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
        min_version=4,
        max_version=12,
    )


@dataclass
class Decoded:
    """What one partition's answer held from ``start`` on."""

    records: list[RawRecord]
    next_offset: int  # where the next read continues (``start`` when no whole batch came)
    error: KafkaOperationError | None = None  # a batch that could not be read (at ``next_offset``)


def decode_records(data: bytes | None, partition: int, start: int, limit: int) -> Decoded:
    """The records at or after ``start`` in a Fetch answer's bytes, at most ``limit`` of them (see
    the module docstring). A batch that cannot be read ends the records with CORRUPT_MESSAGE (never
    a client exception); the whole batches before it stand."""
    out: list[RawRecord] = []
    next_offset = start
    if not data:
        return Decoded(out, next_offset)
    data, pos = bytes(data), 0
    try:
        while len(out) < limit and pos + 12 <= len(data):  # an offset and a length (the log overhead)
            end = pos + 12 + int.from_bytes(data[pos + record_batch.LENGTH_AT : pos + 12], "big", signed=True)
            if end > len(data):  # a batch cut at the answer's byte limit
                break
            room = limit - len(out)
            if end - pos < 17 or (
                data[pos + record_batch.MAGIC_AT] >= 2 and end - pos < record_batch.HEADER_SIZE
            ):
                raise ValueError(f"a batch of {end - pos} bytes is shorter than its header")
            if data[pos + record_batch.MAGIC_AT] < 2:
                taken, whole, last = _legacy(data[pos:end], partition, start, room)
            else:
                head = record_batch.BatchHeader(data, pos)
                kind = TIMESTAMP_TYPES[head.log_append_time]
                found = [] if head.control else record_batch.records(data, pos, end, head, start)
                whole, last = len(found) <= room, head.last_offset
                taken = []
                for o, ts, k, v, h, n in found[:room]:  # RawRecords, as said at _new
                    record = _new(RawRecord)
                    _set(record, "__dict__", {"partition": partition, "offset": o,
                         "timestamp": ts if ts >= 0 else None, "timestamp_type": kind, "key": k, "value": v,
                         "headers": h, "size": n})  # fmt: skip
                    taken.append(record)
            pos = end
            out.extend(taken)
            if taken:
                next_offset = taken[-1].offset + 1
            if whole:  # control batches and compacted tails: their offsets are passed over
                next_offset = max(next_offset, last + 1)
    except Exception as exc:  # noqa: BLE001 - a batch the client cannot read: Kafka's name for it
        text = f"a record batch of partition {partition} at offset {next_offset} could not be read: {exc}"
        return Decoded(out, next_offset, KafkaOperationError(2, "CORRUPT_MESSAGE", text, False))
    return Decoded(out, next_offset)


def _legacy(data: bytes, partition: int, start: int, room: int) -> tuple[list[RawRecord], bool, int]:
    """A message set of the old formats (magic 0 or 1), through kafka-python: (records at or after
    ``start``, at most ``room``; whether all were taken; its last offset)."""
    batch = MemoryRecords(data).next_batch()
    taken: list[RawRecord] = []
    whole, last = True, start - 1
    kind = TIMESTAMP_TYPES[1 if batch.timestamp_type else 0]
    for record in batch:
        last = record.offset
        if record.offset < start:
            continue
        if len(taken) >= room:
            whole = False
            break
        taken.append(_raw(partition, record, kind))
    return taken, whole, last


def _raw(partition: int, record: Any, kind: str) -> RawRecord:
    key, value, ts = record.key, record.value, record.timestamp
    headers = tuple(record.headers or ())
    size = (len(key) if key else 0) + (len(value) if value else 0)
    for name, val in headers:
        size += len(name.encode()) + (len(val) if val else 0)
    return RawRecord(
        partition, record.offset, ts if ts is not None and ts >= 0 else None, kind, key, value, headers, size
    )


def partition_limits(
    wanted: Mapping[int, int], avg_size: float, bytes_left: int, floor: int = 16 * 1024
) -> dict[int, int]:
    """Each partition's byte limit for the next Fetch: what its ``wanted`` records are expected to
    take at ``avg_size`` bytes a record (plus a batch header's worth), at least ``floor`` and at most
    what is left of the read's total."""
    return {p: min(bytes_left, max(floor, int(n * avg_size * 1.1) + 512)) for p, n in wanted.items()}
