"""Report tables: their schemas, and their atomic publication per cluster.

Both engines (Spark in :mod:`pipeline.jobs`, plain Python in :mod:`pipeline.reference`) return
``{report: [row dict]}`` (the Spark run gives its larger reports as Arrow tables: :func:`as_rows`)
with timestamps as epoch milliseconds; :func:`publish` writes them as
small Parquet files the console reads with pyarrow (no database tables, no migration).

A run is written to ``reports/cluster=<name>/run-<id>/`` and then made current by atomically
replacing the ``CURRENT`` pointer file, so a page never reads a mix of two runs.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

TS = pa.timestamp("ms", tz="UTC")
I64, F64, S = pa.int64(), pa.float64(), pa.string()

SCHEMAS: dict[str, pa.Schema] = {
    "cluster_size": pa.schema(
        [
            ("ts", TS),
            ("log_bytes", I64),
            ("disk_bytes", I64),
            ("messages", I64),
            ("partitions", I64),
            ("topics", I64),
        ]
    ),
    "topic_growth": pa.schema(
        [
            ("topic", S),
            ("period", S),
            ("bucket", TS),
            ("size_bytes", I64),
            ("bytes_growth", I64),
            ("messages_in", I64),
            ("seconds", F64),
            ("write_rate", F64),
            ("bytes_rate", F64),
        ]
    ),
    "topic_summary": pa.schema(
        [
            ("topic", S),
            ("first_ts", TS),
            ("last_ts", TS),
            ("partitions", I64),
            ("size_bytes", I64),
            ("max_partition_bytes", I64),
            ("mean_partition_bytes", F64),
            ("skew", F64),
            ("bytes_growth", I64),
            ("messages_in", I64),
            ("write_rate", F64),
            ("bytes_per_day", F64),
            ("retention_ms", I64),
            ("retention_bytes", I64),
            ("retention_fill", F64),
            ("last_write_ts", TS),
        ]
    ),
    "broker_disk": pa.schema(
        [("ts", TS), ("broker", I64), ("size_bytes", I64), ("total_bytes", I64), ("leaders", I64)]
    ),
    "broker_forecast": pa.schema(
        [
            ("broker", I64),
            ("last_ts", TS),
            ("size_bytes", I64),
            ("capacity_bytes", I64),
            ("used_ratio", F64),
            ("slope_bytes_per_day", F64),
            ("days_to_full", F64),
            ("free_bytes", I64),  # free space on the log dirs' disks at the last snapshot
        ]
    ),
    "group_lag": pa.schema(
        [("group", S), ("topic", S), ("period", S), ("bucket", TS), ("max_lag", I64), ("sum_lag", I64)]
    ),
    "group_summary": pa.schema(
        [
            ("group", S),
            ("topic", S),
            ("last_ts", TS),
            ("lag_sum", I64),
            ("lag_max", I64),
            ("lag_sum_change", I64),
            ("last_progress_ts", TS),
        ]
    ),
    "idle_topics": pa.schema(
        [
            ("topic", S),
            ("partitions", I64),
            ("size_bytes", I64),
            ("last_write_ts", TS),
            ("last_consume_ts", TS),
            ("idle_days", F64),
        ]
    ),
}

# Row order of each report, so both engines (and re-runs) publish identical files.
SORT_KEYS: dict[str, tuple[str, ...]] = {
    "cluster_size": ("ts",),
    "topic_growth": ("topic", "period", "bucket"),
    "topic_summary": ("topic",),
    "broker_disk": ("ts", "broker"),
    "broker_forecast": ("broker",),
    "group_lag": ("group", "topic", "period", "bucket"),
    "group_summary": ("group", "topic"),
    "idle_topics": ("topic",),
}


def sort_rows(name: str, rows: list[dict[str, Any]] | pa.Table) -> list[dict[str, Any]]:
    keys = SORT_KEYS[name]
    return sorted(as_rows(rows), key=lambda r: tuple(r[k] for k in keys))


def as_rows(rows: list[dict[str, Any]] | pa.Table) -> list[dict[str, Any]]:
    """A report as row dicts (the Spark run returns its large reports as Arrow tables, times in ms)."""
    return rows.to_pylist() if isinstance(rows, pa.Table) else rows


def as_table(name: str, rows: list[dict[str, Any]] | pa.Table) -> pa.Table:
    """A report as a table of its schema, in its row order."""
    schema = SCHEMAS[name]
    if isinstance(rows, pa.Table):
        table = pa.table({f.name: rows[f.name].cast(pa.int64() if f.type == TS else f.type) for f in schema})
        table = table.cast(schema)
    else:
        table = pa.Table.from_pylist(rows, schema=schema)
    return table.sort_by([(k, "ascending") for k in SORT_KEYS[name]])


def cluster_dir(lake_dir: Path, cluster: str) -> Path:
    return Path(lake_dir) / "reports" / f"cluster={cluster}"


def publish(lake_dir: Path, cluster: str, reports: dict[str, list[dict]], meta: dict[str, Any]) -> Path:
    """Write every report of one run, then switch CURRENT to it; older runs (but the previous) go."""
    root = cluster_dir(lake_dir, cluster)
    run = f"run-{uuid.uuid4().hex[:12]}"
    staging = root / f".{run}"
    staging.mkdir(parents=True)

    def write(name: str) -> None:
        pq.write_table(as_table(name, reports.get(name, [])), staging / f"{name}.parquet")

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="publish") as pool:
        list(pool.map(write, SCHEMAS))  # pyarrow encodes without the GIL
    (staging / "meta.json").write_text(json.dumps(meta, default=str, sort_keys=True))
    os.replace(staging, root / run)
    previous = current_run(lake_dir, cluster)
    pointer = root / f".CURRENT.{uuid.uuid4().hex}"
    pointer.write_text(run)
    os.replace(pointer, root / "CURRENT")
    for old in root.glob("run-*"):
        if old.name not in (run, previous):
            shutil.rmtree(old, ignore_errors=True)
    return root / run


def current_run(lake_dir: Path, cluster: str) -> str | None:
    try:
        return (cluster_dir(lake_dir, cluster) / "CURRENT").read_text().strip() or None
    except FileNotFoundError:
        return None


def read_meta(lake_dir: Path, cluster: str) -> dict[str, Any] | None:
    run = current_run(lake_dir, cluster)
    if run is None:
        return None
    try:
        return json.loads((cluster_dir(lake_dir, cluster) / run / "meta.json").read_text())
    except FileNotFoundError:
        return None


def read_report(lake_dir: Path, cluster: str, name: str) -> list[dict[str, Any]]:
    """The rows of one report of the current run ([] when the pipeline has not run yet)."""
    run = current_run(lake_dir, cluster)
    if run is None:
        return []
    path = cluster_dir(lake_dir, cluster) / run / f"{name}.parquet"
    if not path.exists():
        return []
    return pq.read_table(path).to_pylist()
