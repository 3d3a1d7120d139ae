"""The Spark jobs give the same figures as the plain-Python reference on generated snapshots.

One real local Spark session (local[1], UI off, few shuffle partitions) is shared by the run.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from pipeline import generate, jobs, lake, reference, reports
from pipeline.config import load
from pipeline.reference import JobParams

START = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)  # crosses a day boundary
SHAPE = generate.Shape(topics=8, partitions=3, brokers=3, replication=2, snapshots=30, interval_s=1800)
PARAMS = JobParams(idle_days=0.5, forecast_window_days=0.25)


@pytest.fixture(scope="session")
def spark():
    from pipeline.spark import build_session

    session = build_session(load(), master="local[1]")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def _assert_same_reports(got: dict, want: dict) -> None:
    for name in reports.SCHEMAS:
        g, w = reports.sort_rows(name, got.get(name, [])), reports.sort_rows(name, want.get(name, []))
        assert len(g) == len(w), name
        for gr, wr in zip(g, w, strict=True):
            assert set(gr) == set(wr), name
            diffs = {k: (gr[k], wr[k]) for k in wr if not _same(gr[k], wr[k])}
            assert not diffs, f"{name} {wr}: {diffs}"


def test_it_computes_every_report_like_the_reference_and_is_idempotent(spark, tmp_path):
    generate.write_lake(tmp_path, "prod", SHAPE, START, per_file=7)
    since, until = START, START + timedelta(days=2)
    tables = {ds: lake.read_window(tmp_path, ds, "prod", since, until) for ds in lake.DATASETS}
    want = reference.compute(tables, PARAMS)

    got = jobs.run_jobs(spark, tmp_path, "prod", since, until, PARAMS)

    _assert_same_reports(got, want)
    assert {r["topic"] for r in got["idle_topics"]} == {"topic-006"}
    assert len(got["cluster_size"]) == SHAPE.snapshots
    assert jobs.run_jobs(spark, tmp_path, "prod", since, until, PARAMS) == got
    # a narrower window only sees its own snapshots
    narrow = jobs.run_jobs(
        spark, tmp_path, "prod", START + timedelta(hours=5), START + timedelta(hours=10), PARAMS
    )
    assert len(narrow["cluster_size"]) == 10
