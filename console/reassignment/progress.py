"""Pure progress arithmetic for moving partitions (KIP-179 replica states), no I/O.

Inputs are what one poll cycle fetched: the reassignments Kafka reports in progress and, per
involved broker, the replicas in its log dirs (``None`` when the broker did not answer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from console.formatting import human_bytes
from console.kafka.errors import KafkaOperationError

TP = tuple[str, int]
K = TypeVar("K")
# broker -> {partition: (size bytes, offset lag, ...)} or None when the broker is unknown / down
BrokerReplicas = Mapping[int, Mapping[TP, Sequence[int]] | None]

IN_SYNC = "In sync"
UNKNOWN_BROKER = "Unknown broker"
NOT_HOSTED = "Broker does not host this partition"
UNKNOWN_PARTITION = "Unknown partition"


def behind_text(bytes_behind: int, offset_lag: int) -> str:
    if offset_lag > 0:
        return f"Behind: ~{offset_lag} messages / {human_bytes(bytes_behind)}"
    return f"Behind: {human_bytes(bytes_behind)}"


@dataclass(frozen=True)
class PartitionProgress:
    """Progress of one partition: bytes to copy, bytes copied and the state of each target replica."""

    bytes_total: int
    bytes_done: int
    replicas: tuple[dict, ...]
    known: bool  # some broker hosts the partition


def partition_progress(
    tp: TP, original: Sequence[int], target: Sequence[int], in_progress: bool, logs: BrokerReplicas
) -> PartitionProgress:
    """Bytes copied by the new replicas against the leader's size, and each target replica's state.

    The leader's size is the largest log among the original replicas (the leader has every
    record the others have); new replicas copy up to it. A replica level with the leader is in
    sync whether or not Kafka still lists the reassignment (``in_progress``).
    """
    total, done, rows, known = _measure(tp, original, target, logs)
    return PartitionProgress(total, done, tuple(replica_dicts(rows)), known)


class LiveEntry(NamedTuple):
    """One moving partition in the poller's compact form (10,000s are written every cycle):
    ``replicas`` are ``[broker, status, bytes, new]`` lists, which ``replica_dicts`` turns into rows.
    Stored as a JSON list; ``reassignment/store.py`` alone reads and writes it."""

    bytes_total: int
    bytes_done: int
    replicas: list


def live_entry(tp: TP, original: Sequence[int], target: Sequence[int], logs: BrokerReplicas) -> LiveEntry:
    total, done, rows, _known = _measure(tp, original, target, logs)
    return LiveEntry(total, done, rows)


REPLICA_KEYS = ("broker", "status", "bytes", "new")


def replica_dicts(rows: Iterable) -> list[dict]:
    """Compact replica states -> ``{broker, status, bytes, new}`` rows (rows already dicts pass)."""
    return [r if isinstance(r, dict) else dict(zip(REPLICA_KEYS, r, strict=True)) for r in rows]


def _measure(
    tp: TP, original: Sequence[int], target: Sequence[int], logs: BrokerReplicas
) -> tuple[int, int, list[list], bool]:
    # Once per moving partition in every poll cycle: no per-replica temporaries.
    leader_size = 0
    known = False
    for b in original:
        broker_logs = logs.get(b)
        found = broker_logs.get(tp) if broker_logs else None
        if found is not None:
            known = True
            size = int(found[0])
            if size > leader_size:
                leader_size = size
    adding = [b for b in target if b not in original]
    total = leader_size * len(adding)
    done = 0
    rows = []
    for b in target:
        new = b in adding
        broker_logs = logs.get(b, None)
        if broker_logs is None:
            rows.append([b, UNKNOWN_BROKER, 0, new])
            continue
        found = broker_logs.get(tp)
        if found is None:
            status = NOT_HOSTED if known or new else UNKNOWN_PARTITION
            rows.append([b, status, 0, new])
            continue
        known = True
        size, lag = int(found[0]), int(found[1])
        if new:
            done += min(size, leader_size) if leader_size else size
        behind = leader_size - size
        rows.append([b, IN_SYNC if behind <= 0 else behind_text(behind, lag), size, new])
    if not known:
        for r in rows:
            if r[1] == NOT_HOSTED:
                r[1] = UNKNOWN_PARTITION
    return total, min(done, total) if total else done, rows, known


def hosts(moves: Iterable[tuple[K, Sequence[int], Sequence[int]]]) -> dict[int, list[K]]:
    """{broker: partitions it may host} for ``(partition, original, target)`` moves, brokers sorted.

    A poll asks each broker's DescribeLogDirs only about these: the original and target
    replicas are the only brokers whose logs ``partition_progress`` reads.
    """
    out: dict[int, list[K]] = {}
    for tp, original, target in moves:
        for b in original:
            out.setdefault(b, []).append(tp)
        for b in target:
            if b not in original:
                out.setdefault(b, []).append(tp)
    return dict(sorted(out.items()))


def flatten_logs(logs: Mapping[int, object]) -> dict[int, Mapping[TP, Sequence[int]] | None]:
    """DescribeLogDirs answers -> {broker: {partition: (size, lag, ...)}} (None: broker did not answer).

    The gateway's replica entries are ``(size, offset_lag, is_future)`` tuples keyed by partitions
    that equal ``(topic, partition)``: a log dir without future replicas is taken as it is (a
    poll reads 10,000s of them); future replicas (a move between a broker's own dirs) are left out.
    """
    out: dict[int, Mapping[TP, Sequence[int]] | None] = {}
    for broker, dirs in logs.items():
        if isinstance(dirs, KafkaOperationError):
            out[broker] = None
            continue
        found: dict[TP, Sequence[int]] = {}
        for d in dirs:
            replicas = d.replicas
            if any(info[2] for info in replicas.values()):
                found.update((tp, info) for tp, info in replicas.items() if not info[2])
            elif len(dirs) == 1:
                found = replicas
            else:
                found.update(replicas)
        out[broker] = found
    return out


def rate_and_eta(
    done_now: int, done_before: int, seconds: float, remaining: int, previous_rate: float = 0.0
) -> tuple[float, float | None]:
    """Copy rate (bytes/s, smoothed) and seconds left (None when nothing is moving yet)."""
    rate = previous_rate
    if seconds > 0:
        sample = max(0, done_now - done_before) / seconds
        rate = sample if previous_rate <= 0 else 0.5 * previous_rate + 0.5 * sample
    if remaining <= 0:
        return rate, 0.0
    return rate, (remaining / rate if rate > 0 else None)
