"""Pure planners that build a plan from an operator's intent: move off brokers, spread onto new
brokers, set the replication factor (rack-aware, preferred leader kept first).

Plain maps in, plain maps out, as ``planner.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from console.reassignment.planner import TP, Assignment, rack_spread_ok


def replica_counts(assignment: Assignment, brokers: Iterable[int]) -> Counter[int]:
    counts: Counter[int] = Counter(dict.fromkeys(brokers, 0))
    for reps in assignment.values():
        counts.update(reps)
    return counts


def _pick(
    candidates: Iterable[int], keep: Sequence[int], racks: Mapping[int, str | None], load: Counter[int]
) -> int | None:
    """Least-loaded candidate not in ``keep``, preferring racks ``keep`` does not use yet."""
    used_racks = {racks.get(b) for b in keep}
    options = [b for b in candidates if b not in keep]
    if not options:
        return None
    return min(options, key=lambda b: (racks.get(b) in used_racks and racks.get(b) is not None, load[b], b))


def _select(assignment: Assignment, partitions: Iterable[TP] | None) -> list[TP]:
    return sorted(assignment) if partitions is None else sorted(tp for tp in partitions if tp in assignment)


def move_off_brokers(
    current: Assignment,
    racks: Mapping[int, str | None],
    remove: Iterable[int],
    partitions: Iterable[TP] | None = None,
) -> dict[TP, tuple[int, ...]]:
    """Replace replicas on ``remove`` with the least-loaded other brokers; positions (leader first) kept."""
    gone = set(remove)
    pool = [b for b in sorted(racks) if b not in gone]
    load = replica_counts(current, pool)
    out: dict[TP, tuple[int, ...]] = {}
    for tp in _select(current, partitions):
        reps = list(current[tp])
        if not gone.intersection(reps):
            continue
        for i, b in enumerate(reps):
            if b in gone:
                keep = [r for r in reps if r not in gone]
                new = _pick(pool, keep, racks, load)
                if new is None:
                    raise ValueError(f"Not enough brokers left to keep {tp[0]}-{tp[1]} at RF {len(reps)}.")
                reps[i] = new
                load[new] += 1
        out[tp] = tuple(reps)
    return out


def spread_onto(
    current: Assignment,
    racks: Mapping[int, str | None],
    new_brokers: Iterable[int],
    partitions: Iterable[TP] | None = None,
) -> dict[TP, tuple[int, ...]]:
    """Move replicas from the most loaded brokers onto ``new_brokers`` until replica counts even out."""
    targets = [b for b in new_brokers if b in racks]
    if not targets:
        raise ValueError("Name at least one known broker to spread onto.")
    selected = _select(current, partitions)
    load = replica_counts({tp: current[tp] for tp in selected}, racks)
    fair = sum(load.values()) / max(len(racks), 1)
    work = {tp: list(current[tp]) for tp in selected}
    changed: set[TP] = set()
    for tp in selected:
        reps = work[tp]
        for i in range(len(reps) - 1, -1, -1):  # move followers first; keep the preferred leader
            b = reps[i]
            if b in targets or load[b] <= fair:
                continue
            keep = reps[:i] + reps[i + 1 :]
            new = _pick([t for t in targets if load[t] + 1 <= fair + 0.5], keep, racks, load)
            if new is None:
                continue
            if not rack_spread_ok(keep + [new], racks) and rack_spread_ok(reps, racks):
                continue
            reps[i] = new
            load[b] -= 1
            load[new] += 1
            changed.add(tp)
            break
    return {tp: tuple(work[tp]) for tp in sorted(changed)}


def set_replication_factor(
    current: Assignment, racks: Mapping[int, str | None], rf: int, partitions: Iterable[TP] | None = None
) -> dict[TP, tuple[int, ...]]:
    """Grow (least-loaded, rack-aware) or shrink (drop the last replicas, keeping racks) each partition."""
    if rf < 1:
        raise ValueError("The replication factor must be at least 1.")
    if rf > len(racks):
        raise ValueError(f"Replication factor {rf} needs {rf} brokers; the cluster has {len(racks)}.")
    load = replica_counts(current, racks)
    out: dict[TP, tuple[int, ...]] = {}
    for tp in _select(current, partitions):
        reps = list(current[tp])
        while len(reps) < rf:
            new = _pick(sorted(racks), reps, racks, load)
            assert new is not None
            reps.append(new)
            load[new] += 1
        while len(reps) > rf:
            drop = _drop_choice(reps, racks, load)
            reps.remove(drop)
            load[drop] -= 1
        if tuple(reps) != tuple(current[tp]):
            out[tp] = tuple(reps)
    return out


def _drop_choice(reps: Sequence[int], racks: Mapping[int, str | None], load: Counter[int]) -> int:
    """The follower whose removal keeps the rack spread, most loaded first; never the preferred leader."""
    followers = list(reps[1:])
    fine = [b for b in followers if rack_spread_ok([r for r in reps if r != b], racks)]
    return max(fine or followers, key=lambda b: (load[b], b))
