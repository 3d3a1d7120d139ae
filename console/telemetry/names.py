"""The names in a cluster's latest telemetry snapshot: its topics and its consumer groups.

The cross-cluster search reads them here, never from Kafka: only the name column (and ``ts``) of
the newest ``partitions`` or ``groups`` file (``pipeline/lake.py``), the names of the file's newest
snapshot made distinct and sorted into one Arrow array (and its lower-cased twin when some name has an
upper-case letter). That array is kept until a newer file
replaces it (keyed by the file's name, mtime and size, as ``sizes``), for at most
``FLEET_SEARCH_CACHED_FILES`` (cluster, dataset) pairs, the least recently searched dropped first.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from django.conf import settings

from console.telemetry.lakefiles import NewestFileCache, file_version, latest_file
from pipeline import config as pipeline_config

log = logging.getLogger(__name__)

# dataset -> its name column
NAME_COLUMNS = {"partitions": "topic", "groups": "group"}


def _no_names() -> pa.Array:
    return pa.array([], pa.string())


@dataclass(frozen=True)
class SnapshotNames:
    """The distinct names (sorted) of one dataset in a cluster's latest snapshot.

    ``path`` empty: no snapshot yet. ``ts`` is the snapshot's time (an empty file's: when it was written)."""

    path: str = ""
    ts: datetime | None = None
    names: pa.Array = field(default_factory=_no_names, repr=False)
    error: str = ""  # the latest file could not be read
    folded: pa.Array = field(default_factory=_no_names, repr=False)  # ``fold(names)``

    @property
    def has_snapshot(self) -> bool:
        return bool(self.path) and not self.error


def read_names(path: Path, column: str) -> SnapshotNames:
    """The distinct values of ``column`` in the newest snapshot one file holds, sorted."""
    with pq.ParquetFile(path) as f:  # one known file: no dataset discovery (read_table's), ~2x faster
        table = f.read(columns=["ts", column])
    if table.num_rows == 0:  # a snapshot that found nothing (no group had committed offsets)
        written = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        return SnapshotNames(path=str(path), ts=written)
    ts = pc.max(table.column("ts"))
    newest = table.filter(pc.equal(table.column("ts"), ts)).column(column)
    names = pc.unique(newest.drop_null())
    names = names.take(pc.sort_indices(names))
    return SnapshotNames(path=str(path), ts=ts.as_py(), names=names, folded=fold(names))


def fold(names: pa.Array) -> pa.Array:
    """The names lower-cased, for a search that ignores case (a plain substring scan of these is about
    twice as fast as a case-insensitive one of the names); the names themselves when none has an upper
    case letter (most clusters' conventions), so they cost no second copy."""
    lowered = pc.utf8_lower(names)
    return names if pc.all(pc.equal(lowered, names)).as_py() in (True, None) else lowered


_cache = NewestFileCache(lambda: settings.FLEET_SEARCH_CACHED_FILES)  # (root, dataset, cluster) -> names
_lock = threading.Lock()
# (root, dataset, cluster) -> (the cluster directory's mtime, the newest day directory, its mtime, the
# newest file): a search asks every cluster's two datasets, and a day directory holds hundreds of
# snapshots, so the listing is redone only when a directory changed (a file renamed into place changes
# its directory's mtime). A directory changed within RACY_NS is always listed again: a second change
# in the same clock tick would leave the mtime as it was.
_newest: dict[tuple[str, str, str], tuple[int, Path, int, Path]] = {}
RACY_NS = 2_000_000_000


def _settled_mtime(path: Path) -> int | None:
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return None
    return mtime if time.time_ns() - mtime > RACY_NS else None


def newest_file(root: Path, cluster_name: str, dataset: str) -> Path | None:
    """``sizes.latest_file``, listed again only when the cluster's directories changed."""
    key = (str(root), dataset, cluster_name)
    top = _settled_mtime(root / dataset / f"cluster={cluster_name}")
    hit = _newest.get(key)
    if top is not None and hit is not None and hit[0] == top and _settled_mtime(hit[1]) == hit[2]:
        return hit[3]
    path = latest_file(root, cluster_name, dataset)
    if path is not None and top is not None and (day_mtime := _settled_mtime(path.parent)) is not None:
        with _lock:
            _newest[key] = (top, path.parent, day_mtime, path)
    return path


def latest_names(cluster_name: str, dataset: str, lake_dir: Path | None = None) -> SnapshotNames:
    """The names of ``dataset`` ("partitions": topics, "groups": groups) in the cluster's latest
    snapshot, read again only when a newer file appears."""
    column = NAME_COLUMNS[dataset]
    root = Path(lake_dir or pipeline_config.load().lake_dir)
    path = newest_file(root, cluster_name, dataset)
    version = file_version(path) if path is not None else None
    if version is None:
        return SnapshotNames()
    try:
        return _cache.get((str(root), dataset, cluster_name), version, lambda: read_names(path, column))
    except (OSError, pa.ArrowException) as exc:
        log.warning("telemetry snapshot %s unreadable: %s", path, exc)
        return SnapshotNames(path=str(path), error=f"the latest snapshot ({path.name}) could not be read")


def cached_count() -> int:
    """How many (cluster, dataset) name sets this process keeps (tests, the bound)."""
    return len(_cache)


def clear_cache() -> None:
    _cache.clear()
    with _lock:
        _newest.clear()
