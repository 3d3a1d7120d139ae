"""The pipeline sized to the work: hourly runs roll up in pyarrow, rebuilds and backfills in Spark,
and both publish the same reports.

One lake of 15-minute snapshots over seven hours crossing a day boundary, with a topic created
after the fourth snapshot; two copies of it. On one, the hourly runs a worker makes as the hours
pass (each with ``now`` 40 minutes into an hour, so each also reduces an open hour), chosen by rows
(pyarrow) and given no Spark session; on the other, one rebuild (Spark, whose pass over more than
two hours counts leaders per broker id, a different plan from pyarrow's per-leader grouping). The
published files are compared exactly, column by column after a stable sort: both engines feed
the same integer sums and maxima to the same driver code (``rollups.finish``, ``hours``,
``windows``), so even the floats (rates, skew, forecasts) must be bit for bit the same.
"""

from __future__ import annotations

import math
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import generate, jobs, lake, reference, reports, rollups
from pipeline.reference import JobParams

START = datetime(2026, 3, 1, 21, 0, tzinfo=UTC)
SHAPE = generate.Shape(topics=6, partitions=2, brokers=3, replication=2, snapshots=28, interval_s=900)
PARAMS = JobParams(idle_days=0.1, forecast_window_days=0.1, min_history_h=2)
SINCE = START + timedelta(minutes=20)
NOW = START + timedelta(hours=6, minutes=40)
UNTIL = START + timedelta(hours=7)
CLUSTER = "prod"
pytestmark = pytest.mark.timeout(900)


def _write(root) -> None:
    for k, (ts, tables) in enumerate(generate.snapshots(SHAPE, START)):
        if k >= 4:  # a topic created since: it grows from nothing, across hours and engines
            extra = tables["partitions"].slice(0, 2)
            extra = extra.set_column(extra.schema.get_field_index("topic"), "topic", pa.array(["fresh"] * 2))
            grown = pa.array([3_000_000 * (k - 3)] * 2, pa.int64())
            extra = extra.set_column(extra.schema.get_field_index("size_bytes"), "size_bytes", grown)
            tables = {**tables, "partitions": pa.concat_tables([tables["partitions"], extra])}
        lake.write_snapshot(root, CLUSTER, ts, tables, SHAPE.interval_s)


def _no_spark():
    raise AssertionError("an hourly run asked for a Spark session")


def _published(root) -> dict[str, pa.Table]:
    """Each published report file as read back, rows in a stable order of every column."""
    run = reports.current_run(root, CLUSTER)
    out = {}
    for name in reports.SCHEMAS:
        path = reports.cluster_dir(root, CLUSTER) / run / f"{name}.parquet"
        t = pq.read_table(path) if path.exists() else None
        out[name] = None if t is None else t.sort_by([(c, "ascending") for c in t.column_names])
    return out


def _hour_states(root, kind: str) -> pa.Table:
    files = sorted((root / "rollups" / kind).rglob("*.parquet"))  # day files, or hour files
    t = pa.concat_tables(pq.read_table(f) for f in files)
    return t.sort_by([(c, "ascending") for c in t.column_names])


def test_it_publishes_the_same_reports_from_hourly_pyarrow_runs_and_a_spark_rebuild(spark, tmp_path):
    hourly_lake, rebuild_lake = tmp_path / "hourly", tmp_path / "rebuild"
    _write(hourly_lake)
    shutil.copytree(hourly_lake, rebuild_lake)

    engines, rolled = [], []
    for h in range(1, 7):  # the worker's runs as the hours pass: 21:40, 22:40, ... 02:40
        now = START + timedelta(hours=h, minutes=40)
        stats: dict = {}
        jobs.run_jobs(_no_spark, hourly_lake, CLUSTER, SINCE, now, PARAMS, now=now, stats=stats)
        engines.append(stats["engine"])
        rolled.append(stats["rolled_hours"])
    stats = {}
    hourly = jobs.run_jobs(_no_spark, hourly_lake, CLUSTER, SINCE, UNTIL, PARAMS, now=NOW, stats=stats)
    assert engines + [stats["engine"]] == ["pyarrow"] * 7
    assert rolled + [stats["rolled_hours"]] == [1, 1, 1, 1, 1, 1, 0]  # each run: the hour just closed
    reports.publish(hourly_lake, CLUSTER, hourly, {"cluster": CLUSTER})

    stats = {}
    rebuilt = jobs.run_jobs(
        spark, rebuild_lake, CLUSTER, SINCE, UNTIL, PARAMS, now=NOW, rebuild=True, stats=stats
    )
    assert (stats["engine"], stats["rolled_hours"]) == ("spark", 6)
    reports.publish(rebuild_lake, CLUSTER, rebuilt, {"cluster": CLUSTER})

    for kind in rollups.KINDS:  # the hours' rollups and states, written hour by hour or at once
        assert _hour_states(hourly_lake, kind).equals(_hour_states(rebuild_lake, kind)), kind
    got, want = _published(hourly_lake), _published(rebuild_lake)
    assert [n for n, t in want.items() if t is None or t.num_rows == 0] == ["idle_topics"]
    for name in reports.SCHEMAS:
        if want[name] is None:
            assert got[name] is None, name
            continue
        assert got[name].schema == want[name].schema, name
        for column in want[name].column_names:
            assert got[name][column].to_pylist() == want[name][column].to_pylist(), (name, column)

    # and both are the reports the plain-Python reference computes from the raw rows (its float
    # arithmetic runs in another order: compared to 1e-9)
    tables = {ds: lake.read_window(hourly_lake, ds, CLUSTER, SINCE, UNTIL) for ds in lake.DATASETS}
    expected = reference.compute(tables, PARAMS)
    for name in reports.SCHEMAS:
        g = reports.sort_rows(name, reports.as_rows(hourly.get(name, [])))
        w = reports.sort_rows(name, expected.get(name, []))
        assert len(g) == len(w), name
        for gr, wr in zip(g, w, strict=True):
            assert {k: gr[k] for k in wr if not _close(gr[k], wr[k])} == {}, (name, wr)


def _close(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def test_it_rolls_up_a_backfill_over_the_row_threshold_with_spark_then_the_next_hour_in_pyarrow(
    spark, tmp_path, monkeypatch
):
    _write(tmp_path)
    total = sum(pq.read_metadata(p).num_rows for p in tmp_path.rglob("snap-*.parquet"))
    # seven hours of raw rows; a run of one closed hour and an open one reduces about two sevenths
    monkeypatch.setenv("PIPELINE_SPARK_MIN_ROWS", str(total // 3))
    built = []

    def session():
        built.append(1)
        return spark

    first, second = {}, {}
    jobs.run_jobs(session, tmp_path, CLUSTER, SINCE, NOW, PARAMS, now=NOW, stats=first)
    # the first run on an existing lake is a backfill: every closed hour, and the open one, raw
    assert (first["engine"], first["rolled_hours"], first["raw_rows"], len(built)) == ("spark", 6, total, 1)
    later = NOW + timedelta(minutes=30)  # 03:00 has closed since
    jobs.run_jobs(session, tmp_path, CLUSTER, SINCE, UNTIL, PARAMS, now=later, stats=second)
    assert (second["engine"], second["rolled_hours"], len(built)) == ("pyarrow", 1, 1)
    hour = range(int((START + timedelta(hours=6)).timestamp()), int(UNTIL.timestamp()))
    in_hour = [p for p in tmp_path.rglob("snap-*.parquet") if int(p.stem.split("-")[1]) in hour]
    assert len(in_hour) == 4 * 3  # the hour just closed: four snapshots of three datasets
    assert second["raw_rows"] == sum(pq.read_metadata(p).num_rows for p in in_hour)


def test_hours_rolled_up_by_version_2_keep_their_day_files_until_rolled_again(tmp_path):
    """Version 2 kept the per-snapshot topic and group rows in day files: an hour whose raw files are
    gone (lake retention) is not rolled again and its rows are still read from there (to cut the
    window's first hour); an hour rolled again moves out of the day file (no row twice)."""
    _write(tmp_path)
    since = START + timedelta(minutes=40)  # the first hour (21:00) is cut: derived from its snapshot rows
    want = jobs.run_jobs(_no_spark, tmp_path, CLUSTER, since, UNTIL, PARAMS, now=NOW)
    day = tmp_path / "rollups" / "{kind}" / f"cluster={CLUSTER}" / "date=2026-03-01"
    for kind in rollups.HOURLY:  # back to version 2's layout for 2026-03-01 (21:00-23:00)
        hour_files = sorted(Path(str(day).format(kind=kind)).glob("hour-*.parquet"))
        lake.write_atomic(
            pa.concat_tables(pq.read_table(f) for f in hour_files), hour_files[0].parent / "rollup.parquet"
        )
        for f in hour_files:
            f.unlink()
    for path in (tmp_path / "rollups" / "manifests").rglob("hour-*.json"):
        path.write_text(path.read_text().replace('"version": 3', '"version": 2'))
    for path in tmp_path.rglob("snap-*.parquet"):  # retention: the raw files of 21:00 are gone
        if int(path.stem.split("-")[1]) < int((START + timedelta(hours=1)).timestamp()):
            path.unlink()

    stats: dict = {}
    got = jobs.run_jobs(_no_spark, tmp_path, CLUSTER, since, UNTIL, PARAMS, now=NOW, stats=stats)
    assert stats["rolled_hours"] == 5  # 22:00 to 02:00 again; 21:00 has no raw files left
    for kind in rollups.HOURLY:
        legacy = pq.read_table(Path(str(day).format(kind=kind)) / "rollup.parquet")
        assert {t // 3_600_000 for t in legacy[rollups.TIME[kind]].to_pylist()} == {
            int(START.timestamp()) // 3600
        }, kind  # only 21:00's rows are left in the day file
    for name in reports.SCHEMAS:
        assert reports.sort_rows(name, got.get(name, [])) == reports.sort_rows(name, want.get(name, [])), name
