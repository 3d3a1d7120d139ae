"""Topic sizes from the latest telemetry snapshot: available minutes after a cluster is registered.

The collector writes one ``partitions`` file per snapshot (``pipeline/lake.py``); the topic pages
read the newest one with pyarrow, only the columns they show, and keep it in memory until a newer
file replaces it (keyed by the file's name, mtime and size), so a 100,000-partition cluster costs
one read per snapshot interval per process, not one per page view.

A topic's size is the sum of its partitions' leader replica sizes (one copy of the data, what
DescribeLogDirs reports for the leader); "on disk" adds every replica.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
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
COLUMNS = ["ts", "topic", "partition", "size_bytes", "replica_sizes"]


@dataclass(frozen=True)
class TopicSize:
    """One topic in one snapshot. ``unknown`` partitions had no size (their leader did not answer)."""

    bytes: int  # the known partitions' leader replicas
    partitions: int
    unknown: int = 0

    @property
    def complete(self) -> bool:
        return self.unknown == 0

    @property
    def known(self) -> bool:
        """Whether any partition's size is known."""
        return self.unknown < self.partitions


@dataclass(frozen=True)
class PartitionSize:
    partition: int
    bytes: int | None  # the leader replica; None when unknown
    replica_bytes: tuple[int | None, ...] = ()  # aligned with the snapshot's replicas

    @property
    def disk_bytes(self) -> int:
        return sum(b for b in self.replica_bytes if b is not None)


@dataclass(frozen=True)
class SnapshotSizes:
    """The sizes of the latest snapshot of one cluster (``ts`` None: no snapshot yet)."""

    ts: datetime | None = None
    path: str = ""
    topics: Mapping[str, TopicSize] = field(default_factory=dict)
    error: str = ""  # the latest file could not be read
    table: pa.Table | None = field(default=None, repr=False)

    @property
    def has_snapshot(self) -> bool:
        return self.ts is not None

    def topic(self, name: str) -> TopicSize | None:
        return self.topics.get(name)

    def partitions(self, name: str) -> dict[int, PartitionSize]:
        """Each partition of one topic (empty when the snapshot does not have the topic)."""
        if self.table is None or name not in self.topics:
            return {}
        rows = self.table.filter(pc.equal(self.table.column("topic"), name)).to_pylist()
        return {
            r["partition"]: PartitionSize(
                r["partition"],
                r["size_bytes"] if r["size_bytes"] is not None and r["size_bytes"] >= 0 else None,
                tuple(b if b is not None and b >= 0 else None for b in r["replica_sizes"] or ()),
            )
            for r in rows
        }


def read_sizes(path: Path) -> SnapshotSizes:
    """The sizes of the last snapshot in one file (a file may hold several; the newest ``ts`` wins)."""
    table = pq.read_table(path, columns=COLUMNS)
    if table.num_rows == 0:
        return SnapshotSizes(ts=None, path=str(path))
    ts = pc.max(table.column("ts"))
    table = table.filter(pc.equal(table.column("ts"), ts)).drop_columns(["ts"])
    size = table.column("size_bytes")
    known = pc.fill_null(pc.greater_equal(size, 0), False)
    grouped = (
        table.append_column("known", pc.if_else(known, size, 0))
        .append_column("unknown", pc.cast(pc.invert(known), pa.int64()))
        .group_by("topic")
        .aggregate([("known", "sum"), ("unknown", "sum"), ("partition", "count")])
    )
    topics = {
        name: TopicSize(int(b), int(n), int(u))
        for name, b, u, n in zip(
            grouped.column("topic").to_pylist(),
            grouped.column("known_sum").to_pylist(),
            grouped.column("unknown_sum").to_pylist(),
            grouped.column("partition_count").to_pylist(),
            strict=True,
        )
    }
    return SnapshotSizes(ts=ts.as_py(), path=str(path), topics=topics, table=table)


# One cluster's sizes per (lake, cluster), least recently read first; at most as many clusters as the
# topic metadata snapshots keep (TOPIC_METADATA_CACHE_CLUSTERS): a process that has shown 50 clusters'
# topic lists keeps the last few, not 50 tables.
_cache = NewestFileCache(lambda: settings.TOPIC_METADATA_CACHE_CLUSTERS)


def latest_sizes(cluster_name: str, lake_dir: Path | None = None) -> SnapshotSizes:
    """Topic sizes from the cluster's latest snapshot, read again only when a newer file appears."""
    root = Path(lake_dir or pipeline_config.load().lake_dir)
    path = latest_file(root, cluster_name)
    version = file_version(path) if path is not None else None
    if version is None:
        return SnapshotSizes()
    try:
        return _cache.get((str(root), cluster_name), version, lambda: read_sizes(path))
    except (OSError, pa.ArrowException) as exc:
        log.warning("telemetry snapshot %s unreadable: %s", path, exc)
        return SnapshotSizes(error=f"the latest snapshot ({path.name}) could not be read: {exc}")


def clear_cache() -> None:
    _cache.clear()
