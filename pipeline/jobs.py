"""The Spark jobs: snapshot lake window → report tables (same figures as :mod:`pipeline.reference`).

A run is incremental (:mod:`pipeline.rollups`): every closed hour of the window whose raw files
changed since it was last rolled up (or never was) is reduced in one Spark pass to its rollups,
one row per (snapshot, topic), (snapshot, broker) and (group, topic, snapshot), written next to
the lake; the reports then read the window's rollups plus the raw rows of the still-open hour only,
reduced the same way in memory. ``rebuild=True`` drops the window's rollups and recomputes them all.
Results are small and collected to the driver, which publishes them (:mod:`pipeline.reports`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from pipeline import lake, rollups
from pipeline.reference import DAY_MS, HOUR_MS, PERIODS, JobParams, enough_history

Progress = Callable[[float, str], None]


# Leader counts ride along in the (snapshot, topic) aggregate as one conditional count per broker
# up to this many brokers; past it the partition rows are aggregated per (snapshot, topic, leader).
MAX_PIVOT_BROKERS = 64
# Past this many raw files Spark is given their date directories (with a ts filter) rather than
# the files: a longer list makes Spark list the paths with a job of its own.
MAX_LISTED_FILES = 32
WORKERS = 4  # driver threads submitting Spark jobs (the scans, then the small report jobs)


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
    parts = _read_raw(
        spark,
        lake_dir,
        cluster,
        by_ds["partitions"],
        lo_ms,
        hi_ms,
        [
            "ts",
            "topic",
            "leader",
            "size_bytes",
            "log_start_offset",
            "log_end_offset",
            "retention_ms",
            "retention_bytes",
        ],
    )
    topic_sums = [
        F.sum(pos("size_bytes")).alias("size"),
        F.max(pos("size_bytes")).alias("max_part"),
        F.sum(pos("log_end_offset")).alias("end"),
        F.sum(pos("log_start_offset")).alias("start"),
        F.count(F.lit(1)).alias("partitions"),
        F.max("retention_ms").alias("retention_ms"),
        F.max("retention_bytes").alias("retention_bytes"),
    ]
    brokers = _read_raw(
        spark,
        lake_dir,
        cluster,
        by_ds["brokers"],
        lo_ms,
        hi_ms,
        ["ts", "broker", "size_bytes", "total_bytes", "usable_bytes"],
    )
    if brokers is not None:
        frames["disk"] = brokers.groupBy("ts", "broker").agg(
            F.sum(F.greatest(F.coalesce("size_bytes", F.lit(0)), F.lit(0))).alias("size_bytes"),
            F.sum("total_bytes").alias("total_bytes"),
            F.sum("usable_bytes").alias("usable_bytes"),
        )
    groups = _read_raw(
        spark,
        lake_dir,
        cluster,
        by_ds["groups"],
        lo_ms,
        hi_ms,
        ["ts", "group", "topic", "lag", "committed_offset"],
    )
    if groups is not None:
        frames["groups"] = groups.groupBy("group", "topic", "ts").agg(
            F.sum("lag").alias("sum"), F.max("lag").alias("max"), F.sum("committed_offset").alias("committed")
        )
    # The broker aggregate first (small): its broker ids let the partition pass count each
    # broker's leaders as one conditional count per id, so the partition rows are aggregated
    # per (snapshot, topic) in one pass; past MAX_PIVOT_BROKERS brokers they are aggregated per
    # (snapshot, topic, leader) instead (up to one row per leader and topic) and summed on the driver.
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="pipeline-rollup") as pool:
        futures = {name: pool.submit(lambda df=df: df.toArrow()) for name, df in frames.items()}
        got = {name: f.result() for name, f in futures.items() if name == "disk"}
        if parts is not None:
            ids = sorted(set(got["disk"]["broker"].to_pylist())) if "disk" in got else []
            if len(ids) <= MAX_PIVOT_BROKERS:
                counts = [F.count(F.when(F.col("leader") == F.lit(b), 1)).alias(f"leaders_{b}") for b in ids]
                topic_df = parts.groupBy("ts", "topic").agg(*topic_sums, *counts)
            else:
                topic_df = parts.groupBy("ts", "topic", "leader").agg(*topic_sums)
            got["topics"] = topic_df.toArrow()
        got.update({name: f.result() for name, f in futures.items() if name != "disk"})
    return rollups.finish(got.get("topics"), got.get("disk"), got.get("groups"))


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


def _window_frames(
    spark, lake_dir: Path, cluster: str, since: datetime, until: datetime, state: dict
) -> dict:
    """Per kind, the window's rows: the rollups before ``closed_end``, then the open hour's (in memory)."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    since_ms = int(lake.utc(since).timestamp() * 1000)
    closed_end = state["closed_end"]
    frames = {}
    for kind in rollups.KINDS:
        parts = []
        if closed_end > since_ms:
            end = datetime.fromtimestamp(closed_end / 1000, UTC)
            files = rollups.rollup_files(lake_dir, kind, cluster, since, end)
            if files:
                df = spark.read.schema(from_arrow_schema(rollups.SCHEMAS[kind])).parquet(*files)
                parts.append(
                    df.where((F.col("ts") >= F.lit(since_ms)) & (F.col("ts") < F.lit(closed_end))).select(
                        *rollups.SCHEMAS[kind].names
                    )
                )
        opened = (state["open"] or {}).get(kind)
        if opened is not None and opened.num_rows:
            parts.append(spark.createDataFrame(opened).select(*rollups.SCHEMAS[kind].names))
        if parts:
            df = parts[0]
            for p in parts[1:]:
                df = df.unionByName(p)
            frames[kind] = df
    return frames


def _topic_frames(topic_ts):
    """The (snapshot, topic) rollups with the per-topic deltas between snapshots, cached."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    # Deltas against the cluster's previous snapshot (``snap``, from the few distinct timestamps,
    # broadcast): a topic absent from it was created since and grew from nothing, so the topics'
    # growth adds up to the growth of the cluster's log bytes (as in pipeline.reference).
    stamps = topic_ts.select("ts").distinct()
    stamps = stamps.select("ts", F.lag("ts").over(Window.orderBy("ts")).alias("snap"))
    w = Window.partitionBy("topic").orderBy("ts")
    after_snap = F.col("snap").isNotNull()
    continued = F.coalesce(F.lag("ts").over(w) == F.col("snap"), F.lit(False))
    return (
        topic_ts.join(F.broadcast(stamps), "ts")
        .select(
            "*",
            F.when(continued, F.col("size") - F.lag("size").over(w))
            .when(after_snap, F.col("size"))
            .otherwise(F.lit(0))
            .alias("d_size"),
            F.when(continued, F.greatest(F.col("end") - F.lag("end").over(w), F.lit(0)))
            .when(after_snap, F.col("end"))
            .otherwise(F.lit(0))
            .alias("d_msgs"),
            F.when(after_snap, (F.col("ts") - F.col("snap")) / 1000.0).otherwise(F.lit(0.0)).alias("dt"),
        )
        .drop("snap")
        .cache()
    )


def _cluster_size(topic_ts, disk):
    from pyspark.sql import functions as F

    cluster_size = topic_ts.groupBy("ts").agg(
        F.sum("size").alias("log_bytes"),
        F.sum(F.col("end") - F.col("start")).alias("messages"),
        F.sum("partitions").alias("partitions"),
        F.count(F.lit(1)).alias("topics"),
    )
    if disk is not None:
        disk_ts = disk.groupBy("ts").agg(F.sum("size_bytes").alias("disk_bytes"))
        cluster_size = cluster_size.join(disk_ts, "ts", "left")
    else:
        cluster_size = cluster_size.withColumn("disk_bytes", F.lit(None))
    return cluster_size.select(
        "ts",
        "log_bytes",
        F.coalesce("disk_bytes", F.lit(0)).cast("long").alias("disk_bytes"),
        "messages",
        "partitions",
        "topics",
    )


def _rate(num, den):
    from pyspark.sql import functions as F

    return F.when(den != 0, num / den).otherwise(F.lit(0.0))


def _topic_growth(topic_ts):
    from pyspark.sql import functions as F

    frames = []
    for period, width in PERIODS.items():
        b = topic_ts.withColumn("bucket", F.floor(F.col("ts") / width) * width)
        frames.append(
            b.groupBy("topic", "bucket")
            .agg(
                F.max_by("size", "ts").alias("size_bytes"),
                F.sum("d_size").alias("bytes_growth"),
                F.sum("d_msgs").alias("messages_in"),
                F.sum("dt").alias("seconds"),
            )
            .select(
                "topic",
                F.lit(period).alias("period"),
                F.col("bucket").cast("long").alias("bucket"),
                "size_bytes",
                "bytes_growth",
                "messages_in",
                F.col("seconds").cast("double").alias("seconds"),
                _rate(F.col("messages_in"), F.col("seconds")).alias("write_rate"),
                _rate(F.col("bytes_growth"), F.col("seconds")).alias("bytes_rate"),
            )
        )
    return frames[0].unionByName(frames[1])


def _topic_summary(topic_ts, params: JobParams):
    from pyspark.sql import functions as F

    s = topic_ts.groupBy("topic").agg(
        F.min("ts").alias("first_ts"),
        F.max("ts").alias("last_ts"),
        F.max_by("partitions", "ts").alias("partitions"),
        F.max_by("size", "ts").alias("size_bytes"),
        F.max_by("max_part", "ts").alias("max_partition_bytes"),
        F.sum("d_size").alias("bytes_growth"),
        F.sum("dt").alias("span"),
        F.sum("d_msgs").alias("messages_in"),
        F.max_by("retention_ms", "ts").alias("retention_ms"),
        F.max_by("retention_bytes", "ts").alias("retention_bytes"),
        F.max(F.when(F.col("d_msgs") > 0, F.col("ts"))).alias("last_write_ts"),
    )
    span = F.col("span")  # seconds since the snapshot before the topic's first one, if any
    mean = F.col("size_bytes") / F.col("partitions")
    growth = F.col("bytes_growth")
    return s.select(
        "topic",
        "first_ts",
        "last_ts",
        "partitions",
        "size_bytes",
        "max_partition_bytes",
        mean.alias("mean_partition_bytes"),
        F.when(mean > 0, F.col("max_partition_bytes") / mean).alias("skew"),
        growth.alias("bytes_growth"),
        "messages_in",
        _rate(F.col("messages_in"), span).alias("write_rate"),
        # a rate per day is an extrapolation: none from less than min_history_h
        F.when(span * 1000 >= F.lit(params.min_history_ms), _rate(growth, span / 86400)).alias(
            "bytes_per_day"
        ),
        "retention_ms",
        "retention_bytes",
        F.when(F.col("retention_bytes") > 0, F.col("max_partition_bytes") / F.col("retention_bytes")).alias(
            "retention_fill"
        ),
        "last_write_ts",
    )


def _broker_disk(brokers):
    return brokers.select("ts", "broker", "size_bytes", "total_bytes", "leaders")


def _broker_forecast(disk, params: JobParams):
    """Per broker: the latest size and a least-squares slope over the last forecast window.

    The window ends at the last snapshot of any broker (``end``, joined in as a one-row frame).
    """
    from pyspark.sql import functions as F

    end = F.col("end")
    recent = F.col("ts") >= end - F.lit(params.forecast_window_days * DAY_MS)
    x = (F.col("ts") - end) / DAY_MS
    y = F.col("size_bytes").cast("double")
    s = (
        disk.crossJoin(disk.agg(F.max("ts").alias("end")))
        .groupBy("broker")
        .agg(
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
            F.max_by("size_bytes", "ts").alias("size_bytes"),
            F.max_by("total_bytes", "ts").alias("total_bytes"),
            F.max_by("usable_bytes", "ts").alias("free_bytes"),
            F.count(F.when(recent, 1)).alias("n"),
            F.sum(F.when(recent, x)).alias("sx"),
            F.sum(F.when(recent, y)).alias("sy"),
            F.sum(F.when(recent, x * x)).alias("sxx"),
            F.sum(F.when(recent, x * y)).alias("sxy"),
        )
    )
    den = F.col("n") * F.col("sxx") - F.col("sx") * F.col("sx")
    history = (F.col("last_ts") - F.col("first_ts")) >= F.lit(params.min_history_ms)
    slope = F.when(
        (F.col("n") >= 2) & (den != 0) & history,
        (F.col("n") * F.col("sxy") - F.col("sx") * F.col("sy")) / den,
    )
    cap = F.lit(params.capacity_bytes).cast("long") if params.capacity_bytes else F.col("total_bytes")
    s = s.select(
        "broker", "last_ts", "size_bytes", cap.alias("capacity_bytes"), slope.alias("slope"), "free_bytes"
    )
    # as reference.headroom: the disk's free space, and what is left of a configured budget
    budget = (F.col("capacity_bytes") - F.col("size_bytes")) if params.capacity_bytes else F.lit(None)
    room = F.coalesce(
        F.least(budget, F.col("free_bytes")),
        F.when(F.col("capacity_bytes") != 0, F.col("capacity_bytes") - F.col("size_bytes")),
    )
    return s.select(
        "broker",
        "last_ts",
        "size_bytes",
        "capacity_bytes",
        F.when(F.col("capacity_bytes") != 0, F.col("size_bytes") / F.col("capacity_bytes")).alias(
            "used_ratio"
        ),
        F.col("slope").alias("slope_bytes_per_day"),
        F.when(room.isNotNull() & (F.col("slope") > 0), F.greatest(room, F.lit(0)) / F.col("slope")).alias(
            "days_to_full"
        ),
        F.col("free_bytes").cast("long").alias("free_bytes"),
    )


def _group_frames(per_ts):
    """Lag per hour and the summary per (group, topic), from the (group, topic, snapshot) rollups."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("group", "topic").orderBy("ts")
    per_ts = per_ts.withColumn("progress", F.col("committed") > F.lag("committed").over(w)).cache()
    lag = (
        per_ts.withColumn("bucket", F.floor(F.col("ts") / PERIODS["hour"]) * PERIODS["hour"])
        .groupBy("group", "topic", "bucket")
        .agg(F.max("max").alias("max_lag"), F.max("sum").alias("sum_lag"))
    )
    lag = lag.select(
        "group",
        "topic",
        F.lit("hour").alias("period"),
        F.col("bucket").cast("long").alias("bucket"),
        "max_lag",
        "sum_lag",
    )
    summary = per_ts.groupBy("group", "topic").agg(
        F.max("ts").alias("last_ts"),
        F.max_by("sum", "ts").alias("lag_sum"),
        F.max_by("max", "ts").alias("lag_max"),
        (F.max_by("sum", "ts") - F.min_by("sum", "ts")).alias("lag_sum_change"),
        F.max(F.when(F.col("progress"), F.col("ts"))).alias("last_progress_ts"),
    )
    return per_ts, lag, summary


def _idle(topic_summary: list[dict], group_summary: list[dict] | None, params: JobParams) -> list[dict]:
    """Topics with no write and no consumer progress for ``idle_days`` before the last snapshot.

    A join of two reports already on the driver (one row per topic, one per group and topic), so
    it is done there rather than as one more Spark job.
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
) -> dict[str, list[dict]]:
    """Every report for one cluster and window [since, until). Re-running a window gives the same rows.

    First :func:`roll_up` (the closed hours not rolled up yet, or all of them with ``rebuild``),
    then the reports over the window's rollups and the open hour's rows: the (snapshot, topic)
    rows with their deltas and the (group, topic, snapshot) rows are cached, and every report is
    a small Spark job over those, submitted from a few driver threads so their planning and
    scheduling overlap. ``stats`` (a dict) receives what the roll-up did and its seconds.
    """
    params = params or JobParams()
    step = progress or (lambda _f, _t: None)
    started = time.perf_counter()
    state = roll_up(spark, lake_dir, cluster, since, until, now=now, rebuild=rebuild, progress=step)
    if stats is not None:
        stats.update({k: v for k, v in state.items() if k != "open"}, rollup_s=time.perf_counter() - started)
    with rollups.locked(lake_dir, cluster, shared=True):  # no roll-up rewrites a day file under us
        return _reports(spark, lake_dir, cluster, since, until, params, step, state)


def _reports(spark, lake_dir: Path, cluster: str, since, until, params: JobParams, step, state: dict) -> dict:
    frames = _window_frames(spark, lake_dir, cluster, since, until, state)
    topics, brokers, groups = (frames.get(k) for k in rollups.KINDS)
    cached: list = []
    out: dict[str, list[dict]] = {}
    tasks: dict[str, Future] = {}
    pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="pipeline-job")

    def submit(name: str, fn: Callable[[], object]) -> Future:
        tasks[name] = pool.submit(fn)
        return tasks[name]

    def materialize(df):
        cached.append(df)
        df.count()
        return df

    try:
        step(0.45, "reading the window's rollups")
        # The cached frames first: the thread pool starts tasks in submission order, so every
        # report task below waits on a frame that is already being built.
        group_scan = topic_scan = None
        disk = brokers.cache() if brokers is not None else None
        if disk is not None:
            cached.append(disk)
        if groups is not None:
            per_ts, lag, group_summary = _group_frames(groups)
            group_scan = submit("group rollups", lambda: materialize(per_ts))
        if topics is not None:
            topic_scan = submit("topic rollups", lambda: materialize(_topic_frames(topics)))

            def over_topics(report):
                return lambda: _collect(report(topic_scan.result()))

            submit("cluster_size", over_topics(lambda t: _cluster_size(t, disk)))
            submit("topic_growth", over_topics(_topic_growth))
            submit("topic_summary", over_topics(lambda t: _topic_summary(t, params)))
        if disk is not None:
            submit("broker_disk", lambda: _collect(_broker_disk(disk)))
            submit("broker_forecast", lambda: _collect(_broker_forecast(disk, params)))
        if group_scan is not None:
            submit("group_lag", lambda: (group_scan.result(), _collect(lag))[1])
            submit("group_summary", lambda: (group_scan.result(), _collect(group_summary))[1])
        for done, (name, task) in enumerate(tasks.items(), 1):
            result = task.result()  # progress is reported from the caller's thread only
            step(0.45 + 0.5 * done / len(tasks), name)
            if not name.endswith(" rollups"):
                out[name] = result
        if "topic_summary" in out:
            out["idle_topics"] = _idle(out["topic_summary"], out.get("group_summary"), params)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for df in cached:
            df.unpersist()
    step(1.0, "done")
    return out
