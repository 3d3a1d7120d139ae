"""Produce, Fetch and ListOffsets: enough of the data path for producers and console consumers.

Produced record batches are kept verbatim (base offset rewritten) for Fetch; offsets that only
exist because of synthetic write rates are served as generated batches of small JSON records.
"""

from __future__ import annotations

import json
import struct
import time
import uuid
from typing import Any

from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
)
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder
from kafka.record.util import calc_crc32c

from sandbox import replication, transactions
from sandbox.apis import Deferred, RequestContext, api
from sandbox.configs import topic_value
from sandbox.state import Batch, ClusterState, Partition, Topic

ZERO_UUID = uuid.UUID(int=0)
SYNTHETIC_BATCH_RECORDS = 50
# a v2 record batch's header (DefaultRecordBatch): where the fields the broker rewrites sit
MAGIC, CRC, ATTRIBUTES, MAX_TIMESTAMP = 16, 17, 21, 35
LOG_APPEND_TIME = 0x08  # the attributes' timestamp type bit


def _lookup(st: ClusterState, name: str | None, tid: uuid.UUID | None) -> Topic | None:
    if name is None and tid is not None:
        name = st.topic_ids.get(tid)
    return st.topics.get(name) if name is not None else None


def _leader_error(
    ctx: RequestContext, t: Topic | None, index: int, by_id: bool
) -> tuple[int, Partition | None]:
    if t is None:
        return (100 if by_id else 3), None
    if not 0 <= index < len(t.partitions):
        return 3, None
    p = t.partitions[index]
    if p.leader != ctx.node.node_id:
        return 6, p  # NOT_LEADER_OR_FOLLOWER
    return 0, p


@api(ProduceRequest, 3, 13)
def produce(ctx: RequestContext, req: Any) -> Any:
    """Append record batches to partition leaders (offsets assigned here)."""
    st, v = ctx.state, ctx.version
    pr = ProduceResponse.TopicProduceResponse
    out = []
    for td in req.topic_data:
        t = _lookup(st, td.name if v < 13 else None, td.topic_id if v >= 13 else None)
        parts = []
        for pd in td.partition_data:
            code, p = _leader_error(ctx, t, pd.index, v >= 13)
            base, append_time, record_errors, message = -1, -1, [], None
            if code == 0 and p is not None and t is not None:
                min_isr = int(topic_value(st, t, "min.insync.replicas", ctx.node.node_id)[0] or 1)
                appended = (
                    topic_value(st, t, "message.timestamp.type", ctx.node.node_id)[0] == "LogAppendTime"
                )
                data = bytes(pd.records or b"")
                if req.acks == -1 and len(p.isr) < min_isr:
                    code = 19  # NOT_ENOUGH_REPLICAS
                elif _largest_batch(data) > int(topic_value(st, t, "max.message.bytes", ctx.node.node_id)[0]):
                    code = 10  # MESSAGE_TOO_LARGE: a batch is the unit Kafka checks
                elif not appended and (record_errors := _late_records(ctx, t, data)):
                    code, message = 32, "One or more records have been rejected due to invalid timestamp"
                elif (txn_error := transactions.produce_error(st, p, req.transactional_id, data, v))[0]:
                    code, message = txn_error
                else:
                    append_time = int(st.now_ms) if appended else -1
                    base = _append(p, data, append_time)
            parts.append(
                pr.PartitionProduceResponse(
                    index=pd.index,
                    error_code=code,
                    base_offset=base,
                    log_append_time_ms=append_time if code == 0 else -1,
                    log_start_offset=p.log_start_offset if p else -1,
                    record_errors=[
                        pr.PartitionProduceResponse.BatchIndexAndErrorMessage(
                            batch_index=i, batch_index_error_message=text
                        )
                        for i, text in record_errors
                    ],
                    error_message=message,
                )
            )
        out.append(pr(name=td.name, topic_id=td.topic_id, partition_responses=parts))
    if req.acks == 0:
        return None
    return ProduceResponse(version=v, responses=out, throttle_time_ms=0)


def _largest_batch(data: bytes) -> int:
    """The size of the largest record batch in a Produce's records (what max.message.bytes bounds)."""
    largest, batches = 0, MemoryRecords(data)
    while (batch := batches.next_batch()) is not None:
        largest = max(largest, batch.size_in_bytes)
    return largest


def _late_records(ctx: RequestContext, t: Topic, data: bytes) -> list[tuple[int, str]]:
    """The records of a CreateTime topic whose timestamps are outside ``message.timestamp.before.max.ms``
    / ``after.max.ms`` of now, as Kafka's LogValidator words them (index, text); the broker's now is
    the virtual clock, or the wall clock when that is later (a stopped clock refuses no producer)."""
    before = int(topic_value(ctx.state, t, "message.timestamp.before.max.ms", ctx.node.node_id)[0])
    after = int(topic_value(ctx.state, t, "message.timestamp.after.max.ms", ctx.node.node_id)[0])
    now = int(max(ctx.state.now_ms, time.time() * 1000))
    out: list[tuple[int, str]] = []
    batches, index = MemoryRecords(data), 0
    while (batch := batches.next_batch()) is not None:
        if batch.magic >= 2 and batch.max_timestamp - now <= after and before >= now:
            index += batch.records_count  # none too late (max), none too early (the default: no bound)
            continue
        for record in batch:
            ts = record.timestamp
            if ts is not None and ts >= 0 and (now - ts > before or ts - now > after):
                out.append((index, f"Timestamp {ts} of message with offset {record.offset} is out of range. "
                                   f"The timestamp should be within [{now - before}, {now + after}]"))  # fmt: skip
            index += 1
    return out


def _append(p: Partition, data: bytes, append_time: int = -1) -> int:
    """Store each batch with its new base offset; return the first offset assigned. With
    ``append_time`` (a topic of LogAppendTime) each v2 batch is stamped as Kafka's LogValidator does:
    the timestamp type bit and the max timestamp set, the CRC computed again."""
    first = p.end_offset
    records = MemoryRecords(data)
    while True:
        batch = records.next_batch()
        if batch is None:
            break
        raw = bytearray(batch._buffer)
        count = batch.last_offset_delta + 1
        struct.pack_into(">q", raw, 0, p.end_offset)
        max_timestamp = batch.max_timestamp
        if append_time >= 0 and raw[MAGIC] >= 2:
            struct.pack_into(
                ">h", raw, ATTRIBUTES, struct.unpack_from(">h", raw, ATTRIBUTES)[0] | LOG_APPEND_TIME
            )
            struct.pack_into(">q", raw, MAX_TIMESTAMP, append_time)
            struct.pack_into(">I", raw, CRC, calc_crc32c(memoryview(raw)[ATTRIBUTES:]))
            max_timestamp = append_time
        p.keep(Batch(p.end_offset, p.end_offset + count - 1, bytes(raw)))
        p.max_timestamp = max(p.max_timestamp, max_timestamp)
        transactions.batch_appended(p, raw, p.end_offset, count, max_timestamp)
        replication.append(p, len(raw), count)
    return first


def synthetic_batch(topic: str, p: Partition, start: int, stop: int) -> bytes:
    """A generated batch of small JSON records for offsets written by the synthetic rate."""
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, offset=start)
    for off in range(start, stop):
        value = json.dumps({"topic": topic, "partition": p.index, "offset": off, "synthetic": True})
        builder.append(timestamp=None, key=None, value=value.encode(), headers=[])
    builder.close()
    return bytes(builder.buffer())


def _read(
    t: Topic, p: Partition, offset: int, max_bytes: int, min_one: bool, stop: int | None = None
) -> bytes:
    """The log from the batch holding ``offset`` on, sliced at ``max_bytes`` as Kafka slices its
    segment (the last batch may be cut). A first batch larger than ``max_bytes`` comes whole when
    ``min_one`` (the first partition of the answer with data, KIP-74), else nothing comes. Only
    batches below ``stop`` (the last stable offset of a READ_COMMITTED fetch) come."""
    pieces: list[bytes] = []
    size = 0
    stop = p.end_offset if stop is None else stop
    for b in p.batches or ():
        if b.last_offset < offset:
            continue
        if b.base_offset >= stop:
            break
        if b.base_offset > offset:
            pieces.append(
                synthetic_batch(t.name, p, offset, min(b.base_offset, offset + SYNTHETIC_BATCH_RECORDS))
            )
            break
        pieces.append(b.data)
        size += len(b.data)
        offset = b.last_offset + 1
        if size > max_bytes:
            break
    if not pieces and offset < stop:
        pieces.append(synthetic_batch(t.name, p, offset, min(stop, offset + SYNTHETIC_BATCH_RECORDS)))
    if not pieces:
        return b""
    if len(pieces[0]) > max_bytes:
        return pieces[0] if min_one else b""
    return b"".join(pieces)[:max_bytes]


@api(FetchRequest, 4, 18)
def fetch(ctx: RequestContext, req: Any) -> Any:
    """Return stored (or synthetic) batches from the leader; long-polls when there is nothing."""
    st, v = ctx.state, ctx.version
    fr = FetchResponse.FetchableTopicResponse
    out, total, limit = [], 0, max(0, req.max_bytes)
    committed = getattr(req, "isolation_level", 0) == 1  # READ_COMMITTED: up to the last stable offset
    transactions.expire(st)
    for ft in req.topics:
        t = _lookup(st, ft.topic if v < 13 else None, ft.topic_id if v >= 13 else None)
        parts = []
        for fp in ft.partitions:
            code, p = _leader_error(ctx, t, fp.partition, v >= 13)
            records, aborted, lso = b"", None, -1
            if code == 0 and p is not None and t is not None:
                lso = transactions.last_stable_offset(p)
                if not p.log_start_offset <= fp.fetch_offset <= p.end_offset:
                    code = 1  # OFFSET_OUT_OF_RANGE
                else:
                    stop = lso if committed else p.end_offset
                    size = min(fp.partition_max_bytes, limit)
                    records = _read(t, p, fp.fetch_offset, size, total == 0, stop)
                    if committed:
                        aborted = [
                            fr.PartitionData.AbortedTransaction(producer_id=pid, first_offset=first)
                            for pid, first in transactions.aborted_in(p, fp.fetch_offset, stop)
                        ]
                    total += len(records)
                    limit = max(0, limit - len(records))
            known = p is not None and code == 0  # Kafka answers an error without the log's bounds
            parts.append(
                fr.PartitionData(
                    partition_index=fp.partition,
                    error_code=code,
                    high_watermark=p.end_offset if known else -1,
                    last_stable_offset=lso if known else -1,
                    log_start_offset=p.log_start_offset if known else -1,
                    aborted_transactions=aborted,
                    preferred_read_replica=-1,
                    records=records,
                )
            )
        out.append(fr(topic=ft.topic, topic_id=ft.topic_id, partitions=parts))
    if total == 0 and req.max_wait_ms > 0 and not ctx.retried:
        return Deferred(min(req.max_wait_ms, 500) / 1000.0)
    return FetchResponse(version=v, throttle_time_ms=0, error_code=0, session_id=0, responses=out)


@api(ListOffsetsRequest, 1, 10)
def list_offsets(ctx: RequestContext, req: Any) -> Any:
    """Earliest (-2), latest (-1), max timestamp (-3) or first offset at/after a timestamp."""
    st, v = ctx.state, ctx.version
    lr = ListOffsetsResponse.ListOffsetsTopicResponse
    out = []
    committed = getattr(req, "isolation_level", 0) == 1  # READ_COMMITTED: latest is the last stable offset
    transactions.expire(st)
    for lt in req.topics:
        t = st.topics.get(lt.name)
        parts = []
        for lp in lt.partitions:
            code, p = _leader_error(ctx, t, lp.partition_index, False)
            ts, off = -1, -1
            if code == 0 and p is not None:
                if lp.timestamp == -2 or lp.timestamp == -4:
                    off = p.log_start_offset
                elif lp.timestamp == -1:
                    off = transactions.last_stable_offset(p) if committed else p.end_offset
                elif lp.timestamp == -3:
                    last = max(p.batches or (), key=lambda b: b.last_offset, default=None)
                    ts, off = (p.max_timestamp, last.base_offset) if last else (-1, -1)
                else:
                    ts, off = _offset_for_time(p, lp.timestamp)
                if (
                    lp.timestamp not in (-1, -2, -4)
                    and committed
                    and off >= transactions.last_stable_offset(p)
                ):
                    ts, off = -1, -1  # READ_COMMITTED finds nothing at or above the last stable offset
            parts.append(
                lr.ListOffsetsPartitionResponse(
                    partition_index=lp.partition_index,
                    error_code=code,
                    timestamp=ts,
                    offset=off,
                    leader_epoch=p.leader_epoch if p else -1,
                )
            )
        out.append(lr(name=lt.name, partitions=parts))
    return ListOffsetsResponse(version=v, throttle_time_ms=0, topics=out)


def _offset_for_time(p: Partition, target: int) -> tuple[int, int]:
    """(timestamp, offset) of the first record held (at or after the log start) whose timestamp is
    >= ``target``, as UnifiedLog.fetchOffsetByTimestamp finds it: the first batch whose max timestamp
    reaches it, then its records in order; (-1, -1) when there is none."""
    for b in p.batches or ():
        if b.last_offset < p.log_start_offset or struct.unpack_from(">q", b.data, MAX_TIMESTAMP)[0] < target:
            continue
        batch = MemoryRecords(b.data).next_batch()
        for record in batch or ():
            if record.timestamp >= target and record.offset >= p.log_start_offset:
                return record.timestamp, record.offset
    return -1, -1
