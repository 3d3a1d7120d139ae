"""Capacity and usage: run the pipeline as an Operation, and read its report tables for the pages.

Reports are small Parquet files published per cluster by ``pipeline.reports`` (no database
tables): an hourly run rolls up in pyarrow inside the worker, a rebuild or a large backfill in
Spark (anywhere Spark runs), and the console only reads the current run.
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
STEPS = ("roll-up and reports", "publish reports")
TOP = 10


MAX_DAYS = 365  # the longest window a run may be asked for in days


def _window(
    since: datetime | None, until: datetime | None, cfg, days: int | None = None
) -> tuple[datetime, datetime]:
    until = lake.utc(until or timezone.now())
    days = max(1, min(MAX_DAYS, days)) if days is not None else cfg.window_days
    since = lake.utc(since) if since else until - timedelta(days=days)
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
    rebuild: bool = False,
    days: int | None = None,
) -> Operation:
    """Queue the report jobs for one cluster over [since, until) (default: the last ``days``, 1 to
    MAX_DAYS, or PIPELINE_WINDOW_DAYS).

    ``actor=None`` is the system actor (beat, the command line); people need ``operation.run``.
    ``rebuild``: drop the window's hourly rollups and recompute them from the raw snapshots.
    """
    actor = actor or access.system_actor()
    access.require(actor, cluster, access.RUN_OPERATIONS)
    since, until = _window(since, until, pipeline_config.load(), days)
    return operations.start(
        actor=actor,
        kind=KIND,
        cluster=cluster,
        params={
            "cluster": cluster.name,
            "since": since.isoformat(),
            "until": until.isoformat(),
            **({"rebuild": True} if rebuild else {}),
        },
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


def history_text(seconds: float) -> str:
    """How long a history is, in the two largest units: '45 min', '3 h 10 min', '25 h', '2 d 4 h'.

    Hours up to two days, so it reads against the threshold in hours (``PIPELINE_MIN_HISTORY_H``).
    """
    minutes = int(max(0.0, seconds) // 60)
    days, hours, mins = minutes // 1440, minutes % 1440 // 60, minutes % 60
    if days < 2:
        days, hours = 0, hours + 24 * days
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {mins} min" if mins else f"{hours} h"
    return f"{mins} min"


def _hours(h: float) -> str:
    return f"{h:g} h"


@dataclass
class CapacityReport:
    """What the capacity page shows for one cluster (display values; the template holds no logic).

    Forecasts and growth verdicts (top growing topics, days until a broker is full, growth per
    day, idle topics) need ``min_history_h`` of snapshots; with less, they are left out and
    ``history_note`` says how much history there is.
    """

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
    history_s: float = 0.0
    min_history_h: float = 24.0
    idle_days: float = 7.0

    @property
    def enough_history(self) -> bool:
        return self.history_s >= self.min_history_h * 3600

    @property
    def history(self) -> str:
        return history_text(self.history_s)

    @property
    def needs(self) -> str:
        """The rule, short: 'needs 24 h of snapshots'."""
        return f"needs {_hours(self.min_history_h)} of snapshots"

    @property
    def history_note(self) -> str:
        """'3 h 10 min of snapshots; forecasts need 24 h' (empty once there is enough)."""
        if self.enough_history:
            return ""
        return f"{self.history} of snapshots; forecasts need {_hours(self.min_history_h)}"

    @property
    def idle_note(self) -> str:
        """Why idle topics are not judged yet: a topic idle for N days takes N days of snapshots to see."""
        if not self.enough_history:
            return self.history_note
        if self.history_s < self.idle_days * 86400:
            return f"{self.history} of snapshots; idle for {self.idle_days:g} d needs {self.idle_days:g} d"
        return ""


def _span_s(rows: list[dict]) -> float:
    """Seconds from the first to the last snapshot of the cluster_size report."""
    stamps = [r["ts"] for r in rows]
    if len(stamps) < 2:
        return 0.0
    first, last = min(stamps), max(stamps)
    delta = last - first
    return delta.total_seconds() if isinstance(delta, timedelta) else delta / 1000


def capacity_report(cluster: Cluster, *, skew_threshold: float = 1.2) -> CapacityReport:
    """The current reports of a cluster, ranked for the page."""
    cfg = pipeline_config.load()
    root = cfg.lake_dir
    meta = reports.read_meta(root, cluster.name)
    sizes = lake.lake_size(root, cluster.name)
    if meta is None:
        return CapacityReport(
            has_data=False,
            lake_bytes=sum(sizes.values()),
            min_history_h=cfg.min_history_h,
            idle_days=cfg.idle_days,
        )

    def read(name: str) -> list[dict]:
        return reports.read_report(root, cluster.name, name)

    # The run's own thresholds (its reports were computed with them), else the current settings.
    params = meta.get("params") or {}
    min_h = float(params.get("min_history_h", cfg.min_history_h))
    size = read("cluster_size")
    report = CapacityReport(
        has_data=True,
        meta=meta,
        cluster_size=size,
        snapshot_count=len(size),
        lake_bytes=sum(sizes.values()),
        history_s=_span_s(size),
        min_history_h=min_h,
        idle_days=float(params.get("idle_days", cfg.idle_days)),
    )
    summary = read("topic_summary")
    forecast = {f["broker"]: f for f in read("broker_forecast")}
    latest_disk: dict[int, dict] = {}
    for d in read("broker_disk"):
        latest_disk[d["broker"]] = d  # rows are sorted by time: the last one wins
    report.brokers = [{**d, **forecast.get(b, {})} for b, d in sorted(latest_disk.items())]
    lag = [g for g in read("group_summary") if g["lag_sum"] > 0]
    report.skewed = sorted(
        (s for s in summary if (s["skew"] or 0) >= skew_threshold), key=lambda s: -s["skew"]
    )[:TOP]
    report.lagging = sorted(lag, key=lambda g: -g["lag_sum"])[:TOP]
    if not report.enough_history:  # a run from before the rule, or a shorter window: no verdicts
        for b in report.brokers:
            b["slope_bytes_per_day"] = b["days_to_full"] = None
        return report
    report.top_growing = sorted(
        (s for s in summary if s["bytes_growth"] > 0), key=lambda s: -s["bytes_growth"]
    )[:TOP]
    if not report.idle_note:
        report.idle = sorted(read("idle_topics"), key=lambda t: -t["idle_days"])
    return report
