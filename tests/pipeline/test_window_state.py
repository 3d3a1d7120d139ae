"""The window state: hourly runs that keep the window's hour states between runs publish exactly
what a rebuild publishes at the same moment, and a stale, corrupt or foreign state is not used.

Two identical generated lakes (15-minute snapshots over ten hours; a topic created at hour 2 that
grows, one deleted at hour 6, their consumer groups with them): on ``inc`` the pipeline runs every
hour over a 4-hour window (hours leave it from the fifth run on), plus once with the window
starting mid-hour and the last hour still open; on ``full`` each moment is a rebuild (pyarrow,
like the hourly run, so the comparison is of the state and not of the engines). The published
report files are compared whole: same schema, same rows, same order, floats bit for bit.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipeline import generate, jobs, lake, reports, rollups, window_state
from pipeline.reference import HOUR_MS, JobParams

START = datetime(2026, 3, 1, 21, 0, tzinfo=UTC)  # crosses a day boundary
SHAPE = generate.Shape(topics=5, partitions=2, brokers=3, replication=2, snapshots=40, interval_s=900)
PARAMS = JobParams(idle_days=0.05, forecast_window_days=0.1, min_history_h=2)
WINDOW = timedelta(hours=4)
CLUSTER = "prod"
BORN, GONE = "fresh.orders", "topic-001"
pytestmark = pytest.mark.timeout(600)


def _shaped(k: int, tables: dict) -> dict:
    """A topic created at snapshot 8 (hour 2) growing each snapshot; ``GONE`` deleted at snapshot 24."""
    parts, groups = tables["partitions"], tables["groups"]
    if k >= 24:
        parts = parts.filter(pc.not_equal(parts["topic"], GONE))
        groups = groups.filter(pc.not_equal(groups["topic"], GONE))
    if k >= 8:
        extra = parts.slice(0, 2)
        extra = extra.set_column(extra.schema.get_field_index("topic"), "topic", pa.array([BORN] * 2))
        grown = pa.array([1_000_000 * (k - 7), 7_000 * (k - 7) ** 2], pa.int64())
        extra = extra.set_column(extra.schema.get_field_index("size_bytes"), "size_bytes", grown)
        extra = extra.set_column(extra.schema.get_field_index("log_end_offset"), "log_end_offset", grown)
        parts = pa.concat_tables([parts, extra])
    return {**tables, "partitions": parts, "groups": groups}


def _write(root, snapshots: list, interval_s: int = SHAPE.interval_s) -> None:
    for k, (ts, tables) in snapshots:
        lake.write_snapshot(root, CLUSTER, ts, _shaped(k, tables), interval_s)


@pytest.fixture
def lakes(tmp_path):
    snaps = list(enumerate(generate.snapshots(SHAPE, START)))
    inc, full = tmp_path / "inc", tmp_path / "full"
    for root in (inc, full):
        _write(root, snaps)
    return inc, full


def _published(root, out: dict) -> dict[str, pa.Table]:
    path = reports.publish(root, CLUSTER, out, {"cluster": CLUSTER})
    return {name: pq.read_table(path / f"{name}.parquet") for name in reports.SCHEMAS}


def _run(root, until: datetime, now: datetime | None = None, **kw) -> tuple[dict[str, pa.Table], dict]:
    stats: dict = {}
    out = jobs.run_jobs(
        None,
        root,
        CLUSTER,
        until - WINDOW,
        until,
        PARAMS,
        now=now or until,
        stats=stats,
        engine=jobs.ARROW,
        **kw,
    )
    return _published(root, out), stats


def _assert_same(got: dict[str, pa.Table], want: dict[str, pa.Table]) -> None:
    for name in reports.SCHEMAS:
        assert got[name].schema == want[name].schema, name
        assert got[name].num_rows == want[name].num_rows, name
        for col in want[name].column_names:  # column by column: floats compared exactly
            assert got[name][col].equals(want[name][col]), (name, col)


def _held(root, kind: str) -> list[int]:
    _table, tokens = window_state.load(root, CLUSTER, kind)
    return sorted(tokens)


def _ms(t: datetime) -> int:
    return int(t.timestamp() * 1000)


@pytest.mark.parametrize("lag", [0, 2, window_state.LAG_HOURS])
def test_it_publishes_after_each_hourly_run_exactly_what_a_rebuild_publishes(lakes, lag, monkeypatch):
    """``lag``: the state is written back when more hours behind than that (0: every run)."""
    monkeypatch.setattr(window_state, "LAG_HOURS", lag)
    inc, full = lakes
    moments = [(START + timedelta(hours=h), None) for h in range(2, 11)]
    moments.append((START + timedelta(hours=10), START + timedelta(hours=9, minutes=35)))  # open hour
    rolled = []
    for until, now in moments:
        got, stats = _run(inc, until, now)
        rolled.append(stats["rolled_hours"])
        want, _ = _run(full, until, now, rebuild=True)
        _assert_same(got, want)
        topics = {r["topic"] for r in got["topic_summary"].to_pylist()}
        assert (BORN in topics) == (until > START + timedelta(hours=2))
        if until - WINDOW >= START + timedelta(hours=6):
            assert GONE not in topics
        closed = _ms(min(until, now or until)) // HOUR_MS * HOUR_MS
        first = max(_ms(until - WINDOW), _ms(START))
        window = list(range(first, closed, HOUR_MS))
        if lag == 0:
            assert _held(inc, "topic_hours") == window, until
        else:  # written when it fell more than `lag` hours behind: the window's hours it misses
            behind = set(window) ^ set(_held(inc, "topic_hours"))
            assert len(behind) <= lag, until
    # after the first, each hourly run rolled up the hour just closed; the last one none (its
    # open hour, 4 snapshots x 3 datasets, read raw)
    assert rolled == [2] + [1] * 8 + [0] and stats["open_files"] == 4 * 3


def _state_rows(root, kind: str) -> pa.Table:
    return pq.read_table(window_state.path_of(root, CLUSTER, kind))


def test_it_uses_the_state_for_unchanged_hours_and_rereads_hours_rolled_up_again(lakes, monkeypatch):
    monkeypatch.setattr(window_state, "LAG_HOURS", 0)  # written back by every run
    inc, full = lakes
    until = START + timedelta(hours=8)
    _run(inc, until - timedelta(hours=1))
    _run(inc, until)
    # the kept hours come from the state, not the day files: a day file altered behind the
    # pipeline's back (same manifest) is not read again
    path = rollups.rollup_path(inc, "topic_hours", CLUSTER, _ms(until) - 2 * HOUR_MS)
    t = pq.read_table(path)
    lake.write_atomic(t.set_column(t.schema.get_field_index("size"), "size", pc.add(t["size"], 5)), path)
    got, _ = _run(inc, until)
    want, _ = _run(full, until, rebuild=True)
    _assert_same(got, want)
    # a late snapshot in a closed hour, rolled up by another run (not this one): its token
    # changed, so that hour is read again from the day files; the others still come from the state
    late = START + timedelta(hours=6, minutes=7)
    extra = next(generate.snapshots(generate.Shape(**{**SHAPE.__dict__, "snapshots": 1}), late))
    for root in (inc, full):
        _write(root, [(25, extra)], interval_s=60)  # its own file, not the 06:00 one
        jobs.roll_up(None, root, CLUSTER, until - WINDOW, until, now=until, engine=jobs.ARROW)
    got, stats = _run(inc, until)
    want, _ = _run(full, until, rebuild=True)
    assert stats["rolled_hours"] == 0
    _assert_same(got, want)
    assert _ms(late) in set(_state_rows(inc, "cluster")["ts"].to_pylist())


@pytest.mark.parametrize("damage", ["garbage", "other_cluster", "old_version", "missing"])
def test_it_recomputes_from_the_hour_states_when_the_state_is_corrupt_or_foreign(lakes, damage, monkeypatch):
    monkeypatch.setattr(window_state, "LAG_HOURS", 0)  # written back by every run
    inc, full = lakes
    until = START + timedelta(hours=9)
    _run(inc, until - timedelta(hours=1))
    for kind in window_state.KINDS:
        path = window_state.path_of(inc, CLUSTER, kind)
        t = pq.read_table(path)
        meta = json.loads(t.schema.metadata[window_state.META_KEY])
        # wrong rows under tokens that would otherwise match: only the checks can keep them out
        wrong = t.set_column(0, t.column_names[0], pc.add(t[t.column_names[0]], 1))
        if damage == "garbage":
            path.write_bytes(b"PAR1 not a parquet file")
        elif damage == "missing":
            path.unlink()
        else:
            meta |= {"cluster": "other"} if damage == "other_cluster" else {"version": 0}
            wrong = wrong.replace_schema_metadata({window_state.META_KEY: json.dumps(meta).encode()})
            lake.write_atomic(wrong, path)
    got, _ = _run(inc, until)
    want, _ = _run(full, until, rebuild=True)
    _assert_same(got, want)
    assert _held(inc, "group_hours") == list(range(_ms(until - WINDOW), _ms(until), HOUR_MS))
