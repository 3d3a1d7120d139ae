"""Capacity pages: empty state, SVG charts from published reports, buttons, permissions, charts geometry."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from console import operations
from console.formatting import human_bytes
from console.models import AuditEvent, Operation
from console.telemetry import capacity
from pipeline import charts, generate, lake, reference, reports
from pipeline.reference import JobParams
from tasks import telemetry as telemetry_tasks

pytestmark = pytest.mark.django_db
START = datetime(2026, 4, 1, tzinfo=UTC)
SHAPE = generate.Shape(topics=8, partitions=3, snapshots=36, interval_s=3600)


@pytest.fixture
def lake_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path))
    monkeypatch.setenv("PIPELINE_IDLE_DAYS", "1")
    return tmp_path


def _publish_reference(lake_dir, cluster="sandbox"):
    generate.write_lake(lake_dir, cluster, SHAPE, START, per_file=12)
    until = START + timedelta(days=2)
    tables = {ds: lake.read_window(lake_dir, ds, cluster, START, until) for ds in lake.DATASETS}
    out = reference.compute(tables, JobParams(idle_days=1))
    reports.publish(
        lake_dir,
        cluster,
        out,
        {"since": START.isoformat(), "until": until.isoformat(), "generated_at": until.isoformat()},
    )
    return out


def test_it_explains_how_data_appears_when_there_are_no_reports(client, personas, kafka_cluster, lake_dir):
    client.force_login(personas["viewer"])
    page = client.get("/c/sandbox/capacity/")
    assert page.status_code == 200
    html = page.content.decode()
    assert (
        "No reports yet" in html
        and "every 5 minutes" in html
        and "manage.py run_pipeline --cluster sandbox" in html
    )
    assert "/capacity/run/" not in html and "Run the pipeline" not in html  # viewers cannot start it
    assert '<a href="/c/sandbox/capacity/">Capacity</a>' in html


def test_it_draws_the_reports_as_svg_without_any_cdn(client, personas, kafka_cluster, lake_dir):
    out = _publish_reference(lake_dir)
    client.force_login(personas["operator"])
    html = client.get("/c/sandbox/capacity/").content.decode()
    assert html.count("<svg") == 5
    assert "Run the pipeline" in html and "Take a snapshot now" in html
    assert not re.search(r"<script[^>]+src=\"https?://", html)
    top = max(out["topic_summary"], key=lambda s: s["bytes_growth"])["topic"]
    assert html.index(top) < html.index('id="brokers"')
    for broker in ("broker 1", "broker 2", "broker 3"):
        assert broker in html
    assert "app-1 · topic-001" in html  # a group that falls behind
    idle = html[html.index('id="idle"') :]
    assert 'name="names" value="topic-006"' in idle and "Request deletion" not in idle  # operators delete


def test_idle_topics_link_to_a_prefilled_deletion_request(client, personas, kafka_cluster, lake_dir):
    _publish_reference(lake_dir)
    client.force_login(personas["admin"])
    html = client.get("/c/sandbox/capacity/").content.decode()
    assert (
        '<a href="/c/sandbox/requests/new/?kind=topic.delete&amp;topic=topic-006">Request deletion</a>'
        in html
    )
    client.force_login(personas["viewer"])
    idle = client.get("/c/sandbox/capacity/").content.decode().split('id="idle"')[1]
    assert "topic-006" in idle and "Request deletion" not in idle and "Delete…" not in idle


def test_the_report_ranks_topics_brokers_and_groups(kafka_cluster, lake_dir):
    out = _publish_reference(lake_dir)
    report = capacity.capacity_report(kafka_cluster)
    growth = [t["bytes_growth"] for t in report.top_growing]
    assert growth == sorted(growth, reverse=True) and len(growth) <= capacity.TOP
    assert {"topic-003", "topic-007"} <= {t["topic"] for t in report.skewed}  # partition 0 is 3x heavier
    assert all(t["skew"] >= 1.2 for t in report.skewed)
    assert [b["broker"] for b in report.brokers] == [1, 2, 3]
    assert all(b["days_to_full"] > 0 for b in report.brokers)
    assert report.lagging[0]["lag_sum"] == max(g["lag_sum"] for g in out["group_summary"])
    assert [t["topic"] for t in report.idle] == ["topic-006"]
    assert report.snapshot_count == SHAPE.snapshots


def test_publishing_again_replaces_the_current_run_atomically(lake_dir):
    root = reports.cluster_dir(lake_dir, "c1")
    reports.publish(lake_dir, "c1", {"idle_topics": []}, {"n": 1})
    first = reports.current_run(lake_dir, "c1")
    reports.publish(lake_dir, "c1", {"idle_topics": []}, {"n": 2})
    reports.publish(lake_dir, "c1", {"idle_topics": []}, {"n": 3})
    assert reports.read_meta(lake_dir, "c1") == {"n": 3}
    assert first not in {p.name for p in root.iterdir()}  # only the current and the previous run stay
    assert len(list(root.glob("run-*"))) == 2 and not list(root.glob(".*"))


def test_a_viewer_cannot_start_the_pipeline(client, personas, kafka_cluster, lake_dir):
    client.force_login(personas["viewer"])
    assert client.post("/c/sandbox/capacity/run/").status_code == 403
    assert client.post("/c/sandbox/capacity/snapshot/").status_code == 403
    client.force_login(personas["outsider"])
    assert client.get("/c/sandbox/capacity/").status_code == 404
    assert not Operation.objects.filter(kind=capacity.KIND).exists()


def test_the_run_button_queues_an_audited_operation(
    client, personas, kafka_cluster, lake_dir, django_capture_on_commit_callbacks, _no_queue
):
    queued = _no_queue
    client.force_login(personas["operator"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/c/sandbox/capacity/run/", {"days": "3"})
    op = Operation.objects.get(kind=capacity.KIND)
    assert response.status_code == 302 and response["Location"] == f"/operations/{op.pk}/"
    assert queued == [op.pk]
    since, until = (datetime.fromisoformat(op.params[k]) for k in ("since", "until"))
    assert until - since == timedelta(days=3)
    event = AuditEvent.objects.get(action="pipeline.run.requested")
    assert (event.actor_name, event.operation_id) == ("operator", op.pk)
    assert [i.resource for i in op.items.all()] == list(capacity.STEPS)


def _reference_engine(spark, lake_dir, cluster, since, until, params, progress=None):
    progress(0.5, "computing")
    tables = {ds: lake.read_window(lake_dir, ds, cluster, since, until) for ds in lake.DATASETS}
    return reference.compute(tables, params)


def test_the_task_runs_the_operation_and_publishes_the_same_reports_on_a_rerun(
    personas, kafka_cluster, lake_dir, monkeypatch
):
    # Spark itself is exercised in test_pipeline_spark.py; here the engine is the reference it is checked against.
    monkeypatch.setattr("pipeline.jobs.run_jobs", _reference_engine)
    monkeypatch.setattr("pipeline.spark.build_session", lambda cfg: None)
    generate.write_lake(lake_dir, "sandbox", SHAPE, START, per_file=12)
    window = {"since": START, "until": START + timedelta(days=2)}
    first = capacity.start_pipeline_run(actor=personas["operator"], cluster=kafka_cluster, **window)

    operations.run(first.pk, worker="test")

    first.refresh_from_db()
    assert (first.state, first.progress, first.result["rows"]["idle_topics"]) == ("succeeded", 1.0, 1)
    assert first.items.get(resource="publish reports").message == reports.current_run(lake_dir, "sandbox")
    published = {name: reports.read_report(lake_dir, "sandbox", name) for name in reports.SCHEMAS}
    assert reports.read_meta(lake_dir, "sandbox")["operation"] == first.pk
    again = capacity.start_pipeline_run(actor=personas["operator"], cluster=kafka_cluster, **window)
    operations.run(again.pk, worker="test")
    assert {name: reports.read_report(lake_dir, "sandbox", name) for name in reports.SCHEMAS} == published
    assert operations.run(again.pk, worker="test") is None  # a finished run is never re-entered
    assert AuditEvent.objects.filter(action="pipeline.run.succeeded").count() == 2


def test_a_failing_job_fails_the_operation_with_the_reason(personas, kafka_cluster, lake_dir, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("Java gateway process exited before sending its port number")

    monkeypatch.setattr("pipeline.spark.build_session", broken)
    op = capacity.start_pipeline_run(actor=personas["admin"], cluster=kafka_cluster)
    operations.run(op.pk, worker="test")
    op.refresh_from_db()
    assert op.state == "failed" and "Java gateway process exited" in op.error
    assert AuditEvent.objects.get(action="pipeline.run.failed").outcomes["pipeline"]["ok"] is False
    assert reports.current_run(lake_dir, "sandbox") is None


def test_the_snapshot_button_writes_a_snapshot(client, personas, kafka_cluster, lake_dir):
    client.force_login(personas["operator"])
    response = client.post("/c/sandbox/capacity/snapshot/", follow=True)
    assert "Snapshot taken" in response.content.decode()
    assert list((lake_dir / "partitions" / "cluster=sandbox").rglob("snap-*.parquet"))


def test_beat_starts_one_run_per_cluster_with_snapshots(
    kafka_cluster, offline_cluster, lake_dir, monkeypatch
):
    generate.write_lake(lake_dir, "sandbox", generate.Shape(snapshots=2), START)
    first = telemetry_tasks.schedule_pipeline_runs.run()
    assert [Operation.objects.get(pk=i).cluster for i in first] == [kafka_cluster]
    assert telemetry_tasks.schedule_pipeline_runs.run() == []  # one still pending


def test_line_and_bar_geometry():
    line = charts.line_chart([(0, 0), (3_600_000, 50), (7_200_000, 100)], width=200, height=100, pad=10)
    assert line["points"] == "10.0,90.0 100.0,50.0 190.0,10.0"
    bars = charts.bar_chart([("a", 10, "10"), ("b", 5, "5")], width=420, label_w=100, limit=20)
    assert [r["width"] for r in bars["rows"]] == [100.0, 50.0] and bars["limit_x"] == 300.0
    assert charts.bar_chart([])["empty"] and human_bytes(1536) == "1.5 KB"


def test_the_command_reads_dates_and_durations():
    from django.core.management import CommandError

    from console.management.commands.run_pipeline import parse_when

    now = datetime(2026, 5, 10, 12, tzinfo=UTC)
    assert parse_when("7d", now) == datetime(2026, 5, 3, 12, tzinfo=UTC)
    assert parse_when("36h", now) == datetime(2026, 5, 9, 0, tzinfo=UTC)
    assert parse_when("2026-05-01", now) == datetime(2026, 5, 1, tzinfo=UTC)
    assert parse_when("2026-05-01T06:00+02:00", now) == datetime(2026, 5, 1, 4, tzinfo=UTC)
    with pytest.raises(CommandError, match="cannot read"):
        parse_when("last tuesday", now)


def test_the_command_refuses_an_unknown_cluster_and_an_empty_window(kafka_cluster, lake_dir):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="no cluster named 'nope'"):
        call_command("run_pipeline", "--cluster", "nope")
    with pytest.raises(CommandError, match="must start before it ends"):
        call_command("run_pipeline", "--cluster", "sandbox", "--since", "1d", "--until", "2d")
    assert not Operation.objects.filter(kind=capacity.KIND).exists()
