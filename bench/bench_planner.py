"""The balance planner on 100,000 partitions of a skewed 30-broker cluster: balanced, few bytes, fast.

The cluster (3 racks, RF 3) puts five times more replicas on brokers 1-10 than on the others,
with log-normal partition sizes. The planner's promise (``console.reassignment.balance``): every
broker within +-5 % of the average bytes, no broker preferred leader of more than 10 % above the average count,
moving few bytes.

Everything is checked here from the input and the plan alone, with the bench's own code (none of
the planner's figures are trusted):

* the plan is valid: every changed partition keeps its replica count, no broker twice, one
  replica per rack;
* it is balanced: the bench applies the plan to the assignment, recomputes every broker's bytes
  and preferred-leader count, and fails unless every broker is inside the bytes band (+-5 %) and
  under the leader cap (average + 10 %, rounded up: the planner promises a cap, not a floor, on
  leaders; brokers under average - 10 % are printed);
* the floor: the fewest bytes any plan could move to reach the bytes band. Each moved replica
  takes its bytes off one broker and puts them on another, so at least max(total excess above
  the band, total deficit below it) bytes must move; the bench computes that from the input.
  The bytes the plan moves are recomputed from the plan (the size of every replica placed on a
  broker that did not hold it).

RESULT ratio = bytes moved / floor (goal <= 1.1: within 10 % of the least any plan could move).
Also gated: the median of 5 runs of the planner under 10 s (min / median / max printed), and the
balance check. Exit 1 on any miss. Prints ``RESULT planner ratio=<moved/floor> goal<=1.1`` last.
"""

from __future__ import annotations

import gc
import math
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import gate  # noqa: E402

BROKERS = 30
TOPICS = 100
PARTITIONS_PER_TOPIC = 1000
RUNS = 5
BYTES_TOLERANCE = 0.05
LEADER_TOLERANCE = 0.10
TIME_GOAL_S = 10.0


def skewed_cluster(seed: int = 1):
    rng = random.Random(seed)
    racks = {b: f"rack-{b % 3}" for b in range(1, BROKERS + 1)}
    pool = list(racks)
    weights = [5 if b <= 10 else 1 for b in pool]
    assignment, sizes = {}, {}
    for t in range(TOPICS):
        for p in range(PARTITIONS_PER_TOPIC):
            reps: list[int] = []
            while len(reps) < 3:
                b = rng.choices(pool, weights)[0]
                if b not in reps and racks[b] not in {racks[x] for x in reps}:
                    reps.append(b)
            assignment[(f"t{t:03d}", p)] = tuple(reps)
            sizes[(f"t{t:03d}", p)] = int(rng.lognormvariate(16, 1))
    return assignment, sizes, racks


def loads(assignment, sizes) -> tuple[dict[int, int], dict[int, int]]:
    """Bytes and preferred-leader count per broker (the bench's own arithmetic)."""
    by_bytes = dict.fromkeys(range(1, BROKERS + 1), 0)
    leaders = dict.fromkeys(range(1, BROKERS + 1), 0)
    for tp, reps in assignment.items():
        for b in reps:
            by_bytes[b] += sizes[tp]
        leaders[reps[0]] += 1
    return by_bytes, leaders


def floor_bytes(by_bytes: dict[int, int]) -> int:
    avg = sum(by_bytes.values()) / len(by_bytes)
    hi, lo = avg * (1 + BYTES_TOLERANCE), avg * (1 - BYTES_TOLERANCE)
    excess = sum(v - hi for v in by_bytes.values() if v > hi)
    deficit = sum(lo - v for v in by_bytes.values() if v < lo)
    return math.ceil(max(excess, deficit))


def main() -> None:
    from console.reassignment.balance import balance_plan

    assignment, sizes, racks = skewed_cluster()
    before_bytes, before_leaders = loads(assignment, sizes)
    floor = floor_bytes(before_bytes)
    gc.collect()
    gc.freeze()
    times, result = [], None
    for _ in range(RUNS):
        start = time.perf_counter()
        result = balance_plan(assignment, sizes, racks)
        times.append(time.perf_counter() - start)

    problems = []
    moved = 0
    for tp, reps in result.plan.items():
        old = assignment[tp]
        if len(reps) != len(old) or len(set(reps)) != len(reps):
            problems.append(f"{tp}: replicas {reps} (was {old})")
        if len({racks[b] for b in reps}) != len(reps):
            problems.append(f"{tp}: two replicas on one rack {reps}")
        moved += sizes[tp] * len(set(reps) - set(old))
    after = {**assignment, **result.plan}
    after_bytes, after_leaders = loads(after, sizes)
    avg = sum(after_bytes.values()) / BROKERS
    hi, lo = avg * (1 + BYTES_TOLERANCE), avg * (1 - BYTES_TOLERANCE)
    lavg = sum(after_leaders.values()) / BROKERS
    lhi, llo = math.ceil(lavg * (1 + LEADER_TOLERANCE)), math.floor(lavg * (1 - LEADER_TOLERANCE))
    off_bytes = {b: v / avg for b, v in after_bytes.items() if not lo <= v <= hi}
    # The planner's leader promise is a cap (no broker leads many more than the average); brokers
    # below the lower band are printed, not failed.
    off_leaders = {b: v for b, v in after_leaders.items() if v > lhi}
    low_leaders = {b: v for b, v in after_leaders.items() if v < llo}
    print(f"{len(assignment)} partitions, {len(result.plan)} changed")
    print(
        f"planner seconds over {RUNS} runs: min {min(times):.2f} median {statistics.median(times):.2f} max {max(times):.2f}"
    )
    print(
        f"per-broker bytes / average: before {min(before_bytes.values()) / avg:.3f}..{max(before_bytes.values()) / avg:.3f}, "
        f"after {min(after_bytes.values()) / avg:.3f}..{max(after_bytes.values()) / avg:.3f} (band {1 - BYTES_TOLERANCE}..{1 + BYTES_TOLERANCE})"
    )
    print(
        f"preferred leaders per broker: before {min(before_leaders.values())}..{max(before_leaders.values())}, "
        f"after {min(after_leaders.values())}..{max(after_leaders.values())} (band {llo}..{lhi})"
    )
    print(
        f"bytes moved (recomputed from the plan) {moved:,}; planner's own figure {result.bytes_to_move:,}; "
        f"floor {floor:,} (planner's stated bound {result.lower_bound:,})"
    )
    balanced = not problems and not off_bytes and not off_leaders
    if problems:
        print("INVALID PLAN:", *problems[:10], sep="\n  ")
    if off_bytes:
        print(f"NOT BALANCED (bytes / average outside the band): {off_bytes}")
    if off_leaders:
        print(f"NOT BALANCED (preferred leaders above the cap {lhi}): {off_leaders}")
    if low_leaders:
        print(f"note (not gated): brokers below {llo} preferred leaders (-10 %): {low_leaders}")
    gate(
        "planner",
        moved / max(floor, 1),
        1.1,
        [
            ("planner median seconds (< 10 s)", statistics.median(times), TIME_GOAL_S),
            ("valid and balanced (0 = yes)", 0.0 if balanced else 1.0, 0.0),
        ],
    )


if __name__ == "__main__":
    main()
