"""The pipeline run: snapshot lake window → report tables (same figures as :mod:`pipeline.reference`).

A run is incremental (:mod:`pipeline.rollups`): every closed hour of the window whose raw files
changed since it was last rolled up (or never was) is reduced in one Spark pass to its rollups,
one row per (snapshot, topic), (snapshot, broker) and (group, topic, snapshot), and, derived from
those on the driver, the hour's report states (:mod:`pipeline.hours`: one row per (topic, hour),
(group, topic, hour) and snapshot), written next to the lake. The reports are then merged on the
driver (:mod:`pipeline.windows`) from the window's hour states plus the still-open hour's raw
rows, reduced the same way in Spark and kept in memory: an hourly run reads one hour of raw rows
and a few rows per topic and hour of the window. ``rebuild=True`` drops the window's rollups and
recomputes them all. The driver publishes the reports (:mod:`pipeline.reports`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from pipeline import hours, lake, rollups, windows
from pipeline.reference import DAY_MS, HOUR_MS, JobParams, enough_history

Progress = Callable[[float, str], None]


# Leader counts ride along in the (snapshot, topic) aggregate as one conditional count per broker
# up to this many brokers; past it the partition rows are aggregated per (snapshot, topic, leader).
MAX_PIVOT_BROKERS = 64
# Spans of raw rows up to this long are aggregated per leader with no pivot (see aggregate_raw).
PIVOT_AFTER_MS = 2 * HOUR_MS
# Past this many raw files Spark is given their date directories (with a ts filter) rather than
# the files: a longer list makes Spark list the paths with a job of its own.
MAX_LISTED_FILES = 32
# The raw columns each dataset's rollup reads.
RAW_COLUMNS = {
    "partitions": [
        "ts",
        "topic",
        "leader",
        "size_bytes",
        "log_start_offset",
        "log_end_offset",
        "retention_ms",
        "retention_bytes",
    ],
    "brokers": ["ts", "broker", "size_bytes", "total_bytes", "usable_bytes"],
    "groups": ["ts", "group", "topic", "lag", "committed_offset"],
}


def _read_raw(spark, lake_dir: Path, cluster: str, files: list, lo_ms: int, hi_ms: int, columns: list[str]):
    """The raw rows of ``files`` (one dataset) with ts in [lo_ms, hi_ms), ts as epoch ms."""
    from pyspark.sql import functions as F

    if not files:
        return None
    paths = sorted({rollups.raw_path(lake_dir, cluster, f) for f in files})
    if len(paths) > MAX_LISTED_FILES:
        paths = sorted({str(Path(p).parent) for p in paths})
    df = spark.read.parquet(*paths)
    lo, hi = (datetime.fromtimestamp(x / 1000, UTC) for x in (lo_ms, hi_ms))
    df = df.where((F.col("ts") >= F.lit(lo)) & (F.col("ts") < F.lit(hi)))
    return df.select(*columns).withColumn("ts", F.unix_millis("ts"))


def _collect(df) -> list[dict]:
    """A small result to the driver as Arrow (one batch transfer, no per-row pickling)."""
    return df.toArrow().to_pylist()


def aggregate_raw(spark, lake_dir: Path, cluster: str, files: list, lo_ms: int, hi_ms: int) -> dict:
    """The rollups of the raw rows in [lo_ms, hi_ms) of ``files``: one Spark pass per dataset.

    One pass over the partition rows gives both the topic sums and the leader counts (see
    below; :func:`pipeline.rollups.finish` completes them on the driver, in Arrow); the
    aggregations are submitted from driver threads and come back as Arrow.
    """
    from pyspark.sql import functions as F

    by_ds = {ds: [f for f in files if f.dataset == ds] for ds in lake.DATASETS}
    pos = lambda c: F.greatest(F.col(c), F.lit(0))  # noqa: E731 - -1 means unknown
    frames = {}

    def read(dataset: str):
        return _read_raw(spark, lake_dir, cluster, by_ds[dataset], lo_ms, hi_ms, RAW_COLUMNS[dataset])

    parts = read("partitions")
    topic_sums = [
        F.sum(pos("size_bytes")).alias("size"),
        F.max(pos("size_bytes")).alias("max_part"),
        F.sum(pos("log_end_offset")).alias("end"),
        F.sum(pos("log_start_offset")).alias("start"),
        F.count(F.lit(1)).alias("partitions"),
        F.max("retention_ms").alias("retention_ms"),
        F.max("retention_bytes").alias("retention_bytes"),
    ]
    brokers = read("brokers")
    if brokers is not None:
        frames["disk"] = brokers.groupBy("ts", "broker").agg(
            F.sum(F.greatest(F.coalesce("size_bytes", F.lit(0)), F.lit(0))).alias("size_bytes"),
            F.sum("total_bytes").alias("total_bytes"),
            F.sum("usable_bytes").alias("usable_bytes"),
        )
    groups = read("groups")
    if groups is not None:
        frames["groups"] = groups.groupBy("group", "topic", "ts").agg(
            F.sum("lag").alias("sum"), F.max("lag").alias("max"), F.sum("committed_offset").alias("committed")
        )
    # Up to PIVOT_AFTER_MS of rows (an hourly run: one hour just closed, the open hour) the
    # partition rows are aggregated per (snapshot, topic, leader) and summed per (snapshot, topic)
    # on the driver. Over a longer span (a rebuild's chunks) the topic pass counts each broker's
    # leaders as one conditional count per broker id, so its rows come back one per (snapshot,
    # topic): the ids are every id in the range the broker files' footers give (a count for an id
    # that is no broker is dropped when the counts are joined to the broker rows); past
    # MAX_PIVOT_BROKERS ids, or without footer statistics, it waits for the broker pass's ids, and
    # past MAX_PIVOT_BROKERS brokers it aggregates per leader as well. The passes run at once.
    pivot = hi_ms - lo_ms > PIVOT_AFTER_MS
    ids = _broker_id_range(lake_dir, cluster, by_ds["brokers"]) if pivot else None
    if parts is not None and not pivot:
        frames["topics"] = parts.groupBy("ts", "topic", "leader").agg(*topic_sums)
    elif parts is not None and ids is not None:
        frames["topics"] = _pivoted(parts, topic_sums, ids)
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="pipeline-rollup") as pool:
        futures = {name: pool.submit(lambda df=df: df.toArrow()) for name, df in frames.items()}
        got = {name: f.result() for name, f in futures.items() if name == "disk"}
        if parts is not None and "topics" not in frames:
            ids = sorted(set(got["disk"]["broker"].to_pylist())) if "disk" in got else []
            if len(ids) <= MAX_PIVOT_BROKERS:
                topic_df = _pivoted(parts, topic_sums, ids)
            else:
                topic_df = parts.groupBy("ts", "topic", "leader").agg(*topic_sums)
            got["topics"] = topic_df.toArrow()
        got.update({name: f.result() for name, f in futures.items() if name != "disk"})
    out = rollups.finish(got.get("topics"), got.get("disk"), got.get("groups"))
    return {**out, **hours.derive(out)}


def _pivoted(parts, topic_sums: list, ids: list[int]):
    """The partition rows per (snapshot, topic), with one leader count per broker id."""
    from pyspark.sql import functions as F

    counts = [F.count(F.when(F.col("leader") == F.lit(b), 1)).alias(f"leaders_{b}") for b in ids]
    return parts.groupBy("ts", "topic").agg(*topic_sums, *counts)


def _broker_id_range(lake_dir: Path, cluster: str, files: list) -> list[int] | None:
    """Every id from the smallest to the largest broker id in the broker files' footer statistics;
    None without statistics or past MAX_PIVOT_BROKERS ids."""
    lo = hi = None
    for f in files:
        try:
            meta = pq.read_metadata(rollups.raw_path(lake_dir, cluster, f))
            col = meta.schema.names.index("broker")
        except (OSError, ValueError):
            return None
        for i in range(meta.num_row_groups):
            st = meta.row_group(i).column(col).statistics
            if st is None or not st.has_min_max:
                return None
            lo, hi = (st.min, st.max) if lo is None else (min(lo, st.min), max(hi, st.max))
    if lo is None or hi - lo + 1 > MAX_PIVOT_BROKERS:
        return None
    return list(range(lo, hi + 1))


def roll_up(
    spark,
    lake_dir: Path,
    cluster: str,
    since: datetime,
    until: datetime,
    now: datetime | None = None,
    rebuild: bool = False,
    progress: Progress | None = None,
) -> dict:
    """Bring the rollups of the window's closed hours up to date; return what the reports read.

    Closed hours are those ending by ``min(until, now)``. An hour is rolled up when it has raw files
    and no manifest naming exactly those files (never rolled, a late snapshot, a rewritten file);
    ``rebuild`` drops the window's rollups first and rolls up every closed hour. Returns
    ``closed_end`` (ms; the rollups cover the window before it), ``open`` (the rollups of the raw
    rows from there to ``until``, in memory) and counts for the run's record.
    """
    step = progress or (lambda _f, _t: None)
    since, until = lake.utc(since), lake.utc(until)
    now = lake.utc(now or datetime.now(UTC))
    first_ms, closed_end = rollups.hours_between(since, rollups.hour_floor(min(until, now)))
    until_ms, since_ms = int(until.timestamp() * 1000), int(since.timestamp() * 1000)
    list_end = -(-until_ms // HOUR_MS) * HOUR_MS
    with rollups.locked(lake_dir, cluster):
        by_hour = rollups.list_raw(lake_dir, cluster, first_ms, list_end)
        closed = {h: fs for h, fs in by_hour.items() if h < closed_end}
        if rebuild:
            rollups.drop(lake_dir, cluster, first_ms, closed_end)
            stale = closed
        else:
            stale = {h: fs for h, fs in closed.items() if not rollups.is_current(lake_dir, cluster, h, fs)}
        groups = rollups.chunks(stale)
        for i, hours in enumerate(groups):
            step(0.4 * i / max(1, len(groups)), f"rolling up {len(hours)} closed hour(s)")
            files = list({f.key: f for h in hours for f in stale[h]}.values())
            out = aggregate_raw(spark, lake_dir, cluster, files, hours[0], hours[-1] + HOUR_MS)
            rollups.write_hours(lake_dir, cluster, out, {h: stale[h] for h in hours})
    open_files = list({f.key: f for h, fs in by_hour.items() if h >= closed_end for f in fs}.values())
    lo = max(since_ms, closed_end)
    opened = aggregate_raw(spark, lake_dir, cluster, open_files, lo, until_ms) if open_files else None
    return {
        "closed_end": closed_end,
        "open": opened,
        "rolled_hours": len(stale),
        "closed_hours": len(closed),
        "open_files": len(open_files),
    }


def _read_kind(lake_dir: Path, cluster: str, kind: str, lo_ms: int, hi_ms: int) -> pa.Table:
    """A kind's rollup rows with their time column in [lo_ms, hi_ms), from its day files (pyarrow)."""
    schema = rollups.SCHEMAS[kind]
    if hi_ms <= lo_ms:
        return schema.empty_table()
    lo, hi = (datetime.fromtimestamp(x / 1000, UTC) for x in (lo_ms, hi_ms))
    files = rollups.rollup_files(lake_dir, kind, cluster, lo, hi)
    if not files:
        return schema.empty_table()
    col = ds.field(rollups.TIME[kind])
    data = ds.dataset(files, schema=schema, format="parquet")
    return data.to_table(filter=(col >= lo_ms) & (col < hi_ms))


def _window_tables(lake_dir: Path, cluster: str, since: datetime, state: dict) -> dict[str, pa.Table]:
    """Per kind, the window's rows the reports merge: hour states, cluster and broker rows per snapshot.

    Closed hours wholly in the window are read from their hour states; the window's first hour
    when the window starts inside it is derived again from its per-snapshot rollups cut at
    ``since``; the open part comes from ``state["open"]`` (the raw rows reduced in memory).
    """
    since_ms = int(lake.utc(since).timestamp() * 1000)
    closed_end = state["closed_end"]
    full = -(-since_ms // HOUR_MS) * HOUR_MS  # the first hour wholly in the window
    parts: dict[str, list[pa.Table]] = {k: [] for k in ("cluster", "brokers", "topic_hours", "group_hours")}
    for kind in ("cluster", "brokers"):
        parts[kind].append(_read_kind(lake_dir, cluster, kind, since_ms, closed_end))
    for kind in ("topic_hours", "group_hours"):
        parts[kind].append(_read_kind(lake_dir, cluster, kind, full, closed_end))
    if since_ms < full and since_ms < closed_end:  # the window's first hour, cut at since
        cut = {
            k: _read_kind(lake_dir, cluster, k, since_ms, min(full, closed_end)) for k in ("topics", "groups")
        }
        derived = hours.derive(cut)
        parts["topic_hours"].append(derived["topic_hours"])
        parts["group_hours"].append(derived["group_hours"])
    for kind, tables in parts.items():
        opened = (state["open"] or {}).get(kind)
        if opened is not None and opened.num_rows:
            tables.append(opened)
    return {k: pa.concat_tables([t.cast(rollups.SCHEMAS[k]) for t in v]) for k, v in parts.items()}


def _idle(topic_summary: list[dict], group_summary: list[dict] | None, params: JobParams) -> list[dict]:
    """Topics with no write and no consumer progress for ``idle_days`` before the last snapshot.

    A join of two reports already on the driver (one row per topic, one per group and topic), so
    it is done there.
    """
    if not topic_summary:
        return []
    end = max(t["last_ts"] for t in topic_summary)
    if not enough_history(min(t["first_ts"] for t in topic_summary), end, params):
        return []  # "idle" is a verdict too: not from a short look
    consumed: dict[str, int] = {}
    for g in group_summary or []:
        if g["last_progress_ts"] is not None:
            consumed[g["topic"]] = max(consumed.get(g["topic"], g["last_progress_ts"]), g["last_progress_ts"])
    idle = []
    for t in topic_summary:
        if t["topic"].startswith("__"):
            continue
        consume = consumed.get(t["topic"])
        seen = [ts for ts in (t["last_write_ts"], consume) if ts is not None]
        idle_days = (end - (max(seen) if seen else t["first_ts"])) / DAY_MS
        if idle_days >= params.idle_days:
            idle.append(
                {
                    "topic": t["topic"],
                    "partitions": t["partitions"],
                    "size_bytes": t["size_bytes"],
                    "last_write_ts": t["last_write_ts"],
                    "last_consume_ts": consume,
                    "idle_days": idle_days,
                }
            )
    return idle


def run_jobs(
    spark,
    lake_dir: Path,
    cluster: str,
    since: datetime,
    until: datetime,
    params: JobParams | None = None,
    progress: Progress | None = None,
    *,
    rebuild: bool = False,
    now: datetime | None = None,
    stats: dict | None = None,
) -> dict[str, list[dict] | pa.Table]:
    """Every report for one cluster and window [since, until). Re-running a window gives the same rows.

    A report is a list of row dicts or, for the large ones, an Arrow table (times in epoch ms;
    :func:`pipeline.reports.as_rows` gives dicts); :func:`pipeline.reports.publish` takes both.

    First :func:`roll_up` (the closed hours not rolled up yet, or all of them with ``rebuild``),
    then the reports merged on the driver from the window's hour states and the open hour's rows.
    ``stats`` (a dict) receives what the roll-up did and its seconds.
    """
    params = params or JobParams()
    step = progress or (lambda _f, _t: None)
    started = time.perf_counter()
    state = roll_up(spark, lake_dir, cluster, since, until, now=now, rebuild=rebuild, progress=step)
    if stats is not None:
        stats.update({k: v for k, v in state.items() if k != "open"}, rollup_s=time.perf_counter() - started)
    with rollups.locked(lake_dir, cluster, shared=True):  # no roll-up rewrites a day file under us
        return _reports(lake_dir, cluster, since, params, step, state)


def _reports(lake_dir: Path, cluster: str, since, params: JobParams, step, state: dict) -> dict:
    """Every report, merged on the driver from the window's hour states (:mod:`pipeline.windows`)."""
    step(0.45, "reading the window's rollups")
    t = _window_tables(lake_dir, cluster, since, state)
    step(0.6, "merging the hours")
    stamps = np.unique(t["cluster"]["ts"].to_numpy())
    out: dict[str, list[dict] | pa.Table] = {}
    out["topic_growth"], out["topic_summary"] = windows.topic_reports(t["topic_hours"], stamps, params)
    out["group_lag"], out["group_summary"] = windows.group_reports(t["group_hours"])
    out["cluster_size"] = windows.cluster_size(t["cluster"], t["brokers"])
    out["broker_disk"], out["broker_forecast"] = windows.broker_reports(t["brokers"], params)
    if not t["group_hours"].num_rows:
        del out["group_lag"], out["group_summary"]
    if not t["brokers"].num_rows:
        del out["broker_disk"], out["broker_forecast"]
    if t["topic_hours"].num_rows:
        out["idle_topics"] = _idle(out["topic_summary"], out.get("group_summary"), params)
    else:
        del out["topic_growth"], out["topic_summary"], out["cluster_size"]
    step(1.0, "done")
    return out
