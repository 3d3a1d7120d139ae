"""Transactions (KIP-98) as Kafka 4.1's transaction coordinator and partition leaders keep them.

Two halves, both plain data plus the rules that change it (handlers hold ``ClusterState.lock``):

- the coordinator (``Coordinator``, Kafka's ``TransactionCoordinator`` / ``TransactionStateManager``):
  one ``TxnMetadata`` per transactional id with its producer id and epoch, state (Empty, Ongoing,
  PrepareCommit/PrepareAbort, CompleteCommit/CompleteAbort), timeout, start time and partitions;
  InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn and the timeout abort move it. The
  transaction protocol the clients the project uses speak is version 1 (TV1): the epoch is bumped by
  InitProducerId, fencing and the timeout abort only; an EndTxn of v5+ (TV2) also bumps it.
- the partition side (``PartitionTxns`` on ``Partition.txns``, Kafka's ``ProducerStateManager``):
  each producer's epoch, last sequence, last timestamp, coordinator epoch and open transaction's
  first offset, and the aborted transactions (Kafka's aborted-transaction index); the last stable
  offset follows from them.

A transaction ends by writing a COMMIT or ABORT control batch (``marker_batch``) to each of its
partitions, at once (Kafka's marker channel is asynchronous; here PrepareCommit/PrepareAbort never
last past the request that entered them). The coordinator's clock is the sandbox's virtual clock
(``ClusterState.now_ms``): ``expire`` aborts the Ongoing transactions older than their timeout, as
``TransactionCoordinator.abortTimedOutTransactions``, whenever a transaction API, Fetch, ListOffsets
or DescribeProducers is handled (Kafka runs it every 10 s; here it is checked on each read, so a test
advances the clock and the next read sees the abort).
"""

from __future__ import annotations

import re
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from kafka.record.util import calc_crc32c

from sandbox import replication
from sandbox.state import Batch, ClusterState, Group, Partition

# Kafka's error codes
NONE, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR = 0, 3, 6, 16
INVALID_REQUEST, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING = 42, 47, 48, 49
INVALID_TRANSACTION_TIMEOUT, CONCURRENT_TRANSACTIONS, TRANSACTION_COORDINATOR_FENCED = 50, 51, 52
OPERATION_NOT_ATTEMPTED, PRODUCER_FENCED, TRANSACTIONAL_ID_NOT_FOUND = 55, 90, 105
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, TRANSACTION_ABORTABLE, INVALID_REGULAR_EXPRESSION = 53, 120, 128

STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
          "PrepareEpochFence")  # fmt: skip
MAX_TIMEOUT_MS = 900_000  # transaction.max.timeout.ms's default
COORDINATOR_EPOCH = 0  # the leader epoch of the __transaction_state partition (never moves here)
OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions: where AddOffsetsToTxn puts a group
EPOCH_EXHAUSTED = 32766  # Short.MaxValue - 1
# a v2 record batch's header (DefaultRecordBatch)
ATTRIBUTES, PRODUCER_ID, PRODUCER_EPOCH, BASE_SEQUENCE, MAX_TIMESTAMP = 21, 43, 51, 53, 35
TRANSACTIONAL, CONTROL = 0x10, 0x20


@dataclass(slots=True)
class TxnMetadata:
    """One transactional id at its coordinator (Kafka's TransactionMetadata)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int = -1
    last_producer_epoch: int = -1
    previous_producer_id: int = -1
    timeout_ms: int = 60_000
    state: str = "Empty"
    partitions: set[tuple[str, int]] = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1
    # group -> {(topic, partition): (offset, leader epoch, metadata)}: TxnOffsetCommit's pending offsets
    pending_offsets: dict[str, dict[tuple[str, int], tuple[int, int, str]]] = field(default_factory=dict)


@dataclass(slots=True)
class Coordinator:
    """Every transactional id's metadata (one map for the cluster: which broker answers for an id is
    the caller's business, ``sandbox.handlers.coordinator.coordinator``)."""

    txns: dict[str, TxnMetadata] = field(default_factory=dict)


@dataclass(slots=True)
class ProducerEntry:
    """A producer's state at one partition (Kafka's ProducerStateEntry), as DescribeProducers shows it."""

    producer_id: int
    producer_epoch: int
    last_sequence: int = -1
    last_timestamp: int = -1
    coordinator_epoch: int = -1
    txn_start_offset: int = -1


@dataclass(slots=True)
class PartitionTxns:
    """A partition leader's producer state: producers, open transactions, aborted transactions."""

    producers: dict[int, ProducerEntry] = field(default_factory=dict)
    ongoing: dict[int, int] = field(default_factory=dict)  # producer id -> first offset
    aborted: list[tuple[int, int, int]] = field(
        default_factory=list
    )  # producer id, first offset, last offset


# ---------------------------------------------------------------- shared look-ups


def coordinator_of(st: ClusterState) -> Coordinator:
    """The cluster's transaction coordinator state (created on first use)."""
    if st.transactions is None:
        st.transactions = Coordinator()
    return st.transactions


def txns_of(p: Partition) -> PartitionTxns:
    """A partition's producer state (created on first use)."""
    if p.txns is None:
        p.txns = PartitionTxns()
    return p.txns


def java_hash(text: str) -> int:
    """Java's String.hashCode (what Kafka hashes a group or transactional id with)."""
    h, data = 0, text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def offsets_partition(group_id: str) -> int:
    """The __consumer_offsets partition of a group (GroupCoordinatorService.partitionFor:
    Utils.abs(hashCode) % 50, Utils.abs being Math.abs with Integer.MIN_VALUE -> 0)."""
    h = java_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % OFFSETS_PARTITIONS


def max_timeout_ms(st: ClusterState) -> int:
    """transaction.max.timeout.ms (the brokers' static config, else Kafka's default)."""
    return int(st.static_configs.get("transaction.max.timeout.ms", MAX_TIMEOUT_MS))


def last_stable_offset(p: Partition) -> int:
    """The first offset of the oldest open transaction, or the high watermark when none is open."""
    if p.txns is None or not p.txns.ongoing:
        return p.end_offset
    return min(p.end_offset, min(p.txns.ongoing.values()))


def aborted_in(p: Partition, start: int, stop: int) -> list[tuple[int, int]]:
    """(producer id, first offset) of the aborted transactions overlapping ``start``..``stop`` (exclusive),
    as UnifiedLog.collectAbortedTransactions answers a READ_COMMITTED fetch."""
    if p.txns is None:
        return []
    return [(pid, first) for pid, first, last in p.txns.aborted if last >= start and first < stop]


# ---------------------------------------------------------------- the partition side


def _zigzag(value: int) -> bytes:
    z, out = (value << 1) ^ (value >> 63), bytearray()
    while True:
        byte, z = z & 0x7F, z >> 7
        out.append(byte | (0x80 if z else 0))
        if not z:
            return bytes(out)


def marker_batch(offset: int, pid: int, epoch: int, commit: bool, coordinator_epoch: int, ts: int, leader_epoch: int) -> bytes:  # fmt: skip
    """A control batch holding one end-transaction marker, as Kafka's MemoryRecords.withEndTransactionMarker
    writes it: transactional + control attributes, key (version 0, type 1 COMMIT / 0 ABORT), value
    (version 0, coordinator epoch), no sequence."""
    key, value = struct.pack(">hh", 0, 1 if commit else 0), struct.pack(">hi", 0, coordinator_epoch)
    body = (
        b"\x00" + _zigzag(0) + _zigzag(0) + _zigzag(len(key)) + key + _zigzag(len(value)) + value + _zigzag(0)
    )
    record = _zigzag(len(body)) + body
    tail = struct.pack(">hiqqqhii", TRANSACTIONAL | CONTROL, 0, ts, ts, pid, epoch, -1, 1) + record
    crc = calc_crc32c(memoryview(tail))
    return struct.pack(">qiibI", offset, 4 + 1 + 4 + len(tail), leader_epoch, 2, crc) + tail


def batch_producer(raw: bytes) -> tuple[int, int, int, bool, bool]:
    """(producer id, epoch, base sequence, transactional, control) of a v2 batch; producer id -1 without one."""
    if len(raw) < 61 or raw[16] < 2:
        return -1, -1, -1, False, False
    attrs = struct.unpack_from(">h", raw, ATTRIBUTES)[0]
    pid = struct.unpack_from(">q", raw, PRODUCER_ID)[0]
    epoch = struct.unpack_from(">h", raw, PRODUCER_EPOCH)[0]
    seq = struct.unpack_from(">i", raw, BASE_SEQUENCE)[0]
    return pid, epoch, seq, bool(attrs & TRANSACTIONAL), bool(attrs & CONTROL)


def produce_error(st: ClusterState, p: Partition, transactional_id: str | None, data: bytes, version: int) -> tuple[int, str | None]:  # fmt: skip
    """Kafka's checks of a Produce's producer batches before they are appended: a stale epoch
    (INVALID_PRODUCER_EPOCH), and, for a transactional batch that opens the producer's transaction on
    this partition, the coordinator's verification (KIP-890: the partition must have been added;
    INVALID_TXN_STATE "Partition was not added to the transaction", TRANSACTION_ABORTABLE to v11).
    A Produce of v12+ adds the partition itself when transaction.version 2 is finalized, as Kafka 4.1
    does (each measured on a real 4.1 broker)."""
    pos = 0
    while pos + 61 <= len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0] + 12
        pid, epoch, _, transactional, _ = batch_producer(data[pos : pos + 61])
        pos += size
        if pid < 0:
            continue
        entry = p.txns.producers.get(pid) if p.txns else None
        if entry is not None and epoch < entry.producer_epoch:
            return INVALID_PRODUCER_EPOCH, (
                f"Epoch of producer {pid} at offset {p.end_offset} in {p.topic}-{p.index} is {epoch}, "
                f"which is smaller than the last seen epoch {entry.producer_epoch}"
            )
        if transactional and not transactional_id:  # KafkaApis refuses the whole request
            return TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None
        if not transactional or (p.txns is not None and pid in p.txns.ongoing):
            continue
        m = coordinator_of(st).txns.get(transactional_id or "")
        if m is None or m.producer_id != pid:
            return INVALID_PRODUCER_ID_MAPPING, None
        if m.producer_epoch != epoch:
            return INVALID_PRODUCER_EPOCH, None
        if m.state in ("PrepareCommit", "PrepareAbort"):
            return 19, "Unable to verify the partition has been added to the transaction. Underlying error: CONCURRENT_TRANSACTIONS"  # fmt: skip
        if (p.topic, p.index) not in m.partitions or m.state != "Ongoing":
            if version >= 12 and int(st.features.get("transaction.version", 0)) >= 2:
                add_partitions(st, m, [(p.topic, p.index)])
                continue
            if version >= 11:  # KIP-1050: v11 takes TRANSACTION_ABORTABLE for it
                return TRANSACTION_ABORTABLE, None
            return INVALID_TXN_STATE, "Partition was not added to the transaction"
    return NONE, None


def batch_appended(p: Partition, raw: bytes, base_offset: int, count: int, max_timestamp: int) -> None:
    """Update the producer state for a batch just appended at ``base_offset`` (Kafka's ProducerAppendInfo)."""
    pid, epoch, seq, transactional, control = batch_producer(raw)
    if pid < 0 or control:
        return
    txns = txns_of(p)
    entry = txns.producers.get(pid)
    if entry is None:
        entry = txns.producers[pid] = ProducerEntry(pid, epoch)
    entry.producer_epoch = epoch
    entry.last_sequence = seq + count - 1 if seq >= 0 else -1
    entry.last_timestamp = max_timestamp
    if transactional and pid not in txns.ongoing:
        txns.ongoing[pid] = base_offset
        entry.txn_start_offset = base_offset


def write_marker(st: ClusterState, p: Partition, pid: int, epoch: int, commit: bool, coordinator_epoch: int) -> int:  # fmt: skip
    """Append a COMMIT/ABORT marker for ``pid`` to a partition (the leader's part of WriteTxnMarkers)
    and close its open transaction; an error code when Kafka refuses it."""
    txns = txns_of(p)
    entry = txns.producers.get(pid)
    if entry is not None and epoch < entry.producer_epoch:
        return INVALID_PRODUCER_EPOCH
    if entry is not None and coordinator_epoch < entry.coordinator_epoch:
        return TRANSACTION_COORDINATOR_FENCED
    ts, offset = int(st.now_ms), p.end_offset
    raw = marker_batch(offset, pid, epoch, commit, coordinator_epoch, ts, p.leader_epoch)
    p.keep(Batch(offset, offset, raw))
    p.max_timestamp = max(p.max_timestamp, ts)
    replication.append(p, len(raw), 1)
    first = txns.ongoing.pop(pid, None)
    if first is not None and not commit:
        txns.aborted.append((pid, first, offset))
    if entry is None:
        entry = txns.producers[pid] = ProducerEntry(pid, epoch)
    entry.producer_epoch, entry.coordinator_epoch = epoch, coordinator_epoch
    entry.last_timestamp, entry.txn_start_offset = ts, -1
    return NONE


def hang(st: ClusterState, p: Partition, records: int = 1, age_ms: int = 0) -> dict[str, int]:
    """Open a transaction on a partition that no coordinator knows about (a *hanging* transaction,
    as after a lost coordinator state): a transactional batch from a fresh producer id, epoch 0,
    stamped (CreateTime) ``age_ms`` before the wall clock, as a producer that wrote it then would."""
    st.next_producer_id += 1
    pid, ts, offset = st.next_producer_id, int(time.time() * 1000) - age_ms, p.end_offset
    raw = _data_batch(offset, pid, 0, records, ts, p.leader_epoch)
    p.keep(Batch(offset, offset + records - 1, raw))
    p.max_timestamp = max(p.max_timestamp, ts)
    replication.append(p, len(raw), records)
    batch_appended(p, raw, offset, records, ts)
    return {"producer_id": pid, "producer_epoch": 0, "start_offset": offset}


def _data_batch(offset: int, pid: int, epoch: int, count: int, ts: int, leader_epoch: int) -> bytes:
    recs = b""
    for i in range(count):
        value = f"hanging-{pid}-{i}".encode()
        body = b"\x00" + _zigzag(0) + _zigzag(i) + _zigzag(-1) + _zigzag(len(value)) + value + _zigzag(0)
        recs += _zigzag(len(body)) + body
    tail = struct.pack(">hiqqqhii", TRANSACTIONAL, count - 1, ts, ts, pid, epoch, 0, count) + recs
    crc = calc_crc32c(memoryview(tail))
    return struct.pack(">qiibI", offset, 4 + 1 + 4 + len(tail), leader_epoch, 2, crc) + tail


# ---------------------------------------------------------------- the coordinator


def _complete(st: ClusterState, m: TxnMetadata, commit: bool) -> None:
    """PrepareCommit/PrepareAbort -> markers on every partition -> CompleteCommit/CompleteAbort;
    a commit makes the transaction's group offsets visible."""
    m.state = "PrepareCommit" if commit else "PrepareAbort"
    for topic, index in sorted(m.partitions):
        p = st.partition(topic, index)
        if p is not None and p.leader >= 0:
            write_marker(st, p, m.producer_id, m.producer_epoch, commit, COORDINATOR_EPOCH)
    if commit:
        for group_id, offsets in m.pending_offsets.items():
            g = st.groups.get(group_id)
            if g is None:
                g = st.groups[group_id] = Group(group_id, state="Empty", protocol_type="", protocol="")
            for key, (offset, _, _) in offsets.items():
                g.offsets[key] = offset
    m.pending_offsets = {}
    m.state = "CompleteCommit" if commit else "CompleteAbort"
    m.partitions = set()
    m.last_update_ms = int(st.now_ms)


def _fence_and_abort(st: ClusterState, m: TxnMetadata) -> None:
    """Bump the epoch (fencing the producer) and abort the ongoing transaction (PrepareEpochFence)."""
    if m.producer_epoch < EPOCH_EXHAUSTED:
        m.last_producer_epoch, m.producer_epoch = m.producer_epoch, m.producer_epoch + 1
    _complete(st, m, commit=False)


def expire(st: ClusterState) -> list[str]:
    """Abort every Ongoing transaction older than its timeout (TransactionCoordinator.abortTimedOutTransactions,
    with the producer fenced); the ids aborted."""
    if st.transactions is None:
        return []
    now, out = st.now_ms, []
    for m in st.transactions.txns.values():
        if m.state == "Ongoing" and m.start_ms >= 0 and now - m.start_ms > m.timeout_ms:
            _fence_and_abort(st, m)
            out.append(m.transactional_id)
    return out


def init_producer_id(st: ClusterState, tid: str, timeout_ms: int, exp_pid: int = -1, exp_epoch: int = -1) -> tuple[int, int, int]:  # fmt: skip
    """InitProducerId with a transactional id: (error, producer id, epoch)."""
    if tid == "":
        return INVALID_REQUEST, -1, -1
    if timeout_ms <= 0 or timeout_ms > max_timeout_ms(st):
        return INVALID_TRANSACTION_TIMEOUT, -1, -1
    coord = coordinator_of(st)
    m = coord.txns.get(tid)
    if m is None:
        st.next_producer_id += 1
        m = coord.txns[tid] = TxnMetadata(tid, st.next_producer_id, timeout_ms=timeout_ms, last_update_ms=int(st.now_ms))  # fmt: skip
    if exp_pid >= 0 and not (
        m.producer_epoch == -1
        or exp_pid == m.producer_id
        or (exp_pid == m.previous_producer_id and exp_epoch >= EPOCH_EXHAUSTED)
    ):
        return PRODUCER_FENCED, -1, -1
    if m.state in ("PrepareCommit", "PrepareAbort"):
        return CONCURRENT_TRANSACTIONS, -1, -1
    if m.state == "Ongoing":
        _fence_and_abort(st, m)  # the client retries and gets the epoch bumped once more
        return CONCURRENT_TRANSACTIONS, -1, -1
    if m.producer_epoch >= EPOCH_EXHAUSTED and exp_epoch in (-1, m.producer_epoch):
        st.next_producer_id += 1
        m.previous_producer_id, m.producer_id = m.producer_id, st.next_producer_id
        m.last_producer_epoch, m.producer_epoch = -1, 0
    elif exp_pid >= 0 and exp_epoch not in (-1, m.producer_epoch):
        if exp_epoch == m.last_producer_epoch:  # a retry of a bump whose answer was lost
            return NONE, m.producer_id, m.producer_epoch
        return PRODUCER_FENCED, -1, -1
    else:
        m.last_producer_epoch, m.producer_epoch = m.producer_epoch, m.producer_epoch + 1
    m.timeout_ms, m.state, m.partitions, m.start_ms = timeout_ms, "Empty", set(), -1
    m.last_update_ms = int(st.now_ms)
    return NONE, m.producer_id, m.producer_epoch


def check_producer(st: ClusterState, tid: str | None, pid: int, epoch: int) -> tuple[int, TxnMetadata | None]:
    """The checks AddPartitionsToTxn, AddOffsetsToTxn and EndTxn share: the id's metadata, or an error."""
    if not tid:
        return INVALID_REQUEST, None
    m = coordinator_of(st).txns.get(tid)
    if m is None or m.producer_id != pid:
        return INVALID_PRODUCER_ID_MAPPING, None
    if m.producer_epoch != epoch:
        return PRODUCER_FENCED, None
    return NONE, m


def add_partitions(st: ClusterState, m: TxnMetadata, partitions: list[tuple[str, int]]) -> int:
    """Add partitions to the id's transaction, starting one when none is ongoing (Ongoing)."""
    if m.state in ("PrepareCommit", "PrepareAbort"):
        return CONCURRENT_TRANSACTIONS
    if m.state == "Ongoing" and set(partitions) <= m.partitions:
        return NONE
    if m.state != "Ongoing":
        m.start_ms = int(st.now_ms)
        m.partitions = set()
    m.partitions.update(partitions)
    m.state = "Ongoing"
    m.last_update_ms = int(st.now_ms)
    return NONE


def end_txn(st: ClusterState, m: TxnMetadata, commit: bool, tv2: bool = False) -> int:
    """EndTxn: commit or abort the ongoing transaction (markers written at once)."""
    if m.state == "Ongoing":
        if tv2 and m.producer_epoch < EPOCH_EXHAUSTED:
            m.last_producer_epoch, m.producer_epoch = m.producer_epoch, m.producer_epoch + 1
        _complete(st, m, commit)
        return NONE
    if (m.state, commit) in (("CompleteCommit", True), ("CompleteAbort", False)):
        return NONE  # a retry of the end that was already written
    if (m.state, commit) in (("PrepareCommit", True), ("PrepareAbort", False)):
        return CONCURRENT_TRANSACTIONS
    return INVALID_TXN_STATE


def list_transactions(
    st: ClusterState, owns: Any, states: list[str], pids: list[int], duration_ms: int, pattern: str | None
) -> tuple[list[str], list[TxnMetadata]]:
    """ListTransactions at one broker: (unknown state filters, matching transactions it coordinates);
    ``owns(tid)`` tells whether this broker coordinates an id. The pattern (v2; "" is none) must match
    the whole id, as Kafka 4.1's; one that does not compile raises ValueError."""
    unknown = [s for s in states if s not in STATES]
    wanted = {s for s in states if s in STATES}
    try:
        rx = re.compile(pattern) if pattern else None
    except re.error:
        raise ValueError(pattern) from None
    now, out = st.now_ms, []
    for m in coordinator_of(st).txns.values():
        if not owns(m.transactional_id) or m.state == "Dead":
            continue
        if (pids and m.producer_id not in pids) or (states and m.state not in wanted):
            continue
        if duration_ms >= 0 and now - m.start_ms <= duration_ms:
            continue
        if rx is not None and not rx.fullmatch(m.transactional_id):
            continue
        out.append(m)
    return unknown, out
