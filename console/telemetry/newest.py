"""The newest telemetry snapshot's consumer-group lag and brokers' log dirs, for the cluster overview.

The collector writes a ``groups`` and a ``brokers`` file per snapshot (``pipeline/lake.py``); the
overview reads the newest of each with pyarrow (the columns it shows), kept in memory until a newer
file replaces it, so a view costs no Parquet read within a snapshot interval and never asks Kafka.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from django.conf import settings

from console.telemetry.lakefiles import NewestFileCache, file_version, latest_file
from pipeline import config as pipeline_config

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GroupLag:
    """One consumer group's lag summed over its partitions, in one snapshot."""

    group: str
    lag: int
    topics: int


@dataclass(frozen=True)
class LogDirUse:
    """One broker's log dirs summed: the replicas' bytes, and the volume's size and free space
    when the broker reports them (KIP-827; None otherwise)."""

    broker: int
    size_bytes: int
    total_bytes: int | None
    usable_bytes: int | None
    error: str = ""

    @property
    def used_ratio(self) -> float | None:
        """The volume's used share (total minus usable, over total); None when not reported."""
        if not self.total_bytes or self.usable_bytes is None:
            return None
        return (self.total_bytes - self.usable_bytes) / self.total_bytes

    @property
    def used_percent(self) -> float | None:
        return None if self.used_ratio is None else 100 * self.used_ratio


@dataclass(frozen=True)
class Newest:
    """What one dataset's newest snapshot holds (``ts`` None: no snapshot yet)."""

    ts: datetime | None = None
    rows: tuple = field(default=())
    error: str = ""


def _last_snapshot(path: Path, columns: list[str]) -> pa.Table | None:
    """The rows of the newest ``ts`` in one file (a file may hold several snapshots)."""
    table = pq.read_table(path, columns=["ts", *columns])
    if table.num_rows == 0:
        return None
    return table.filter(pc.equal(table.column("ts"), pc.max(table.column("ts"))))


def read_group_lag(path: Path) -> Newest:
    table = _last_snapshot(path, ["group", "topic", "lag"])
    if table is None:
        return Newest()
    summed = table.group_by("group").aggregate([("lag", "sum"), ("topic", "count_distinct")])
    groups = zip(
        summed.column("group").to_pylist(),
        summed.column("lag_sum").to_pylist(),
        summed.column("topic_count_distinct").to_pylist(),
        strict=True,
    )
    rows = sorted(
        (GroupLag(g, int(lag or 0), int(n)) for g, lag, n in groups), key=lambda r: (-r.lag, r.group)
    )
    return Newest(table.column("ts")[0].as_py(), tuple(rows))


def read_log_dirs(path: Path) -> Newest:
    table = _last_snapshot(path, ["broker", "size_bytes", "total_bytes", "usable_bytes", "error"])
    if table is None:
        return Newest()
    per: dict[int, LogDirUse] = {}
    for r in table.drop_columns(["ts"]).to_pylist():
        seen = per.get(r["broker"])
        total, usable = r["total_bytes"], r["usable_bytes"]
        if seen is not None:  # several log dirs: add them up, unknown when any one is unknown
            total = None if seen.total_bytes is None or total is None else seen.total_bytes + total
            usable = None if seen.usable_bytes is None or usable is None else seen.usable_bytes + usable
        per[r["broker"]] = LogDirUse(
            r["broker"],
            max(0, r["size_bytes"] or 0) + (seen.size_bytes if seen else 0),
            total,
            usable,
            r["error"] or (seen.error if seen else ""),
        )
    return Newest(table.column("ts")[0].as_py(), tuple(per[b] for b in sorted(per)))


_READERS = {"groups": read_group_lag, "brokers": read_log_dirs}
_cache = NewestFileCache(lambda: 2 * settings.TOPIC_METADATA_CACHE_CLUSTERS)


def newest(cluster_name: str, dataset: str, lake_dir: Path | None = None) -> Newest:
    """``dataset`` ("groups": ``GroupLag`` rows, most lag first; "brokers": ``LogDirUse`` rows by
    broker) of the cluster's newest snapshot, read again only when a newer file appears."""
    root = Path(lake_dir or pipeline_config.load().lake_dir)
    path = latest_file(root, cluster_name, dataset)
    version = file_version(path) if path is not None else None
    if version is None:
        return Newest()
    try:
        return _cache.get((str(root), cluster_name, dataset), version, lambda: _READERS[dataset](path))
    except (OSError, pa.ArrowException) as exc:
        log.warning("telemetry snapshot %s unreadable: %s", path, exc)
        return Newest(error=f"the latest snapshot ({path.name}) could not be read: {exc}")


def clear_cache() -> None:
    _cache.clear()
