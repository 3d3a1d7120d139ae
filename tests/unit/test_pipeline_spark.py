"""The Spark jobs give the same figures as the plain-Python reference on generated snapshots.

One real local Spark session (local[1], UI off, few shuffle partitions) is shared by the run.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline import generate, jobs, lake, reference, reports
from pipeline.reference import JobParams

START = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)  # crosses a day boundary
SHAPE = generate.Shape(topics=8, partitions=3, brokers=3, replication=2, snapshots=30, interval_s=1800)
PARAMS = JobParams(idle_days=0.5, forecast_window_days=0.25, min_history_h=12)
NEW_TOPIC = "fresh.orders"  # created after the window's fourth snapshot
# A JVM start plus ~20 small Spark jobs: generous under a loaded 2-core machine.
pytestmark = pytest.mark.timeout(900)


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


def _write_lake_with_a_new_topic(root, cluster: str) -> None:
    """The generated snapshots, plus a topic that appears after four of them and grows from then on."""
    for k, (ts, tables) in enumerate(generate.snapshots(SHAPE, START)):
        parts = tables["partitions"]
        # broker 1 shares its disk with other data: a third of the space Kafka leaves is free
        b = tables["brokers"]
        shared = pc.equal(b["broker"], 1)
        usable = pc.if_else(shared, pc.divide(b["usable_bytes"], 3), b["usable_bytes"]).cast(pa.int64())
        tables = {
            **tables,
            "brokers": b.set_column(b.schema.get_field_index("usable_bytes"), "usable_bytes", usable),
        }
        if k >= 4:
            extra = parts.slice(0, 2)
            extra = extra.set_column(
                extra.schema.get_field_index("topic"), "topic", pa.array([NEW_TOPIC] * 2)
            )
            grown = pa.array([5_000_000 * (k - 3)] * 2, pa.int64())
            extra = extra.set_column(extra.schema.get_field_index("size_bytes"), "size_bytes", grown)
            tables = {**tables, "partitions": pa.concat_tables([parts, extra])}
        lake.write_snapshot(root, cluster, ts, tables, SHAPE.interval_s)


def test_it_computes_every_report_like_the_reference(spark, tmp_path):
    _write_lake_with_a_new_topic(tmp_path, "prod")
    since, until = START, START + timedelta(days=2)
    tables = {ds: lake.read_window(tmp_path, ds, "prod", since, until) for ds in lake.DATASETS}
    want = reference.compute(tables, PARAMS)

    got = {
        k: reports.as_rows(v) for k, v in jobs.run_jobs(spark, tmp_path, "prod", since, until, PARAMS).items()
    }

    _assert_same_reports(got, want)
    assert {r["topic"] for r in got["idle_topics"]} == {"topic-006"}
    assert len(got["cluster_size"]) == SHAPE.snapshots
    # 14.5 h of snapshots, 12 h required: forecasts and a per-day rate for every topic
    assert all(f["days_to_full"] is not None for f in got["broker_forecast"])
    # the forecast counts the disk's free space, not capacity minus Kafka's bytes
    one = next(f for f in got["broker_forecast"] if f["broker"] == 1)
    assert one["free_bytes"] < (one["capacity_bytes"] - one["size_bytes"]) / 2
    assert one["days_to_full"] == pytest.approx(one["free_bytes"] / one["slope_bytes_per_day"])
    fresh = next(t for t in got["topic_summary"] if t["topic"] == NEW_TOPIC)
    assert fresh["bytes_growth"] == fresh["size_bytes"] == 2 * 5_000_000 * (SHAPE.snapshots - 4)
    sizes = sorted(got["cluster_size"], key=lambda r: r["ts"])
    assert (
        sum(t["bytes_growth"] for t in got["topic_summary"]) == sizes[-1]["log_bytes"] - sizes[0]["log_bytes"]
    )


@pytest.mark.django_db
def test_it_runs_from_the_command_as_an_audited_operation(spark, kafka_cluster, tmp_path, monkeypatch):
    from django.core.management import call_command

    from console.models import AuditEvent, Operation, OperationState
    from console.telemetry import capacity

    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path))
    monkeypatch.setenv("PIPELINE_IDLE_DAYS", str(PARAMS.idle_days))
    monkeypatch.setenv("PIPELINE_FORECAST_WINDOW_DAYS", str(PARAMS.forecast_window_days))
    generate.write_lake(tmp_path, "sandbox", SHAPE, START, per_file=10)
    since, until = START + timedelta(hours=2, minutes=30), START + timedelta(hours=10)

    call_command(
        "run_pipeline", "--cluster", "sandbox", "--since", since.isoformat(), "--until", "2026-03-02T06:00"
    )

    op = Operation.objects.get(kind=capacity.KIND)
    assert op.state == OperationState.SUCCEEDED and op.progress == 1.0, op.error
    assert {i.resource: i.state for i in op.items.all()} == dict.fromkeys(capacity.STEPS, "succeeded")
    assert op.result["rows"]["cluster_size"] == 15  # 7.5 hours of half-hourly snapshots
    assert (
        AuditEvent.objects.get(action="pipeline.run.succeeded", operation_id=op.pk).actor_name
        == "console-system"
    )
    tables = {ds: lake.read_window(tmp_path, ds, "sandbox", since, until) for ds in lake.DATASETS}
    published = {name: reports.read_report(tmp_path, "sandbox", name) for name in reports.SCHEMAS}
    # PIPELINE_MIN_HISTORY_H is left at 24 h: 7.5 hours of snapshots give no forecast, in either engine
    params = dataclasses.replace(PARAMS, min_history_h=24)
    assert reports.read_meta(tmp_path, "sandbox")["params"] == params.__dict__
    _assert_same_reports(_as_ms(published), reference.compute(tables, params))
    assert published["broker_forecast"] and published["idle_topics"] == []
    assert all(
        f["slope_bytes_per_day"] is None and f["days_to_full"] is None for f in published["broker_forecast"]
    )
    assert all(t["bytes_per_day"] is None for t in published["topic_summary"])


def _as_ms(published: dict) -> dict:
    """Published timestamps come back as datetimes; the engines speak epoch milliseconds."""
    return {
        name: [
            {k: int(v.timestamp() * 1000) if isinstance(v, datetime) else v for k, v in row.items()}
            for row in rows
        ]
        for name, rows in published.items()
    }
