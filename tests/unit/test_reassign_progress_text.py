"""The poller's one pass over a partition's replicas (``progress._measure``) gives each replica the
status and "Behind" text that ``behind_text`` and ``messages_behind`` give it one replica at a time:
random sizes, offset lags, leader offsets, brokers that did not answer and partitions no broker
hosts."""

from __future__ import annotations

import random

from console.reassignment.progress import (
    CAUGHT_UP,
    NOT_HOSTED,
    NOT_STARTED,
    UNKNOWN_BROKER,
    UNKNOWN_PARTITION,
    behind_text,
    live_entry,
    messages_behind,
)


def _reference(tp, original, target, logs, offsets):
    """The replica rows as the helpers write them, one replica at a time."""
    sizes = [int(logs[b][tp][0]) for b in (*original, *target) if logs.get(b) and tp in logs[b]]
    leader = max(sizes, default=0)
    known = bool(sizes)
    rows = []
    for b in target:
        new = b not in original
        found = logs[b].get(tp) if logs.get(b) else None
        if logs.get(b) is None and b in logs and logs[b] is None:
            rows.append([b, UNKNOWN_BROKER, 0, new])
        elif found is None:
            status = (NOT_STARTED if new else NOT_HOSTED) if known else UNKNOWN_PARTITION
            rows.append([b, status, 0, new])
        elif leader - int(found[0]) <= 0:
            rows.append([b, CAUGHT_UP, int(found[0]), new])
        else:
            behind = leader - int(found[0])
            estimate = messages_behind(behind, leader, offsets.get(tp) if offsets else None)
            rows.append([b, behind_text(behind, int(found[1]), estimate), int(found[0]), new])
    return rows


def test_the_inline_behind_text_is_the_helpers_text():
    rng = random.Random(36)
    tp = ("orders", 3)
    seen = set()
    for _ in range(3000):
        brokers = rng.sample(range(1, 9), 5)
        original, target = brokers[:3], [*brokers[:2], *brokers[3 : 3 + rng.randint(1, 2)]]
        logs = {}
        for b in set(original) | set(target):
            roll = rng.random()
            if roll < 0.1:
                logs[b] = None  # did not answer
            elif roll < 0.2:
                logs[b] = {}  # answered, does not host it
            else:
                size = rng.choice([0, 1, 1023, 1024, 5 * 2**20, rng.randint(0, 2**40)])
                lag = rng.choice([0, 0, rng.randint(1, 10**7)])
                logs[b] = {tp: (size, lag)}
        offsets = rng.choice(
            [None, {}, {tp: [0, 0]}, {tp: [5, 3]}, {tp: [rng.randint(0, 100), rng.randint(100, 10**9)]}]
        )
        rows = live_entry(tp, original, target, logs, offsets).replicas
        want = _reference(tp, original, target, logs, offsets)
        if all(logs.get(b) is None for b in {*original, *target}) or not any(
            logs.get(b) and tp in logs[b] for b in {*original, *target}
        ):
            # nothing hosts it: "Unknown partition" for every replica whose broker answered
            want = [
                [b, UNKNOWN_PARTITION if s in (NOT_HOSTED, NOT_STARTED) else s, n, w] for b, s, n, w in want
            ]
        assert rows == want, (original, target, logs, offsets)
        seen.update("Behind: ~" if r[1].startswith("Behind: ~") else r[1].split(":")[0] for r in rows)
    every = {"Behind", "Behind: ~", CAUGHT_UP, UNKNOWN_BROKER, NOT_STARTED.split(":")[0], NOT_HOSTED}
    assert every | {UNKNOWN_PARTITION} <= seen
