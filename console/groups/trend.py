"""A group's lag over time, from the telemetry snapshots' ``groups`` dataset (``pipeline/lake.py``).

Each snapshot file is read once per process (three columns), summed per group and time, and kept
until the file leaves the window or changes, so a group page costs no Parquet read once the
files of the window have been seen.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from django.utils import timezone

from pipeline import config as pipeline_config
from pipeline import lake

log = logging.getLogger(__name__)
TREND_HOURS = 24

# path -> ((mtime_ns, size), {group: [(ts, lag)]}), oldest read first; at most MAX_FILES whatever the
# number of clusters viewed (a cluster's own files leaving its window are dropped when it is viewed).
MAX_FILES = 600  # about two 24-hour windows of 5-minute snapshots
_files: dict[str, tuple[tuple[int, int], dict[str, list[tuple[datetime, int]]]]] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class LagTrend:
    points: list[tuple[datetime, int]] = field(default_factory=list)
    hours: int = TREND_HOURS
    snapshots: int = 0  # snapshot files in the window (with or without this group)
    error: str = ""

    @property
    def empty(self) -> bool:
        return not self.points


def _per_group(path: Path) -> dict[str, list[tuple[datetime, int]]]:
    table = pq.read_table(path, columns=["ts", "group", "lag"])
    if table.num_rows == 0:
        return {}
    summed = table.group_by(["group", "ts"]).aggregate([("lag", "sum")])
    out: dict[str, list[tuple[datetime, int]]] = {}
    for group, ts, total in zip(
        summed.column("group").to_pylist(),
        summed.column("ts").to_pylist(),
        summed.column("lag_sum").to_pylist(),
        strict=True,
    ):
        out.setdefault(group, []).append((ts, int(total or 0)))
    return out


def _window_files(root: Path, cluster: str, since: datetime, until: datetime) -> list[Path]:
    files = []
    for d in lake.window_paths(root, "groups", cluster, since, until):
        files += [f for f in Path(d).iterdir() if f.suffix == ".parquet" and f.name[0] not in "._"]
    return sorted(files)


def lag_trend(
    cluster_name: str, group_id: str, hours: int = TREND_HOURS, lake_dir: Path | None = None
) -> LagTrend:
    """The group's total lag at each snapshot of the last ``hours`` (empty without snapshots)."""
    root = Path(lake_dir or pipeline_config.load().lake_dir)
    until = timezone.now()
    since = until - timedelta(hours=hours)
    try:
        files = _window_files(root, cluster_name, since, until + timedelta(minutes=1))
    except OSError as exc:
        return LagTrend(hours=hours, error=f"the snapshots could not be listed: {exc}")
    points: list[tuple[datetime, int]] = []
    errors = []
    for path in files:
        try:
            stat = path.stat()
            version = (stat.st_mtime_ns, stat.st_size)
            with _lock:
                hit = _files.get(str(path))
            if hit is None or hit[0] != version:
                hit = (version, _per_group(path))
                with _lock:
                    _files[str(path)] = hit
        except (OSError, pa.ArrowException) as exc:
            log.warning("telemetry snapshot %s unreadable: %s", path, exc)
            errors.append(path.name)
            continue
        points += [(ts, v) for ts, v in hit[1].get(group_id, ()) if since <= lake.utc(ts) <= until]
    with _lock:  # files that left the window (or the lake) are forgotten
        keep, mine = {str(p) for p in files}, str(root / "groups" / f"cluster={cluster_name}")
        for name in [n for n in _files if n.startswith(mine) and n not in keep]:
            del _files[name]
        for name in list(_files)[: max(0, len(_files) - MAX_FILES)]:
            del _files[name]
    error = f"{len(errors)} snapshot file(s) could not be read" if errors else ""
    return LagTrend(sorted(points), hours, len(files), error)


def clear_cache() -> None:
    with _lock:
        _files.clear()
