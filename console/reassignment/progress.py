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
# Level with the leader's log but not (yet) in the ISR: Kafka adds it once the leader's
# AlterPartition round trip is done; "In sync" is kept for replicas Kafka lists in the ISR.
CAUGHT_UP = "Caught up, joining ISR"
# The broker did not answer DescribeLogDirs: down, fenced or unreachable from the console.
UNKNOWN_BROKER = "Broker not reachable (down or fenced)"
NOT_HOSTED = "Broker does not host this partition"
NOT_STARTED = "Not started: the broker has not created the replica yet"
UNKNOWN_PARTITION = "Unknown partition"
ESTIMATE_NOTE = "messages estimated from the leader's offsets and size"

# (log start offset, log end offset) of a partition's leader, from ListOffsets earliest/latest
Offsets = Mapping[TP, Sequence[int]]


def messages_behind(bytes_behind: int, leader_size: int, offsets: Sequence[int] | None) -> int | None:
    """How many messages ``bytes_behind`` is, from the leader's record count and size (an estimate).

    Kafka's DescribeLogDirs reports an offset lag of 0 for a follower catching up (it fills the
    lag in only for future replicas moving between a broker's log dirs), so the count comes
    from the leader: (end - start) records in ``leader_size`` bytes. None when unknown.
    """
    if not offsets or leader_size <= 0 or bytes_behind <= 0:
        return None
    start, end = int(offsets[0]), int(offsets[1])
    records = end - start
    if records <= 0:
        return None
    return max(1, round(bytes_behind * records / leader_size))


def behind_text(bytes_behind: int, offset_lag: int, estimate: int | None = None) -> str:
    """``Behind: ~N messages / X MB``: N is Kafka's offset lag when it gives one, else the estimate."""
    count = offset_lag if offset_lag > 0 else estimate
    if count:
        return f"Behind: ~{count:,} messages / {human_bytes(bytes_behind)}"
    return f"Behind: {human_bytes(bytes_behind)}"


def mark_in_sync(rows: Iterable[list], isr: Sequence[int] | None) -> None:
    """Caught-up replicas Kafka lists in the ISR become "In sync" (rows are compact, changed in place)."""
    if not isr:
        return
    for row in rows:
        if row[1] == CAUGHT_UP and row[0] in isr:
            row[1] = IN_SYNC


def caught_up(rows: Iterable) -> bool:
    """Whether some replica of the partition waits for the ISR (its ISR is worth reading)."""
    return any((r[1] if not isinstance(r, dict) else r["status"]) == CAUGHT_UP for r in rows)


@dataclass(frozen=True)
class PartitionProgress:
    """Progress of one partition: bytes to copy, bytes copied and the state of each target replica."""

    bytes_total: int
    bytes_done: int
    replicas: tuple[dict, ...]
    known: bool  # some broker hosts the partition


def partition_progress(
    tp: TP,
    original: Sequence[int],
    target: Sequence[int],
    in_progress: bool,
    logs: BrokerReplicas,
    *,
    isr: Sequence[int] | None = None,
    offsets: Offsets | None = None,
) -> PartitionProgress:
    """Bytes copied by the new replicas against the leader's size, and each target replica's state.

    The leader's size is the largest log among the original replicas (the leader has every
    record the others have); new replicas copy up to it. A replica level with the leader is
    "In sync" once ``isr`` lists it, "Caught up, joining ISR" before that.
    """
    total, done, rows, known, _level = _measure(tp, original, target, logs, offsets)
    mark_in_sync(rows, isr)
    return PartitionProgress(total, done, tuple(replica_dicts(rows)), known)


class LiveEntry(NamedTuple):
    """One moving partition in the poller's compact form (10,000s are written every cycle):
    ``replicas`` are ``[broker, status, bytes, new]`` lists, which ``replica_dicts`` turns into rows.
    Stored as a JSON list; ``reassignment/store.py`` alone reads and writes it."""

    bytes_total: int
    bytes_done: int
    replicas: list
    percent: int = 0  # the highest percentage shown for this partition so far (see ``at_least``)

    def shown(self, previous: int) -> LiveEntry:
        """This entry with a percentage no lower than ``previous``."""
        now = round(100 * self.bytes_done / self.bytes_total) if self.bytes_total else 0
        # tuple.__new__: ``_replace`` costs more than the arithmetic (10,000 entries a cycle)
        return tuple.__new__(LiveEntry, (self[0], self[1], self[2], at_least(previous, now)))


def live_entry(
    tp: TP,
    original: Sequence[int],
    target: Sequence[int],
    logs: BrokerReplicas,
    offsets: Offsets | None = None,
) -> LiveEntry:
    total, done, rows, _known, _level = _measure(tp, original, target, logs, offsets)
    return LiveEntry(total, done, rows)


def shown_entry(
    tp: TP,
    original: Sequence[int],
    target: Sequence[int],
    logs: BrokerReplicas,
    offsets: Offsets | None,
    previous: int,
) -> tuple[LiveEntry, bool]:
    """``live_entry(...).shown(previous)`` and whether a replica waits for the ISR (``caught_up``
    of its replicas), in one pass: once per moving partition every poll cycle."""
    total, done, rows, _known, level = _measure(tp, original, target, logs, offsets)
    now = round(100 * done / total) if total else 0
    return tuple.__new__(LiveEntry, (total, done, rows, at_least(previous, now))), level


REPLICA_KEYS = ("broker", "status", "bytes", "new")


def replica_dicts(rows: Iterable) -> list[dict]:
    """Compact replica states -> ``{broker, status, bytes, new}`` rows (rows already dicts pass)."""
    return [r if isinstance(r, dict) else dict(zip(REPLICA_KEYS, r, strict=True)) for r in rows]


def _measure(
    tp: TP,
    original: Sequence[int],
    target: Sequence[int],
    logs: BrokerReplicas,
    offsets: Offsets | None = None,
) -> tuple[int, int, list[list], bool, bool]:
    """(bytes to copy, bytes copied, replica rows, some broker hosts it, some replica is level
    with the leader: "Caught up, joining ISR" until the ISR is read)."""
    # Once per moving partition in every poll cycle (10,000s): no per-replica temporaries, each
    # broker's log looked up once, no helper call for a replica level with the leader.
    # The leader's size: the largest log among the replicas. While moving that is an original
    # replica; once Kafka has finished (seen late, e.g. after the console was down) the original
    # replicas may be gone and the new ones hold the whole log.
    get = logs.get
    leader_size = 0
    known = False
    for b in original:
        broker_logs = get(b)
        if broker_logs:
            found = broker_logs.get(tp)
            if found is not None:
                known = True
                size = int(found[0])
                if size > leader_size:
                    leader_size = size
    held = []  # (broker, its logs, the replica found, whether it is new) of each target replica
    adding = 0
    for b in target:
        broker_logs = get(b)
        found = broker_logs.get(tp) if broker_logs else None
        if found is not None:
            known = True
            size = int(found[0])
            if size > leader_size:
                leader_size = size
        new = b not in original
        if new:
            adding += 1
        held.append((b, broker_logs, found, new))
    total = leader_size * adding
    done = 0
    level = False
    rows = []
    append = rows.append
    for b, broker_logs, found, new in held:
        if found is not None:
            size = int(found[0])
            if new:
                done += size if not leader_size or size < leader_size else leader_size
            behind = leader_size - size
            if behind <= 0:
                level = True
                append([b, CAUGHT_UP, size, new])
                continue
            estimate = messages_behind(behind, leader_size, offsets.get(tp) if offsets else None)
            append([b, behind_text(behind, int(found[1]), estimate), size, new])
        elif broker_logs is None:
            append([b, UNKNOWN_BROKER, 0, new])
        else:
            append([b, (NOT_STARTED if new else NOT_HOSTED) if known or new else UNKNOWN_PARTITION, 0, new])
    if not known:
        for r in rows:
            if r[1] in (NOT_HOSTED, NOT_STARTED):
                r[1] = UNKNOWN_PARTITION
    return total, (done if done < total else total) if total else done, rows, known, level


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


MIN_RATE_WINDOW_S = 30.0  # shorter windows swing with every fetch
EXPECTED_POLL_S = 1.5  # a poll cycle about every second, picked up by beat's 1 s tick: up to ~1.5 s apart
MIN_RATE_SPAN_FRACTION = 1 / 6  # a rate needs samples spanning at least this share of the window


def smoothed_rate(
    samples: Sequence[Sequence[float]], now: float, done: int, window_s: float
) -> tuple[list[list[float]], float | None]:
    """The copy rate over the last ``window_s`` seconds, from ``[time, bytes done]`` samples.

    Returns the samples to keep (this one appended, those older than the window dropped except
    the newest of them, which anchors the window's start) and the rate in bytes/s: bytes copied
    between the window's first sample and now over the time between them. A single poll's
    bytes are noisy (DescribeLogDirs sizes move in fetch-sized steps), so no rate is given
    (None: "measuring") until the samples span a sixth of the window. A gap longer than the
    window (the console was down) starts over: a rate across the gap would be meaningless.
    """
    kept = [[float(t), float(d)] for t, d in samples if t < now]
    if kept and now - kept[-1][0] > window_s:
        kept = []
    kept.append([float(now), float(done)])
    start = now - window_s
    first = 0
    while first + 1 < len(kept) and kept[first + 1][0] <= start:
        first += 1
    kept = kept[first:]
    span = now - kept[0][0]
    if span < window_s * MIN_RATE_SPAN_FRACTION:
        return kept, None
    return kept, max(0.0, (done - kept[0][1]) / span)


def rate_window(setting: float) -> float:
    """The rate's averaging window: the REASSIGN_RATE_WINDOW_S setting, never under 30 s."""
    return max(MIN_RATE_WINDOW_S, float(setting))


def eta_seconds(remaining: int, rate: float | None) -> float | None:
    """Seconds left at ``rate`` (0 when nothing remains; None while the rate is unknown or zero)."""
    if remaining <= 0:
        return 0.0
    return remaining / rate if rate else None


def staleness(age_s: float | None, poll_interval_s: float, missed: int = 3) -> bool:
    """Whether progress ``age_s`` old means ``missed`` or more polls did not happen."""
    return age_s is not None and age_s > missed * poll_interval_s + poll_interval_s / 2


def at_least(previous: int, now: int) -> int:
    """A progress percentage that never goes backwards (a growing leader log lowers done/total)."""
    return max(previous, min(100, now))


def after_cancel(
    original: Sequence[int], target: Sequence[int], replicas: Sequence[int] | None
) -> tuple[str, str]:
    """What a partition's replicas after a cancel are, compared with its original and its target:
    ``reverted`` (the original, in order), ``reordered`` (the original brokers in another order:
    Kafka keeps the replica list of the move without the brokers it was adding, and that list is
    the target followed by the removed brokers in ascending order), ``target`` (the move had
    finished), ``other``, or ``unknown`` (not read); with the sentence that says so."""
    original, target = list(original), list(target)
    if replicas is None:
        return "unknown", "Kafka's replicas could not be read after the cancel"
    replicas = list(replicas)
    if replicas == original:
        return "reverted", f"reverted to the original replicas {original}"
    if replicas == target:
        return "target", "completed before the cancel"
    if sorted(replicas) == sorted(original):
        leader = (
            f"preferred leader changed from {original[0]} to {replicas[0]}"
            if replicas[0] != original[0]
            else f"the preferred leader is still {replicas[0]}"
        )
        return "reordered", (
            f"Kafka restored the original brokers in another order: {replicas}, not {original} ({leader})"
        )
    return "other", f"after the cancel Kafka has {replicas} (original {original}, target {target})"
