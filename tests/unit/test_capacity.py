"""Capacity pages: empty state, SVG charts from published reports, buttons, permissions, charts geometry."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from console import operations
from console.formatting import human_bytes
from console.models import AuditEvent, Operation
from console.telemetry import capacity
from console.views import capacity as capacity_views
from pipeline import charts, generate, lake, reference, reports
from pipeline import config as pipeline_config
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


def _reference_engine(spark, lake_dir, cluster, since, until, params, progress=None, **_incremental):
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
    # a rebuild rolls up with Spark (an hourly run in pyarrow would not start the JVM)
    op = capacity.start_pipeline_run(actor=personas["admin"], cluster=kafka_cluster, rebuild=True)
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
    line = charts.line_chart(
        ("n", [(0, 0), (3_600_000, 50), (7_200_000, 100)]), width=400, height=100, fmt=str
    )
    left, right, top, bottom = line["left"], line["right"], line["top"], line["bottom"]
    mid_x, mid_y = (left + right) / 2, (top + bottom) / 2
    want = [(left, bottom), (mid_x, mid_y), (right, top)]
    assert line["series"][0]["points"] == " ".join(f"{float(x)},{float(y)}" for x, y in want)
    assert [t["label"] for t in line["ticks"]] == ["0.0", "50.0", "100.0"]
    assert line["series"][0]["legend"] == "n: 100.0"
    bars = charts.bar_chart([("a", 10, "10"), ("b", 5, "5")], width=420, limit=20)
    span = bars["text_x"] - 8 - bars["x"]
    assert [r["width"] for r in bars["rows"]] == [round(span / 2, 1), round(span / 4, 1)]
    assert bars["limit_x"] == round(bars["x"] + span, 1) and bars["width"] == 420
    assert charts.bar_chart([])["empty"] and charts.line_chart(("x", []))["empty"]
    assert human_bytes(1536) == "1.5 KiB"


def _inside(chart: dict) -> list:
    """The texts of a chart whose estimated box leaves its viewBox."""
    return [
        box
        for box in charts.text_boxes(chart)
        if box[1] < 0 or box[2] < 0 or box[3] > chart["width"] or box[4] > chart["height"]
    ]


def test_chart_texts_fit_their_view_box_with_long_names_and_large_values():
    long_name = "payments.eu-west-1.settlement-instructions.v2.dead-letter-queue." + "W" * 80
    items = [
        (long_name, 3.2e15, f"+{human_bytes(3.2e15)}"),
        ("x", 1, "+1 B"),
        (f"{'consumer-group-' * 8} · {long_name}", 9.9e12, f"{9_876_543_210_987:,} msgs"),
    ]
    bars = charts.bar_chart(items)
    assert bars["texts"] and _inside(bars) == []
    assert bars["rows"][0]["short"].endswith("…") and bars["rows"][0]["label"] == long_name
    assert charts.text_width(bars["rows"][0]["short"], 12) <= bars["label_x"] - 4
    assert bars["rows"][1]["short"] == "x"
    # labels never run into the bars, nor the bars into the texts after them
    assert all(box[3] <= bars["x"] for box in charts.text_boxes(bars)[0::2])
    assert all(
        box[1] >= bars["x"] + r["width"]
        for box, r in zip(charts.text_boxes(bars)[1::2], bars["rows"], strict=True)
    )
    wide = charts.bar_chart([("broker 1", 5, "99.9% used · " + "full in 12345 d · " * 6)], width=300)
    assert _inside(wide) == [] and wide["width"] > 300  # the chart grows rather than cut the text off
    big = 1024**5 * 999.9
    line = charts.line_chart(
        ("log (leader replicas)", [(0, 0), (86_400_000, big)]),
        ("on disk (all replicas)", [(0, 1), (86_400_000, big * 3)]),
    )
    assert _inside(line) == [] and line["ticks"][-1]["label"] == human_bytes(big * 3)
    boxes = charts.text_boxes(line)
    ticks, legend = boxes[:3], boxes[3:5]
    assert all(box[3] < line["left"] for box in ticks)  # tick labels stay left of the plot
    assert legend[0][3] < legend[1][1]  # legend entries do not overlap
    assert charts.fit_text("abc", 100, 12) == "abc" and charts.fit_text("a" * 100, 60, 12).endswith("…")


def test_the_capacity_page_shows_long_topic_names_whole_in_a_tooltip(
    client, personas, kafka_cluster, lake_dir
):
    name = "orders." + "very-long-segment." * 12 + "v1"
    _write_history(lake_dir, hours=30, new_topic=name)
    client.force_login(personas["viewer"])
    html = client.get("/c/sandbox/capacity/").content.decode()
    growing = html[html.index('id="top-growing"') : html.index('id="brokers"')]
    assert f"<title>{name}</title>" in growing and "…" in growing
    assert "truncatechars" not in growing


# -- the minimum history rule, and growth that agrees with the chart --------------------------------


def _write_history(
    lake_dir, *, hours: float, new_topic: str | None = None, born_after: int = 3, cluster="sandbox"
):
    """Half-hourly snapshots over ``hours``; ``new_topic`` appears after ``born_after`` snapshots, then grows."""
    shape = generate.Shape(topics=7, partitions=2, snapshots=int(hours * 2) + 1, interval_s=1800)
    for k, (ts, tables) in enumerate(generate.snapshots(shape, START)):
        if new_topic and k >= born_after:
            extra = tables["partitions"].filter(pc.equal(tables["partitions"]["topic"], "topic-000"))
            grown = pa.array([int(6e6) * (k - born_after + 1)] * extra.num_rows, pa.int64())
            extra = extra.set_column(
                extra.schema.get_field_index("topic"), "topic", pa.array([new_topic] * extra.num_rows)
            )
            extra = extra.set_column(extra.schema.get_field_index("size_bytes"), "size_bytes", grown)
            tables = {**tables, "partitions": pa.concat_tables([tables["partitions"], extra])}
        lake.write_snapshot(lake_dir, cluster, ts, tables, shape.interval_s)
    until = START + timedelta(hours=hours, minutes=1)
    tables = {ds: lake.read_window(lake_dir, ds, cluster, START, until) for ds in lake.DATASETS}
    params = JobParams(idle_days=0.5, min_history_h=24)
    out = reference.compute(tables, params)
    meta = {"since": START.isoformat(), "until": until.isoformat(), "generated_at": until.isoformat()}
    reports.publish(lake_dir, cluster, out, {**meta, "params": params.__dict__})
    return out


def test_no_forecast_or_growth_verdict_from_23_hours_of_snapshots(client, personas, kafka_cluster, lake_dir):
    out = _write_history(lake_dir, hours=23)
    assert all(f["days_to_full"] is None and f["slope_bytes_per_day"] is None for f in out["broker_forecast"])
    assert out["idle_topics"] == [] and all(t["bytes_per_day"] is None for t in out["topic_summary"])
    report = capacity.capacity_report(kafka_cluster)
    assert not report.enough_history and report.history == "23 h"
    assert report.history_note == "23 h of snapshots; forecasts need 24 h"
    assert report.top_growing == [] and report.idle == []
    client.force_login(personas["viewer"])
    html = client.get("/c/sandbox/capacity/").content.decode()
    assert "23 h of snapshots; forecasts need 24 h" in html
    for verdict in ("full in", "not growing", "No topic grew", "No idle topics", "Per day"):
        assert verdict not in html, verdict
    assert "no forecast: needs 24 h of snapshots (have 23 h)" in html and "no forecast yet" in html
    assert html.count("<svg") == 4  # the cluster size, brokers, skew and lag charts are facts: still drawn


def test_a_forecast_from_25_hours_of_snapshots(client, personas, kafka_cluster, lake_dir):
    out = _write_history(lake_dir, hours=25)
    assert all(f["days_to_full"] > 0 for f in out["broker_forecast"])
    assert all(t["bytes_per_day"] is not None for t in out["topic_summary"])
    report = capacity.capacity_report(kafka_cluster)
    assert report.enough_history and report.history_note == "" and report.top_growing
    client.force_login(personas["viewer"])
    html = client.get("/c/sandbox/capacity/").content.decode()
    assert "forecasts need" not in html and "full in" in html and "Per day" in html


def test_the_setting_and_a_run_before_the_rule(kafka_cluster, lake_dir, monkeypatch):
    out = _write_history(lake_dir, hours=25)
    monkeypatch.setenv("PIPELINE_MIN_HISTORY_H", "48")
    assert pipeline_config.load().min_history_h == 48
    assert capacity.capacity_report(kafka_cluster).enough_history  # the run's own threshold (24 h) holds
    # A run published before the rule has no threshold of its own: the setting applies to the page.
    meta = reports.read_meta(lake_dir, "sandbox")
    reports.publish(lake_dir, "sandbox", out, {k: v for k, v in meta.items() if k != "params"})
    report = capacity.capacity_report(kafka_cluster)
    assert report.history_note == "25 h of snapshots; forecasts need 48 h"
    assert report.top_growing == [] and all(b["days_to_full"] is None for b in report.brokers)
    # Idle for N days takes N days of snapshots to see.
    reports.publish(lake_dir, "sandbox", out, {**meta, "params": {**meta["params"], "idle_days": 2}})
    report = capacity.capacity_report(kafka_cluster)
    assert (
        report.enough_history
        and report.idle == []
        and [t["topic"] for t in out["idle_topics"]] == ["topic-006"]
    )
    assert report.idle_note == "25 h of snapshots; idle for 2 d needs 2 d"
    assert capacity.history_text(3 * 3600 + 10 * 60 + 59) == "3 h 10 min"
    assert (
        capacity.history_text(14 * 60) == "14 min"
        and capacity.history_text(2 * 86400 + 4 * 3600) == "2 d 4 h"
    )


def test_a_topic_created_in_the_window_grew_from_nothing_like_the_chart_shows(
    client, personas, kafka_cluster, lake_dir
):
    """The chart's log bytes and the topics' growth are one measure: what the chart gains, topics grew."""
    out = _write_history(lake_dir, hours=30, new_topic="fresh.orders")
    summary = {t["topic"]: t for t in out["topic_summary"]}
    fresh = summary["fresh.orders"]
    assert fresh["bytes_growth"] == fresh["size_bytes"] > 0  # from nothing, not from its first snapshot
    sizes = sorted(out["cluster_size"], key=lambda r: r["ts"])
    assert (
        sum(t["bytes_growth"] for t in out["topic_summary"]) == sizes[-1]["log_bytes"] - sizes[0]["log_bytes"]
    )
    hourly = [g for g in out["topic_growth"] if g["topic"] == "fresh.orders" and g["period"] == "hour"]
    assert sum(g["bytes_growth"] for g in hourly) == fresh["bytes_growth"]
    report = capacity.capacity_report(kafka_cluster)
    assert "fresh.orders" in {t["topic"] for t in report.top_growing}
    chart = capacity_views._charts(report)["size"]
    log_line = [float(v) for v in re.findall(r",([\d.]+)", chart["series"][0]["points"])]
    assert log_line[-1] < log_line[0]  # y grows downwards: the log bytes line went up


def test_disk_that_doubles_under_a_move_is_not_topic_growth(client, personas, kafka_cluster, lake_dir):
    """A reassignment copying a replica doubles bytes on disk; no topic grew, and the chart says which line is which."""
    shape = generate.Shape(topics=1, partitions=1, brokers=2, replication=1, snapshots=60, interval_s=1800)
    plan = list(generate.snapshots(shape, START))
    first = plan[0][1]
    for k, (ts, _) in enumerate(plan):
        brokers = first["brokers"]
        copied = min(1.0, k / 30) * first["partitions"]["size_bytes"][0].as_py()
        sizes = [brokers["size_bytes"][0].as_py(), brokers["size_bytes"][1].as_py() + int(copied)]
        if first["partitions"]["leader"][0].as_py() != 1:
            sizes.reverse()
        tables = {
            "partitions": first["partitions"].set_column(
                1, "ts", pa.array([ts], lake.PARTITIONS.field("ts").type)
            ),
            "brokers": brokers.set_column(
                1, "ts", pa.array([ts] * 2, lake.BROKERS.field("ts").type)
            ).set_column(4, "size_bytes", pa.array(sizes, pa.int64())),
        }
        lake.write_snapshot(lake_dir, "sandbox", ts, tables, shape.interval_s)
    until = START + timedelta(days=2)
    tables = {ds: lake.read_window(lake_dir, ds, "sandbox", START, until) for ds in lake.DATASETS}
    reports.publish(
        lake_dir, "sandbox", reference.compute(tables, JobParams()), {"params": JobParams().__dict__}
    )
    report = capacity.capacity_report(kafka_cluster)
    disk = [r["disk_bytes"] for r in report.cluster_size]
    assert disk[-1] == 2 * disk[0] and {r["log_bytes"] for r in report.cluster_size} == {disk[0]}
    assert report.top_growing == []
    chart = capacity_views._charts(report)["size"]
    assert [s["name"] for s in chart["series"]] == ["log (leader replicas)", "on disk (all replicas)"]
    assert len(set(re.findall(r",([\d.]+)", chart["series"][0]["points"]))) == 1  # the log line is flat
    client.force_login(personas["viewer"])
    html = client.get("/c/sandbox/capacity/").content.decode()
    assert "No topic grew in the window (log bytes of the leader replicas)." in html
    assert "log (leader replicas)" in html and "on disk (all replicas)" in html


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


def test_days_until_full_count_the_disks_free_space_not_capacity_minus_kafkas_bytes():
    from pipeline.reference import headroom

    gb = 1024**3
    # a 270 GB disk holding 20 GB of Kafka data but only 81 GB free (other data shares it)
    assert headroom(0, 270 * gb, 20 * gb, 81 * gb) == 81 * gb
    # a configured budget (BROKER_DISK_CAPACITY_BYTES) caps it further, the free space still counts
    assert headroom(50 * gb, 50 * gb, 20 * gb, 81 * gb) == 30 * gb
    assert headroom(500 * gb, 500 * gb, 20 * gb, 81 * gb) == 81 * gb
    # no free space reported (older brokers): capacity minus Kafka's bytes, else unknown
    assert headroom(0, 270 * gb, 20 * gb, None) == 250 * gb
    assert headroom(0, None, 20 * gb, None) is None
