"""The balance planner on 100,000 partitions of a skewed 30-broker cluster.

The cluster (3 racks, RF 3) puts five times more replicas on brokers 1-10 than on the others,
with log-normal partition sizes. Goals: under 10 s, and bytes moved within 10% of the planner's
own stated lower bound. The printed ratio is the worse of elapsed/10 s and moved/(1.1 x bound),
so ``ratio<=1.0`` means both goals hold. Prints ``RESULT planner ratio=<x> goal<=1.0`` last.
"""

from __future__ import annotations

import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BROKERS = 30
TOPICS = 100
PARTITIONS_PER_TOPIC = 1000


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


def main() -> None:
    from console.reassignment import planner
    from console.reassignment.balance import balance_plan

    assignment, sizes, racks = skewed_cluster()
    start = time.perf_counter()
    result = balance_plan(assignment, sizes, racks)
    elapsed = time.perf_counter() - start
    for tp, reps in result.plan.items():
        assert len(set(reps)) == len(reps) == len(assignment[tp]), tp
        assert planner.rack_spread_ok(reps, racks), tp
    avg = sum(result.after.values()) / BROKERS
    print(f"{len(assignment)} partitions, {len(result.plan)} changed, planned in {elapsed:.2f}s")
    print(
        f"bytes to move {result.bytes_to_move:,} vs lower bound {result.lower_bound:,} "
        f"({result.bytes_to_move / max(result.lower_bound, 1):.4f}x)"
    )
    print(
        f"per-broker bytes / average: before {min(result.before.values()) / avg:.2f}..{max(result.before.values()) / avg:.2f}"
        f", after {min(result.after.values()) / avg:.2f}..{max(result.after.values()) / avg:.2f}"
    )
    print(
        f"preferred leaders per broker: before {min(result.leaders_before.values())}..{max(result.leaders_before.values())}"
        f", after {min(result.leaders_after.values())}..{max(result.leaders_after.values())}"
    )
    ratio = max(elapsed / 10.0, result.bytes_to_move / (1.1 * max(result.lower_bound, 1)))
    print(f"RESULT planner ratio={ratio:.2f} goal<=1.0")


if __name__ == "__main__":
    main()
