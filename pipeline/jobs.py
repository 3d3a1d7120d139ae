"""The Spark jobs: snapshot lake window → report tables (same figures as :mod:`pipeline.reference`).

The partitions dataset is reduced at once to one aggregate per (snapshot, topic), small and
cached, and to leader counts per (snapshot, broker); everything else is computed from those,
from the brokers dataset (DescribeLogDirs sizes) and from the groups dataset.
Results are small and collected to the driver, which publishes them (:mod:`pipeline.reports`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from pipeline import lake
from pipeline.reference import DAY_MS, PERIODS, JobParams, enough_history

Progress = Callable[[float, str], None]


def _read(
    spark, lake_dir: Path, dataset: str, cluster: str, since: datetime, until: datetime, columns: list[str]
):
    from pyspark.sql import functions as F

    paths = lake.window_paths(lake_dir, dataset, cluster, since, until)
    if not paths:
        return None
    df = spark.read.option("basePath", str(Path(lake_dir) / dataset)).parquet(*paths)
    df = df.where((F.col("ts") >= F.lit(lake.utc(since))) & (F.col("ts") < F.lit(lake.utc(until))))
    return df.select(*columns).withColumn("ts", F.unix_millis("ts"))


def _collect(df) -> list[dict]:
    """A small result to the driver as Arrow (one batch transfer, no per-row pickling)."""
    return df.toArrow().to_pylist()


# Leader counts ride along in the (snapshot, topic) aggregate as one conditional count per broker
# of the brokers dataset, so the raw partition rows are scanned once; past this many brokers the
# aggregate would grow too wide and the leaders get their own (snapshot, leader) aggregation.
MAX_PIVOT_BROKERS = 64
WORKERS = 4  # driver threads submitting Spark jobs (two scans, then the small report jobs)


def _topic_frames(parts, broker_ids: list[int] | None):
    """The one pass over the raw partition rows: one aggregate per (snapshot, topic), cached.

    With ``broker_ids`` it also counts the leaders per broker (``leaders_<i>``, the i-th id).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    pos = lambda c: F.greatest(F.col(c), F.lit(0))  # noqa: E731 - -1 means unknown
    leader_counts = [
        F.count(F.when(F.col("leader") == F.lit(b), 1)).alias(f"leaders_{i}")
        for i, b in enumerate(broker_ids or [])
    ]
    topic_ts = parts.groupBy("ts", "topic").agg(
        F.sum(pos("size_bytes")).alias("size"),
        F.max(pos("size_bytes")).alias("max_part"),
        F.sum(pos("log_end_offset")).alias("end"),
        F.sum(pos("log_start_offset")).alias("start"),
        F.count(F.lit(1)).alias("partitions"),
        F.max("retention_ms").alias("retention_ms"),
        F.max("retention_bytes").alias("retention_bytes"),
        *leader_counts,
    )
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


def _leaders(parts, topic_ts, broker_ids: list[int] | None):
    """Leader count per (snapshot, broker): from the cached topic aggregate when it carries them."""
    from pyspark.sql import functions as F

    if broker_ids is None:
        return parts.groupBy("ts", "leader").agg(F.count(F.lit(1)).alias("leaders"))
    if not broker_ids:  # no broker rows in the window: nothing to join the counts to
        return topic_ts.select(
            "ts", F.lit(None).cast("long").alias("leader"), F.lit(0).cast("long").alias("leaders")
        ).where(F.lit(False))
    per_ts = topic_ts.groupBy("ts").agg(
        *[F.sum(f"leaders_{i}").alias(f"leaders_{i}") for i in range(len(broker_ids))]
    )
    pairs = F.array(
        *[
            F.struct(F.lit(b).cast("long").alias("leader"), F.col(f"leaders_{i}").alias("leaders"))
            for i, b in enumerate(broker_ids)
        ]
    )
    return per_ts.select("ts", F.inline(pairs))


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


def _disk(brokers):
    """Bytes on disk and capacity per (snapshot, broker), from the brokers dataset (DescribeLogDirs)."""
    from pyspark.sql import functions as F

    return brokers.groupBy("ts", "broker").agg(
        F.sum(F.greatest(F.coalesce("size_bytes", F.lit(0)), F.lit(0))).alias("size_bytes"),
        F.sum("total_bytes").alias("total_bytes"),
        F.sum("usable_bytes").alias("usable_bytes"),
    )


def _broker_disk(disk, leaders):
    from pyspark.sql import functions as F

    lead = leaders.withColumnRenamed("leader", "broker")
    return disk.join(lead, ["ts", "broker"], "left").select(
        "ts",
        F.col("broker").cast("long").alias("broker"),
        "size_bytes",
        "total_bytes",
        F.coalesce("leaders", F.lit(0)).cast("long").alias("leaders"),
    )


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


def _group_frames(groups):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    per_ts = groups.groupBy("group", "topic", "ts").agg(
        F.sum("lag").alias("sum"), F.max("lag").alias("max"), F.sum("committed_offset").alias("committed")
    )
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
) -> dict[str, list[dict]]:
    """Every report for one cluster and window [since, until). Re-running a window gives the same rows.

    Each raw dataset is scanned once: the partition rows into the cached (snapshot, topic)
    aggregate, the group rows into the cached (group, topic, snapshot) aggregate; every report
    is then a small Spark job over those. The jobs are submitted from a few driver threads so
    the two scans share the cores and the small jobs' planning and scheduling overlap.
    """
    params = params or JobParams()
    step = progress or (lambda _f, _t: None)
    parts = _read(
        spark,
        lake_dir,
        "partitions",
        cluster,
        since,
        until,
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
    brokers = _read(
        spark,
        lake_dir,
        "brokers",
        cluster,
        since,
        until,
        ["ts", "broker", "size_bytes", "total_bytes", "usable_bytes"],
    )
    groups = _read(
        spark, lake_dir, "groups", cluster, since, until, ["ts", "group", "topic", "lag", "committed_offset"]
    )
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
        step(0.1, "scanning partition and group snapshots")
        # The scans first: the thread pool starts tasks in submission order, so every report
        # task below waits on a scan that is already running.
        group_scan = topic_scan = disk = None
        if groups is not None:
            per_ts, lag, group_summary = _group_frames(groups)
            group_scan = submit("group scan", lambda: materialize(per_ts))
        if parts is not None:
            disk = _disk(brokers).cache() if brokers is not None else None

            def scan_partitions():
                ids = None
                if disk is not None:
                    found = sorted(r[0] for r in materialize(disk).select("broker").distinct().collect())
                    ids = found if len(found) <= MAX_PIVOT_BROKERS else None
                return ids, materialize(_topic_frames(parts, ids))

            topic_scan = submit("partition scan", scan_partitions)

            def over_topics(report):
                return lambda: _collect(report(topic_scan.result()[1]))

            submit("cluster_size", over_topics(lambda t: _cluster_size(t, disk)))
            submit("topic_growth", over_topics(_topic_growth))
            submit("topic_summary", over_topics(lambda t: _topic_summary(t, params)))
            if disk is not None:

                def broker_disk():
                    ids, topic_ts = topic_scan.result()
                    return _collect(_broker_disk(disk, _leaders(parts, topic_ts, ids)))

                submit("broker_disk", broker_disk)
                submit("broker_forecast", lambda: _collect(_broker_forecast(disk, params)))
        if group_scan is not None:
            submit("group_lag", lambda: (group_scan.result(), _collect(lag))[1])
            submit("group_summary", lambda: (group_scan.result(), _collect(group_summary))[1])
        for done, (name, task) in enumerate(tasks.items(), 1):
            result = task.result()  # progress is reported from the caller's thread only
            step(0.1 + 0.85 * done / len(tasks), name)
            if not name.endswith(" scan"):
                out[name] = result
        if "topic_summary" in out:
            out["idle_topics"] = _idle(out["topic_summary"], out.get("group_summary"), params)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for df in cached:
            df.unpersist()
    step(1.0, "done")
    return out
