"""Capacity and usage: run the Spark pipeline as an Operation, and read its report tables for the pages.

Reports are small Parquet files published per cluster by ``pipeline.reports`` (no database
tables): the pipeline can run anywhere Spark runs and the console only reads the current run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from console import access, operations
from console.models import Cluster, Operation, OperationState
from pipeline import config as pipeline_config
from pipeline import lake, reports

KIND = "pipeline.run"
STEPS = ("spark jobs", "publish reports")
TOP = 10


def _window(since: datetime | None, until: datetime | None, cfg) -> tuple[datetime, datetime]:
    until = lake.utc(until or timezone.now())
    since = lake.utc(since) if since else until - timedelta(days=cfg.window_days)
    if since >= until:
        raise ValueError("the window must start before it ends")
    return since, until


def start_pipeline_run(
    *,
    actor,
    cluster: Cluster,
    since: datetime | None = None,
    until: datetime | None = None,
    source_ip: str | None = None,
) -> Operation:
    """Queue the report jobs for one cluster over [since, until) (default: the last PIPELINE_WINDOW_DAYS).

    ``actor=None`` is the system actor (beat, the command line); people need ``operation.run``.
    """
    actor = actor or access.system_actor()
    access.require(actor, cluster, access.RUN_OPERATIONS)
    since, until = _window(since, until, pipeline_config.load())
    return operations.start(
        actor=actor,
        kind=KIND,
        cluster=cluster,
        params={"cluster": cluster.name, "since": since.isoformat(), "until": until.isoformat()},
        items=STEPS,
        targets=[f"cluster:{cluster.name}"],
        source_ip=source_ip,
    )


def start_scheduled_runs() -> list[int]:
    """Beat's job: one pipeline run per cluster that has snapshots, unless one is still pending or running."""
    busy = set(
        Operation.objects.filter(
            kind=KIND, state__in=(OperationState.PENDING, OperationState.RUNNING)
        ).values_list("cluster_id", flat=True)
    )
    root = pipeline_config.load().lake_dir / "partitions"
    started = []
    for cluster in Cluster.objects.exclude(pk__in=busy):
        if (root / f"cluster={cluster.name}").is_dir():
            started.append(start_pipeline_run(actor=None, cluster=cluster).pk)
    return started


@dataclass
class CapacityReport:
    """What the capacity page shows for one cluster (display values; the template holds no logic)."""

    has_data: bool
    meta: dict[str, Any] = field(default_factory=dict)
    cluster_size: list[dict] = field(default_factory=list)
    top_growing: list[dict] = field(default_factory=list)
    brokers: list[dict] = field(default_factory=list)
    skewed: list[dict] = field(default_factory=list)
    lagging: list[dict] = field(default_factory=list)
    idle: list[dict] = field(default_factory=list)
    snapshot_count: int = 0
    lake_bytes: int = 0


def capacity_report(cluster: Cluster, *, skew_threshold: float = 1.2) -> CapacityReport:
    """The current reports of a cluster, ranked for the page."""
    root = pipeline_config.load().lake_dir
    meta = reports.read_meta(root, cluster.name)
    sizes = lake.lake_size(root, cluster.name)
    if meta is None:
        return CapacityReport(has_data=False, lake_bytes=sum(sizes.values()))

    def read(name: str) -> list[dict]:
        return reports.read_report(root, cluster.name, name)

    summary = read("topic_summary")
    forecast = {f["broker"]: f for f in read("broker_forecast")}
    latest_disk: dict[int, dict] = {}
    for d in read("broker_disk"):
        latest_disk[d["broker"]] = d  # rows are sorted by time: the last one wins
    brokers = [{**d, **forecast.get(b, {})} for b, d in sorted(latest_disk.items())]
    lag = [g for g in read("group_summary") if g["lag_sum"] > 0]
    size = read("cluster_size")
    return CapacityReport(
        has_data=True,
        meta=meta,
        cluster_size=size,
        top_growing=sorted((s for s in summary if s["bytes_growth"] > 0), key=lambda s: -s["bytes_growth"])[
            :TOP
        ],
        brokers=brokers,
        skewed=sorted((s for s in summary if (s["skew"] or 0) >= skew_threshold), key=lambda s: -s["skew"])[
            :TOP
        ],
        lagging=sorted(lag, key=lambda g: -g["lag_sum"])[:TOP],
        idle=sorted(read("idle_topics"), key=lambda t: -t["idle_days"]),
        snapshot_count=len(size),
        lake_bytes=sum(sizes.values()),
    )
