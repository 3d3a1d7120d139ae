"""The roll-up of raw snapshot rows in pyarrow, inside the batch worker: no Spark, no JVM.

An hourly run rolls up one closed hour (and reduces the open one): at 1,000 partitions 12,000
partition rows, at 100,000 partitions 1.2M, which pyarrow decodes and groups in milliseconds to a
second where a Spark job costs seconds of fixed overhead. :mod:`pipeline.jobs` sends a run here
below ``PIPELINE_SPARK_MIN_ROWS`` raw rows and to Spark (:mod:`pipeline.spark`) for rebuilds and
larger backfills; both give :func:`pipeline.rollups.finish` the same aggregates (the partition rows
per (snapshot, topic, leader), the broker rows per (snapshot, broker), the group rows per (group,
topic, snapshot)), with the same null rules: -1 (unknown) sizes and offsets count as 0, a sum of
nothing but nulls is null, maxima skip nulls. Sums of integers and maxima are exact in any order,
so the rollups, the hour states and the reports are the same whichever engine ran.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from pipeline import hours, lake, rollups
from pipeline.reference import HOUR_MS

I64 = pa.int64()


def read_raw(
    lake_dir: Path, cluster: str, files: list, dataset: str, lo_ms: int, hi_ms: int
) -> pa.Table | None:
    """The ``dataset`` rows of ``files`` with ts in [lo_ms, hi_ms), the rollup's columns, ts as epoch ms.

    Read through the lake's schema, so a file written before a nullable column existed gives nulls.
    """
    mine = [f for f in files if f.dataset == dataset]
    paths = sorted({lake.raw_path(lake_dir, cluster, f) for f in mine})
    if not paths:
        return None
    lo, hi = (
        pa.scalar(datetime.fromtimestamp(x / 1000, UTC), lake.SCHEMAS[dataset].field("ts").type)
        for x in (lo_ms, hi_ms)
    )
    data = ds.dataset(paths, schema=lake.SCHEMAS[dataset], format="parquet")
    # a closed hour's files (their hours from the footers' ts range) need no row filter
    inside = all(f.hours and lo_ms <= f.hours[0] and f.hours[-1] + HOUR_MS <= hi_ms for f in mine)
    where = None if inside else (ds.field("ts") >= lo) & (ds.field("ts") < hi)
    table = data.to_table(columns=rollups.RAW_COLUMNS[dataset], filter=where)
    return table.set_column(0, "ts", table["ts"].cast(I64))  # timestamp[ms] → epoch ms


def _pos(col) -> pa.ChunkedArray:
    """-1 (unknown) and null count as 0, as Spark's ``greatest(col, 0)``."""
    return pc.max_element_wise(col, pa.scalar(0, col.type), skip_nulls=True)


def _grouped(table: pa.Table, keys: list[str], columns: dict, aggs: list[tuple[str, str, str]]) -> pa.Table:
    """``table``'s ``keys`` plus ``columns`` (name: array), grouped by ``keys``; ``aggs`` are
    (column, function, output name); ``count_all`` counts the rows."""
    t = pa.table({**{k: table[k] for k in keys}, **columns})
    spec = [([], "count_all") if fn == "count_all" else (col, fn) for col, fn, _ in aggs]
    g = t.group_by(keys, use_threads=False).aggregate(spec)
    names = {("count_all" if fn == "count_all" else f"{col}_{fn}"): out for col, fn, out in aggs}
    return g.rename_columns([names.get(n, n) for n in g.column_names])


def _topics(parts: pa.Table) -> pa.Table:
    """Partition rows per (snapshot, topic, leader): what :func:`pipeline.rollups.finish` sums per topic
    and counts per leader."""
    size = _pos(parts["size_bytes"])
    columns = {
        "size_bytes": size,
        "end": _pos(parts["log_end_offset"]),
        "start": _pos(parts["log_start_offset"]),
        "retention_ms": parts["retention_ms"],
        "retention_bytes": parts["retention_bytes"],
    }
    aggs = [
        ("size_bytes", "sum", "size"),
        ("size_bytes", "max", "max_part"),
        ("end", "sum", "end"),
        ("start", "sum", "start"),
        ("", "count_all", "partitions"),
        ("retention_ms", "max", "retention_ms"),
        ("retention_bytes", "max", "retention_bytes"),
    ]
    return _grouped(parts, ["ts", "topic", "leader"], columns, aggs)


def _disk(brokers: pa.Table) -> pa.Table:
    columns = {
        "size_bytes": _pos(brokers["size_bytes"]),
        "total_bytes": brokers["total_bytes"],
        "usable_bytes": brokers["usable_bytes"],
    }
    aggs = [(c, "sum", c) for c in columns]
    return _grouped(brokers, ["ts", "broker"], columns, aggs)


def _groups(groups: pa.Table) -> pa.Table:
    columns = {"lag": groups["lag"], "committed_offset": groups["committed_offset"]}
    aggs = [("lag", "sum", "sum"), ("lag", "max", "max"), ("committed_offset", "sum", "committed")]
    return _grouped(groups, ["group", "topic", "ts"], columns, aggs)


REDUCE = {"partitions": ("topics", _topics), "brokers": ("disk", _disk), "groups": ("groups", _groups)}


def aggregate_raw(lake_dir: Path, cluster: str, files: list, lo_ms: int, hi_ms: int) -> dict:
    """The rollups and hour states of the raw rows in [lo_ms, hi_ms) of ``files`` (pyarrow).

    The three datasets are read and grouped at once (pyarrow releases the GIL while it decodes
    and groups); :func:`pipeline.rollups.finish` and :func:`pipeline.hours.derive` complete them
    exactly as after the Spark pass.
    """

    def one(dataset: str) -> pa.Table | None:
        table = read_raw(lake_dir, cluster, files, dataset, lo_ms, hi_ms)
        return None if table is None else REDUCE[dataset][1](table)

    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="pipeline-arrow") as pool:
        got = dict(zip(lake.DATASETS, pool.map(one, lake.DATASETS), strict=True))
    out = rollups.finish(got["partitions"], got["brokers"], got["groups"])
    return {**out, **hours.derive(out)}
