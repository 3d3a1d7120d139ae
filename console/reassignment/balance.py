"""The balance planner (pure): even out per-broker bytes and preferred-leader counts, moving few bytes.

Bytes: every broker should end within ``tolerance`` of the average. Each moved byte lowers one
broker's load and raises another's, so no plan can move fewer bytes than the larger of the total
excess above the band and the total deficit below it — that is the stated lower bound. The
greedy moves, from the most loaded broker, the largest replica that fits its excess into the
least loaded broker that may take it (no second replica of the partition there, rack spread
kept, and the receiver ends below the donor's load before the move, so no move makes the fullest
broker fuller); replicas keep their position so a moved preferred leader stays preferred.

Leaders: preferred-leader counts are evened out by reordering replicas, which copies no bytes
(a preferred election afterwards makes it effective).
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from console.reassignment.planner import TP

DEFAULT_TOLERANCE = 0.05  # ±5% of the average bytes per broker
LEADER_TOLERANCE = 0.10


@dataclass(frozen=True)
class BalanceResult:
    plan: dict[TP, tuple[int, ...]]
    bytes_to_move: int
    lower_bound: int
    before: dict[int, int]
    after: dict[int, int]
    leaders_before: dict[int, int]
    leaders_after: dict[int, int]


def bytes_per_broker(
    assignment: Mapping[TP, Sequence[int]], sizes: Mapping[TP, int], brokers
) -> dict[int, int]:
    load = dict.fromkeys(brokers, 0)
    for tp, reps in assignment.items():
        s = int(sizes.get(tp, 0))
        for b in reps:
            load[b] = load.get(b, 0) + s
    return load


def leaders_per_broker(assignment: Mapping[TP, Sequence[int]], brokers) -> dict[int, int]:
    counts = dict.fromkeys(brokers, 0)
    for reps in assignment.values():
        if reps:
            counts[reps[0]] = counts.get(reps[0], 0) + 1
    return counts


def lower_bound(load: Mapping[int, int], tolerance: float) -> int:
    """Bytes any plan must move to bring every broker within the band around the average."""
    if not load:
        return 0
    avg = sum(load.values()) / len(load)
    hi, lo = avg * (1 + tolerance), avg * (1 - tolerance)
    over = sum(max(0.0, v - hi) for v in load.values())
    under = sum(max(0.0, lo - v) for v in load.values())
    return int(math.ceil(max(over, under)))


def balance_plan(
    assignment: Mapping[TP, Sequence[int]],
    sizes: Mapping[TP, int],
    racks: Mapping[int, str | None],
    tolerance: float = DEFAULT_TOLERANCE,
    leader_tolerance: float = LEADER_TOLERANCE,
) -> BalanceResult:
    brokers = sorted(racks)
    work = {tp: list(reps) for tp, reps in assignment.items()}
    before = bytes_per_broker(assignment, sizes, brokers)
    load = dict(before)
    bound = lower_bound(before, tolerance)
    avg = sum(load.values()) / max(len(brokers), 1)
    hi, lo = avg * (1 + tolerance), avg * (1 - tolerance)
    # Per broker: its replicas sorted by size (ascending) for "largest that fits" searches.
    hosted: dict[int, list[tuple[int, TP]]] = defaultdict(list)
    for tp, reps in work.items():
        for b in reps:
            hosted[b].append((int(sizes.get(tp, 0)), tp))
    for b in hosted:
        hosted[b].sort()
    moved_bytes = 0
    changed: set[TP] = set()
    multi_rack = len({r for r in racks.values() if r}) > 1
    for _ in range(len(work) * 2 + 10):
        receivers = sorted((b for b in brokers if load[b] < hi), key=load.__getitem__)
        pick = None
        top = max(brokers, key=load.__getitem__)
        for donor in [top] + sorted((b for b in brokers if b != top), key=lambda b: -load[b]):
            need = max(load[donor] - hi, lo - load[receivers[0]] if receivers else 0)
            if load[donor] <= avg or need <= 0:
                break
            pick = _largest_fit(hosted[donor], need, work, donor, receivers, load, hi, lo, racks, multi_rack)
            if pick is not None:
                break
        if pick is None:
            break
        (size, tp), receiver, index = pick
        reps = work[tp]
        reps[reps.index(donor)] = receiver
        load[donor] -= size
        load[receiver] += size
        moved_bytes += size
        changed.add(tp)
        del hosted[donor][index]  # by position: list.remove would compare tuples all the way
        bisect.insort(hosted[receiver], (size, tp))
    leaders_before = leaders_per_broker(assignment, brokers)
    changed |= _balance_leaders(work, brokers, leader_tolerance)
    plan = {tp: tuple(work[tp]) for tp in sorted(changed) if tuple(work[tp]) != tuple(assignment[tp])}
    return BalanceResult(
        plan, moved_bytes, bound, before, load, leaders_before, leaders_per_broker(work, brokers)
    )


def _largest_fit(candidates, need, work, donor, receivers, load, hi, lo, racks, multi_rack):
    """Largest replica on donor not above ``need`` (else the smallest above) that some receiver can take."""
    if not candidates or not receivers:
        return None
    i = bisect.bisect_right(candidates, (int(need), ("\uffff", 1 << 30)))
    order = list(range(i - 1, max(-1, i - 200), -1)) + list(range(i, min(len(candidates), i + 50)))
    floor = min(lo, load[donor] - need)
    for j in order:
        size, tp = candidates[j]
        if size <= 0 or load[donor] - size < floor:
            continue
        reps = work[tp]
        # The rack spread holds if the new broker shares the donor's rack or brings a rack not used yet.
        used = {racks.get(b) for b in reps if b != donor} if multi_rack else ()
        for r in receivers:
            if load[r] + size > hi or load[r] + size >= load[donor]:
                # Receivers are sorted by load: the next ones are fuller. A move must leave the
                # receiver below where the donor was, or it makes the pair less even (and can
                # make the fullest broker fuller still).
                break
            if r == donor or r in reps:
                continue
            if multi_rack and racks.get(r) != racks.get(donor) and racks.get(r) in used:
                continue
            return (size, tp), r, j
    return None


def _balance_leaders(work: dict[TP, list[int]], brokers: Sequence[int], tolerance: float) -> set[TP]:
    """Reorder replicas so no broker is preferred leader of many more partitions than average."""
    counts = leaders_per_broker(work, brokers)
    if not brokers:
        return set()
    cap = math.ceil(len(work) / len(brokers) * (1 + tolerance))
    changed: set[TP] = set()
    for tp, reps in work.items():
        first = reps[0] if reps else None
        if first is None or counts[first] <= cap or len(reps) < 2:
            continue
        j = min(range(1, len(reps)), key=lambda k: counts[reps[k]])
        if counts[reps[j]] + 1 >= counts[first]:
            continue
        counts[first] -= 1
        counts[reps[j]] += 1
        reps[0], reps[j] = reps[j], reps[0]
        changed.add(tp)
    return changed
