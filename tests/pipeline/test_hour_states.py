"""The reports merged from hour states equal the reference on awkward random lakes (no Spark).

Each case draws snapshots at irregular times with empty hours between, topics that appear,
vanish and come back mid-hour or at an hour's first snapshot, offsets that go backwards (a
recreated topic), unknown sizes, groups whose commits move back and forth, and a window that
starts mid-hour or on the hour and ends in a still-open hour. The per-snapshot rollups are built
here in plain Python from the raw rows, each closed hour's states are derived on its own (an hour
never needs another), written to a lake and merged by the same code an hourly run uses.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict

import pyarrow as pa
import pytest

from pipeline import hours, jobs, reference, reports, rollups
from pipeline.reference import HOUR_MS, JobParams

CLUSTER = "prod"
T0 = 1_772_000_000_000 // HOUR_MS * HOUR_MS  # an hour start (2026-02-25)
PARAMS = JobParams(idle_days=0.05, forecast_window_days=0.1, min_history_h=3)


def _lake(rng: random.Random) -> dict[str, list[dict]]:
    stamps, t = [], T0 + rng.randrange(0, HOUR_MS, 60_000)
    while len(stamps) < rng.randint(15, 40):
        stamps.append(t)
        t += rng.choice([60_000, 300_000, 300_000, 900_000, 1_800_000, 3 * HOUR_MS])  # gaps too
    topics = [f"t{i}" for i in range(rng.randint(1, 6))]
    parts, brokers, groups = [], [], []
    ends = defaultdict(int)
    for ts in stamps:
        for topic in topics:
            if rng.random() < 0.2:  # not in this snapshot (deleted, not created yet)
                continue
            for p in range(rng.randint(1, 3)):
                ends[(topic, p)] = max(0, ends[(topic, p)] + rng.randint(-50, 400))
                parts.append(
                    {
                        "ts": ts,
                        "topic": topic,
                        "leader": rng.randint(1, 3),
                        "size_bytes": rng.choice([-1, rng.randint(0, 10_000)]),
                        "log_start_offset": rng.randint(0, 20),
                        "log_end_offset": ends[(topic, p)],
                        "retention_ms": rng.choice([None, 3_600_000, 86_400_000]),
                        "retention_bytes": rng.choice([None, -1, 50_000]),
                    }
                )
            for group in ("g1", "g2"):
                if rng.random() < 0.7:
                    for _ in range(2):  # two partitions
                        groups.append(
                            {
                                "ts": ts,
                                "group": group,
                                "topic": topic,
                                "lag": rng.randint(0, 500),
                                "committed_offset": rng.randint(0, 300),
                            }
                        )
        for broker in (1, 2, 3):
            for log_dir in range(rng.randint(1, 2)):
                brokers.append(
                    {
                        "ts": ts,
                        "broker": broker,
                        "log_dir": f"/d{log_dir}",
                        "size_bytes": rng.choice([None, -1, rng.randint(0, 100_000)]),
                        "total_bytes": rng.choice([None, 1_000_000]),
                        "usable_bytes": rng.choice([None, rng.randint(0, 900_000)]),
                    }
                )
    return {"partitions": parts, "brokers": brokers, "groups": groups}


def _rollups(raw: dict[str, list[dict]]) -> dict[str, pa.Table]:
    """The per-snapshot rollups of raw rows, as the Spark roll-up computes them."""
    topics: dict[tuple, dict] = {}
    leaders: dict[tuple, int] = defaultdict(int)
    for r in raw["partitions"]:
        a = topics.setdefault(
            (r["ts"], r["topic"]),
            dict.fromkeys(("size", "max_part", "end", "start", "partitions"), 0)
            | {"ts": r["ts"], "topic": r["topic"], "retention_ms": None, "retention_bytes": None},
        )
        a["size"] += max(r["size_bytes"], 0)
        a["max_part"] = max(a["max_part"], max(r["size_bytes"], 0))
        a["end"] += max(r["log_end_offset"], 0)
        a["start"] += max(r["log_start_offset"], 0)
        a["partitions"] += 1
        for k in ("retention_ms", "retention_bytes"):
            if r[k] is not None:
                a[k] = r[k] if a[k] is None else max(a[k], r[k])
        leaders[(r["ts"], r["leader"])] += 1
    disk: dict[tuple, dict] = {}
    for b in raw["brokers"]:
        d = disk.setdefault(
            (b["ts"], b["broker"]),
            {
                "ts": b["ts"],
                "broker": b["broker"],
                "size_bytes": 0,
                "total_bytes": None,
                "usable_bytes": None,
            },
        )
        d["size_bytes"] += max(b["size_bytes"] or 0, 0)
        for k in ("total_bytes", "usable_bytes"):
            if b[k] is not None:
                d[k] = (d[k] or 0) + b[k]
    for (ts, broker), d in disk.items():
        d["leaders"] = leaders.get((ts, broker), 0)
    groups: dict[tuple, dict] = {}
    for g in raw["groups"]:
        a = groups.setdefault(
            (g["group"], g["topic"], g["ts"]),
            {"group": g["group"], "topic": g["topic"], "ts": g["ts"], "sum": 0, "max": 0, "committed": 0},
        )
        a["sum"] += g["lag"]
        a["max"] = max(a["max"], g["lag"])
        a["committed"] += g["committed_offset"]
    rows = {"topics": topics, "brokers": disk, "groups": groups}
    return {k: pa.Table.from_pylist(list(v.values()), schema=rollups.SCHEMAS[k]) for k, v in rows.items()}


def _in(table: pa.Table, lo: int, hi: int) -> pa.Table:
    ts = table["ts"].to_pylist()
    return table.take(pa.array([i for i, t in enumerate(ts) if lo <= t < hi], pa.int64()))


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


@pytest.mark.parametrize("seed", range(40))
def test_merged_hour_states_equal_the_reference(seed, tmp_path):
    rng = random.Random(seed)
    raw = _lake(rng)
    first, last = min(r["ts"] for r in raw["partitions"]), max(r["ts"] for r in raw["partitions"])
    since = rng.choice([first // HOUR_MS * HOUR_MS, first + rng.randrange(0, 2 * HOUR_MS, 60_000)])
    until = last + 1
    closed_end = rng.choice([until // HOUR_MS * HOUR_MS, (until // HOUR_MS - 1) * HOUR_MS])
    closed_end = max(closed_end, since // HOUR_MS * HOUR_MS)
    per_snapshot = _rollups(raw)

    # every closed hour rolled up on its own, the rest kept in memory as the run's open part
    hour_starts = sorted({r["ts"] // HOUR_MS * HOUR_MS for rows in raw.values() for r in rows})
    for h in (h for h in hour_starts if h < closed_end):
        one = {k: _in(t, h, h + HOUR_MS) for k, t in per_snapshot.items()}
        rollups.write_hours(tmp_path, CLUSTER, {**one, **hours.derive(one)}, {h: []})
    lo = max(since, closed_end)
    opened = {k: _in(t, lo, until) for k, t in per_snapshot.items()}
    state = {"closed_end": closed_end, "open": {**opened, **hours.derive(opened)}}
    got = jobs._reports(tmp_path, CLUSTER, _dt(since), PARAMS, lambda *_: None, state)

    window = {ds: [r for r in rows if since <= r["ts"] < until] for ds, rows in raw.items()}
    want = reference.compute({ds: pa.Table.from_pylist(rows) for ds, rows in window.items()}, PARAMS)
    for name in reports.SCHEMAS:
        g, w = reports.sort_rows(name, got.get(name, [])), reports.sort_rows(name, want.get(name, []))
        assert len(g) == len(w), (name, len(g), len(w))
        for gr, wr in zip(g, w, strict=True):
            assert all(_same(gr.get(k), wr[k]) for k in wr), (name, gr, wr)


def _dt(ms: int):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC)


def test_a_groups_first_hour_is_never_compared_with_the_key_before_it():
    """Merging (group, topic) hours: whether a commit moved at an hour's first snapshot compares it
    with the same key's previous hour only. Here g2's first commit is above g1's last one; no
    progress may be read from that (random lakes rarely line two keys up like this)."""
    from pipeline import windows

    def row(group, hour, first, last, progress=None):
        return {
            "hour": T0 + hour * HOUR_MS,
            "group": group,
            "topic": "t",
            "max_lag": 1,
            "sum_lag": 1,
            "first_ts": T0 + hour * HOUR_MS + 60_000,
            "sum_first": 1,
            "committed_first": first,
            "last_ts": T0 + hour * HOUR_MS + 120_000,
            "sum_last": 1,
            "max_last": 1,
            "committed_last": last,
            "progress_ts": progress,
        }

    states = pa.Table.from_pylist(
        [
            row("g1", 0, 5, 5),
            row("g1", 1, 5, 5),
            row("g2", 0, 50, 50),
            row("g2", 1, 50, 50),
            row("g3", 0, 1, 1),
        ],
        schema=hours.SCHEMAS["group_hours"],
    )
    _, summary = windows.group_reports(states)
    assert [(s["group"], s["last_progress_ts"]) for s in summary] == [
        ("g1", None),
        ("g2", None),
        ("g3", None),
    ]
    moved = states.to_pylist()
    moved[3]["committed_first"] = 60  # g2's second hour starts above its first hour's last commit
    _, summary = windows.group_reports(pa.Table.from_pylist(moved, schema=hours.SCHEMAS["group_hours"]))
    assert summary[1]["last_progress_ts"] == T0 + HOUR_MS + 60_000
