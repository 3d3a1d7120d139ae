"""Capacity & usage pages: the report page with its SVG charts, and the buttons that feed it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from console import access
from console.formatting import human_bytes
from console.kafka import KafkaOperationError
from console.telemetry import capacity
from console.telemetry import snapshots as telemetry
from console.views._helpers import client_ip, get_cluster_for_user
from pipeline import charts
from pipeline import config as pipeline_config


def _idle_rows(request, cluster, report: capacity.CapacityReport) -> list[dict]:
    """Idle topics with how this user can act on each: request a deletion, or delete (operators)."""
    can_delete = access.can(request.user, cluster, access.MANAGE_TOPICS)
    base = reverse("request_new", kwargs={"name": cluster.name})
    rows = []
    for t in report.idle:
        may_request = access.can(request.user, cluster, access.REQUEST, resource=t["topic"])
        query = urlencode({"kind": "topic.delete", "topic": t["topic"]})
        rows.append({**t, "request_url": f"{base}?{query}" if may_request else "", "can_delete": can_delete})
    return rows


def _charts(report: capacity.CapacityReport) -> dict:
    # The topics' growth is measured on the leader replicas' log bytes, so that is the main line;
    # bytes on disk (every replica, and replicas being copied by a move) are drawn beside it.
    logs = [(r["ts"], r["log_bytes"]) for r in report.cluster_size]
    disk = [(r["ts"], r["disk_bytes"]) for r in report.cluster_size if r["disk_bytes"]]
    growing = [
        (t["topic"], t["bytes_growth"], f"+{human_bytes(t['bytes_growth'])}") for t in report.top_growing
    ]
    caps = [b.get("capacity_bytes") for b in report.brokers if b.get("capacity_bytes")]
    brokers = [(f"broker {b['broker']}", b["size_bytes"], _broker_text(report, b)) for b in report.brokers]
    skewed = [(t["topic"], t["skew"], f"{t['skew']:.2f}× mean") for t in report.skewed]
    lagging = [
        (f"{g['group']} · {g['topic']}", g["lag_sum"], f"{g['lag_sum']:,} msgs") for g in report.lagging
    ]
    return {
        "size": charts.line_chart(("log (leader replicas)", logs), ("on disk (all replicas)", disk)),
        "growing": charts.bar_chart(growing),
        "brokers": charts.bar_chart(brokers, limit=max(caps) if caps else None),
        "skewed": charts.bar_chart(skewed),
        "lagging": charts.bar_chart(lagging),
    }


def _broker_text(report: capacity.CapacityReport, b: dict) -> str:
    used = (
        f"{b['used_ratio'] * 100:.1f}% used"
        if b.get("used_ratio") is not None
        else human_bytes(b["size_bytes"])
    )
    slope, days = b.get("slope_bytes_per_day"), b.get("days_to_full")
    if slope is None:
        return f"{used} · no forecast yet"
    if days is not None:
        return f"{used} · full in {days:.0f} d"
    return f"{used} · not growing" if slope <= 0 else f"{used} · capacity unknown"


@login_required
@require_GET
def capacity_overview(request, name: str):
    cluster = get_cluster_for_user(request, name)
    report = capacity.capacity_report(cluster)
    idle = _idle_rows(request, cluster, report)
    cfg = pipeline_config.load()
    return render(
        request,
        "console/capacity.html",
        {
            "cluster": cluster,
            "report": report,
            "charts": _charts(report) if report.has_data else {},
            "idle": idle,
            "can_run": access.can(request.user, cluster, access.RUN_OPERATIONS),
            "interval_min": cfg.snapshot_interval_s // 60,
            "window_days": cfg.window_days,
            "lake_size": human_bytes(report.lake_bytes),
        },
    )


@login_required
@require_POST
def capacity_run(request, name: str):
    cluster = get_cluster_for_user(request, name, access.RUN_OPERATIONS)
    try:
        days = int(request.POST["days"]) if request.POST.get("days") else None
    except ValueError:
        days = None  # the default window
    op = capacity.start_pipeline_run(
        actor=request.user, cluster=cluster, days=days, source_ip=client_ip(request)
    )
    return redirect("operation_detail", op_id=op.pk)


@login_required
@require_POST
def capacity_snapshot(request, name: str):
    cluster = get_cluster_for_user(request, name, access.RUN_OPERATIONS)
    try:
        result = telemetry.collect_snapshot(actor=request.user, cluster=cluster)
    except KafkaOperationError as exc:
        messages.error(request, f"Snapshot failed ({exc.name}): {exc.operator_text}")
    else:
        if result.skipped and result.errors:
            messages.error(request, result.errors[0])
        elif result.skipped:
            messages.info(request, "This interval already has a snapshot.")
        else:
            messages.success(
                request, f"Snapshot taken: {result.partitions} partitions, {result.brokers} log dirs."
            )
    return redirect("capacity", name=cluster.name)
