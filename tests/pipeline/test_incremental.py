"""The incremental pipeline: hourly rollups give the same reports as the raw rows and the reference.

A small generated lake of 15-minute snapshots over about seven hours (a topic created after the
fourth snapshot, so growth from nothing crosses rollups too); the window starts mid-hour and
``now`` falls inside the last hour, so the window is rollups of closed hours plus one open hour
read raw. Runs choose their engine by rows (pyarrow on this small lake) and rebuilds run in Spark
(one local session shared by the run); ``test_engines`` compares the two engines' published files.
"""

from __future__ import annotations

import math
import shutil
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipeline import generate, jobs, lake, reference, reports, rollups, window_state
from pipeline import spark as spark_engine
from pipeline.reference import HOUR_MS, JobParams

START = datetime(2026, 3, 1, 21, 0, tzinfo=UTC)  # crosses a day boundary
SHAPE = generate.Shape(topics=6, partitions=2, brokers=3, replication=2, snapshots=28, interval_s=900)
PARAMS = JobParams(idle_days=0.1, forecast_window_days=0.1, min_history_h=2)
SINCE = START + timedelta(minutes=20)  # mid-hour: the first hour's rollup is cut by the window
NOW = START + timedelta(hours=6, minutes=40)  # hour 6 (03:00-04:00) is still open
UNTIL = START + timedelta(hours=7)
CLUSTER = "prod"
NEW_TOPIC = "fresh.orders"
pytestmark = pytest.mark.timeout(900)


def _with_new_topic(k: int, tables: dict) -> dict:
    if k < 4:
        return tables
    parts = tables["partitions"]
    extra = parts.slice(0, 2)
    extra = extra.set_column(extra.schema.get_field_index("topic"), "topic", pa.array([NEW_TOPIC] * 2))
    grown = pa.array([3_000_000 * (k - 3)] * 2, pa.int64())
    extra = extra.set_column(extra.schema.get_field_index("size_bytes"), "size_bytes", grown)
    return {**tables, "partitions": pa.concat_tables([parts, extra])}


@pytest.fixture
def lake_dir(tmp_path):
    """One file per snapshot and dataset, named by slot like the collector's."""
    for k, (ts, tables) in enumerate(generate.snapshots(SHAPE, START)):
        lake.write_snapshot(tmp_path, CLUSTER, ts, _with_new_topic(k, tables), SHAPE.interval_s)
    return tmp_path


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def _diffs(got: dict, want: dict) -> list[str]:
    out = []
    for name in reports.SCHEMAS:
        g, w = reports.sort_rows(name, got.get(name, [])), reports.sort_rows(name, want.get(name, []))
        if len(g) != len(w):
            out.append(f"{name}: {len(g)} rows, want {len(w)}")
            continue
        for gr, wr in zip(g, w, strict=True):
            d = {k: (gr.get(k), wr[k]) for k in wr if not _same(gr.get(k), wr[k])}
            if d:
                out.append(f"{name} {wr}: {d}")
    return out


def _reference(root) -> dict:
    tables = {ds: lake.read_window(root, ds, CLUSTER, SINCE, UNTIL) for ds in lake.DATASETS}
    return reference.compute(tables, PARAMS)


def _run(spark, root, **kw) -> tuple[dict, dict]:
    stats: dict = {}
    out = jobs.run_jobs(spark, root, CLUSTER, SINCE, UNTIL, PARAMS, now=NOW, stats=stats, **kw)
    return out, stats


def _rollup_files(root) -> dict[str, tuple[int, int]]:
    base = root / "rollups"
    return {
        str(p.relative_to(base)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in base.rglob("*")
        if p.is_file()
    }


def _rows_of_hour(root, kind: str, h: int) -> pa.Table:
    t = pq.read_table(rollups.rollup_path(root, kind, CLUSTER, _hour(h)))
    return t.filter(pc.equal(pc.multiply(pc.divide(t["ts"], HOUR_MS), HOUR_MS), _hour(h)))


def _hour(h: int) -> int:
    return int((START + timedelta(hours=h)).timestamp() * 1000)


def test_incremental_runs_equal_the_rebuild_and_the_reference(spark, lake_dir):
    want = _reference(lake_dir)
    assert len(want["cluster_size"]) == 26  # snapshots from 21:30 to 03:45

    first, stats = _run(spark, lake_dir)
    assert not _diffs(first, want), _diffs(first, want)
    # hours 21:00 … 02:00 are closed (six), 03:00 is open and read raw
    assert stats["rolled_hours"] == stats["closed_hours"] == 6 and stats["open_files"] == 3 * 4
    assert stats["closed_end"] == _hour(6)
    for kind in rollups.KINDS:
        rolled = set()
        for path in (lake_dir / "rollups" / kind).rglob("*.parquet"):  # day files, or hour files
            rolled |= {t // HOUR_MS * HOUR_MS for t in pq.read_table(path)[rollups.TIME[kind]].to_pylist()}
        assert rolled == {_hour(h) for h in range(6)}, kind  # not the open hour
    days = {p.parent.name for p in (lake_dir / "rollups" / "topic_hours").rglob("*.parquet")}
    assert days == {"date=2026-03-01", "date=2026-03-02"}  # one file per day for the hour states
    hourly = sorted(p.name for p in (lake_dir / "rollups" / "topics").rglob("*.parquet"))
    assert hourly == ["hour-00.parquet", "hour-01.parquet", "hour-02.parquet"] + [
        "hour-21.parquet",
        "hour-22.parquet",
        "hour-23.parquet",
    ]  # one per hour for the per-snapshot topic rows
    assert [rollups.read_manifest(lake_dir, CLUSTER, _hour(h)) is not None for h in range(7)] == [
        True
    ] * 6 + [False]
    # a (snapshot, topic) grain: one row per topic and snapshot of the hour
    assert len(_rows_of_hour(lake_dir, "topics", 1)) == 4 * (SHAPE.topics + 1)

    before = _rollup_files(lake_dir)
    again, stats = _run(spark, lake_dir)
    assert stats["rolled_hours"] == 0
    assert _rollup_files(lake_dir) == before  # nothing rewritten
    assert not _diffs(again, want)

    rebuilt, stats = _run(spark, lake_dir, rebuild=True)
    assert (stats["rolled_hours"], stats["engine"]) == (6, "spark")
    assert not _diffs(rebuilt, want)
    assert not _diffs(rebuilt, first)

    # published, the run's Arrow tables and the reference's row dicts make the same files
    files = {}
    for engine, out in (("spark", first), ("reference", want)):
        reports.publish(lake_dir, CLUSTER, out, {"engine": engine})
        files[engine] = {name: reports.read_report(lake_dir, CLUSTER, name) for name in reports.SCHEMAS}
    for name in reports.SCHEMAS:
        got_rows, want_rows = files["spark"][name], files["reference"][name]
        assert len(got_rows) == len(want_rows), name
        assert got_rows or name == "idle_topics", name  # no topic is idle here; the rest have rows
        for g, w in zip(got_rows, want_rows, strict=True):
            assert g.keys() == w.keys() and all(_same(g[k], w[k]) for k in w), (name, g, w)


def _tamper(root, kind: str, h: int, column: str, fn) -> None:
    """Change one column of a rolled-up hour's rows in its day file (not the raw files)."""
    path = rollups.rollup_path(root, kind, CLUSTER, _hour(h))
    t = pq.read_table(path)
    time = t[rollups.TIME[kind]]
    in_hour = pc.equal(pc.multiply(pc.divide(time, HOUR_MS), HOUR_MS), _hour(h))
    values = pc.if_else(in_hour, fn(t[column]), t[column])
    lake.write_atomic(t.set_column(t.schema.get_field_index(column), column, values), path)


def _plant_open_hour(root, kind: str) -> None:
    """Copies of hour 5's rows moved to the open hour 6 with their sizes x7 (stale rollup rows)."""
    column = rollups.TIME[kind]
    t = pq.read_table(rollups.rollup_path(root, kind, CLUSTER, _hour(5)))
    t = t.filter(pc.equal(pc.multiply(pc.divide(t[column], HOUR_MS), HOUR_MS), _hour(5)))
    t = t.set_column(t.schema.get_field_index(column), column, pc.add(t[column], HOUR_MS))
    size = "log_bytes" if kind == "cluster" else "size"
    t = t.set_column(t.schema.get_field_index(size), size, pc.multiply(t[size], 7))
    day2 = rollups.rollup_path(root, kind, CLUSTER, _hour(6))  # the topics' hour-03 file: none yet
    lake.write_atomic(pa.concat_tables([*([pq.read_table(day2)] if day2.exists() else []), t]), day2)


def test_the_reports_read_the_rollups_of_closed_hours_and_the_open_hour_raw(spark, lake_dir):
    _run(spark, lake_dir)
    want = _reference(lake_dir)
    # Alter closed hours' rollups (not their raw files): the next run must show it, so the reports
    # come from the rollups, and must not re-roll them (their raw files did not change). Hour 2 is
    # wholly in the window: its hour states are read; hour 0 starts before the window (21:20):
    # it is derived again from its per-snapshot rollups, cut at the window's start.
    _tamper(lake_dir, "cluster", 2, "log_bytes", lambda c: pc.add(c, 1))
    _tamper(lake_dir, "topic_hours", 2, "size", lambda c: pc.add(c, 10))
    _tamper(lake_dir, "topics", 0, "size", lambda c: pc.add(c, 100))
    # Stale rollup rows planted for the open hour: they must be ignored, the open hour is read raw.
    for kind in ("cluster", "topic_hours", "topics"):
        _plant_open_hour(lake_dir, kind)
    # The day files are read for the hours the window state does not hold (test_window_state:
    # once written, it holds the window's hours with their manifests' tokens and would serve them
    # unchanged); none here, whether or not the first run wrote it.
    shutil.rmtree(window_state.path_of(lake_dir, CLUSTER, "cluster").parent, ignore_errors=True)

    got, stats = _run(spark, lake_dir)
    assert stats["rolled_hours"] == 0
    sizes = {r["ts"]: r["log_bytes"] for r in reports.as_rows(got["cluster_size"])}
    wanted = {r["ts"]: r["log_bytes"] for r in want["cluster_size"]}
    changed = {ts for ts in wanted if sizes[ts] != wanted[ts]}
    assert changed == {_hour(2) + i * 900_000 for i in range(4)}
    assert all(sizes[ts] - wanted[ts] == 1 for ts in changed)
    hourly = lambda out: {  # noqa: E731
        (r["topic"], r["bucket"]): r["size_bytes"]
        for r in reports.as_rows(out["topic_growth"])
        if r["period"] == "hour"
    }
    g, w = hourly(got), hourly(want)
    assert {k: g[k] - w[k] for k in w if g[k] != w[k]} == {
        **{(t, _hour(2)): 10 for t, b in w if b == _hour(2)},
        **{(t, _hour(0)): 100 for t, b in w if b == _hour(0)},
    }
    assert all(sizes[ts] == wanted[ts] for ts in wanted if ts >= _hour(6))


def test_a_late_snapshot_in_a_closed_hour_re_rolls_that_hour(spark, lake_dir):
    _run(spark, lake_dir)
    manifests = {h: rollups.read_manifest(lake_dir, CLUSTER, _hour(h)) for h in range(6)}
    before = _rollup_files(lake_dir)
    # a snapshot at 23:07 that the collector wrote late: one more file in a closed hour
    late = START + timedelta(hours=2, minutes=7)
    k = 9
    _, tables = next((ts, t) for i, (ts, t) in enumerate(generate.snapshots(SHAPE, START)) if i == k)
    tables = _with_new_topic(k, tables)
    shifted = {
        ds: t.set_column(
            t.schema.get_field_index("ts"), "ts", pa.array([late] * t.num_rows, t.schema.field("ts").type)
        )
        for ds, t in tables.items()
    }
    lake.write_snapshot(lake_dir, CLUSTER, late, shifted, 60)

    got, stats = _run(spark, lake_dir)
    assert stats["rolled_hours"] == 1
    after = _rollup_files(lake_dir)
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {  # its day's files, its own hour's file for the per-snapshot topic and group rows
        *(
            f"{kind}/cluster={CLUSTER}/date=2026-03-01/rollup.parquet"
            for kind in rollups.KINDS
            if kind not in rollups.HOURLY
        ),
        *(f"{kind}/cluster={CLUSTER}/date=2026-03-01/hour-23.parquet" for kind in rollups.HOURLY),
        f"manifests/cluster={CLUSTER}/date=2026-03-01/hour-23.json",
    }
    assert len(_rows_of_hour(lake_dir, "topics", 2)) == 5 * (SHAPE.topics + 1)
    manifest = rollups.read_manifest(lake_dir, CLUSTER, _hour(2))
    assert len(manifest["inputs"]) == len(manifests[2]["inputs"]) + 3
    late_name = lake.slot_name(late, 60)
    assert sorted(e[0] for e in manifest["inputs"] if e[1].endswith(late_name)) == sorted(lake.DATASETS)
    want = _reference(lake_dir)
    assert len(want["cluster_size"]) == 27
    assert not _diffs(got, want), _diffs(got, want)


@pytest.mark.django_db
def test_the_command_runs_incrementally_and_rebuilds_on_request(spark, lake_dir, monkeypatch):
    from django.core.management import call_command

    from console.models import Cluster, Operation, OperationState
    from console.telemetry import capacity

    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(lake_dir))
    Cluster.objects.create(name=CLUSTER, bootstrap_servers="127.0.0.1:1")
    window = ["--cluster", CLUSTER, "--since", SINCE.isoformat(), "--until", UNTIL.isoformat()]
    for extra in ([], [], ["--rebuild"]):
        call_command("run_pipeline", *window, *extra)
    ops = list(Operation.objects.filter(kind=capacity.KIND).order_by("pk"))
    assert [op.state for op in ops] == [OperationState.SUCCEEDED] * 3, [op.error for op in ops]
    # the window is in the past: all seven hours are closed; the second run has nothing to roll up
    assert [op.result["rolled_hours"] for op in ops] == [7, 0, 7]
    assert [bool(op.params.get("rebuild")) for op in ops] == [False, False, True]
    # which engine rolled up, in the result and the step's message: pyarrow by rows, Spark to rebuild
    assert [op.result["engine"] for op in ops] == ["pyarrow", "pyarrow", "spark"]
    assert [op.result.get("spark_master") for op in ops] == [None, None, "local[*]"]
    messages = [op.items.get(resource=capacity.STEPS[0]).message for op in ops]
    assert [m.split(" with ")[1].split(" (")[0] for m in messages] == [
        "pyarrow",
        "pyarrow",
        "Spark on local[*]",
    ]
    published = {name: reports.read_report(lake_dir, CLUSTER, name) for name in reports.SCHEMAS}
    assert len(published["cluster_size"]) == 26
    assert reports.read_meta(lake_dir, CLUSTER)["engine"] == "spark"  # the published run: the rebuild


def test_past_the_pivot_limit_the_leaders_come_from_a_per_leader_aggregate(spark, lake_dir, monkeypatch):
    monkeypatch.setattr(spark_engine, "MAX_PIVOT_BROKERS", 2)  # the lake has 3 brokers
    got, stats = _run(spark, lake_dir, engine="spark")
    assert (stats["rolled_hours"], stats["engine"]) == (6, "spark")
    assert not _diffs(got, _reference(lake_dir)), _diffs(got, _reference(lake_dir))
    assert {r["leaders"] for r in reports.as_rows(got["broker_disk"])} != {0}
