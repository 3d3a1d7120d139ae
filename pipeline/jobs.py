"""The Spark jobs: snapshot lake window → report tables (same figures as :mod:`pipeline.reference`).

The partitions dataset is reduced at once to one aggregate per (snapshot, topic), small and
cached, and to leader counts per (snapshot, broker); everything else is computed from those,
from the brokers dataset (DescribeLogDirs sizes) and from the groups dataset.
Results are small and collected to the driver, which publishes them (:mod:`pipeline.reports`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from pipeline import lake
from pipeline.reference import DAY_MS, PERIODS, JobParams

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
    return [row.asDict() for row in df.collect()]


def _topic_frames(parts):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    pos = lambda c: F.greatest(F.col(c), F.lit(0))  # noqa: E731 - -1 means unknown
    # Two narrow aggregations over the raw rows are ~40% cheaper than one by (ts, topic, leader).
    topic_ts = parts.groupBy("ts", "topic").agg(
        F.sum(pos("size_bytes")).alias("size"),
        F.max(pos("size_bytes")).alias("max_part"),
        F.sum(pos("log_end_offset")).alias("end"),
        F.sum(pos("log_start_offset")).alias("start"),
        F.count(F.lit(1)).alias("partitions"),
        F.max("retention_ms").alias("retention_ms"),
        F.max("retention_bytes").alias("retention_bytes"),
    )
    w = Window.partitionBy("topic").orderBy("ts")
    topic_ts = topic_ts.select(
        "*",
        F.coalesce(F.col("size") - F.lag("size").over(w), F.lit(0)).alias("d_size"),
        F.coalesce(F.greatest(F.col("end") - F.lag("end").over(w), F.lit(0)), F.lit(0)).alias("d_msgs"),
        F.coalesce((F.col("ts") - F.lag("ts").over(w)) / 1000.0, F.lit(0.0)).alias("dt"),
    ).cache()
    leaders = parts.groupBy("ts", "leader").agg(F.count(F.lit(1)).alias("leaders"))
    return topic_ts, leaders


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


def _topic_summary(topic_ts):
    from pyspark.sql import functions as F

    s = topic_ts.groupBy("topic").agg(
        F.min("ts").alias("first_ts"),
        F.max("ts").alias("last_ts"),
        F.max_by("partitions", "ts").alias("partitions"),
        F.max_by("size", "ts").alias("size_bytes"),
        F.max_by("max_part", "ts").alias("max_partition_bytes"),
        F.min_by("size", "ts").alias("first_size"),
        F.sum("d_msgs").alias("messages_in"),
        F.max_by("retention_ms", "ts").alias("retention_ms"),
        F.max_by("retention_bytes", "ts").alias("retention_bytes"),
        F.max(F.when(F.col("d_msgs") > 0, F.col("ts"))).alias("last_write_ts"),
    )
    span = (F.col("last_ts") - F.col("first_ts")) / 1000.0
    mean = F.col("size_bytes") / F.col("partitions")
    growth = F.col("size_bytes") - F.col("first_size")
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
        _rate(growth, span / 86400).alias("bytes_per_day"),
        "retention_ms",
        "retention_bytes",
        F.when(F.col("retention_bytes") > 0, F.col("max_partition_bytes") / F.col("retention_bytes")).alias(
            "retention_fill"
        ),
        "last_write_ts",
    )


def _broker_disk(brokers, leaders):
    from pyspark.sql import functions as F

    disk = brokers.groupBy("ts", "broker").agg(
        F.sum(F.greatest(F.coalesce("size_bytes", F.lit(0)), F.lit(0))).alias("size_bytes"),
        F.sum("total_bytes").alias("total_bytes"),
    )
    lead = leaders.withColumnRenamed("leader", "broker")
    return disk.join(lead, ["ts", "broker"], "left").select(
        "ts",
        F.col("broker").cast("long").alias("broker"),
        "size_bytes",
        "total_bytes",
        F.coalesce("leaders", F.lit(0)).cast("long").alias("leaders"),
    )


def _broker_forecast(disk, end: int, params: JobParams):
    from pyspark.sql import functions as F

    recent = F.col("ts") >= F.lit(end - params.forecast_window_days * DAY_MS)
    x = (F.col("ts") - F.lit(end)) / DAY_MS
    y = F.col("size_bytes").cast("double")
    s = disk.groupBy("broker").agg(
        F.max("ts").alias("last_ts"),
        F.max_by("size_bytes", "ts").alias("size_bytes"),
        F.max_by("total_bytes", "ts").alias("total_bytes"),
        F.count(F.when(recent, 1)).alias("n"),
        F.sum(F.when(recent, x)).alias("sx"),
        F.sum(F.when(recent, y)).alias("sy"),
        F.sum(F.when(recent, x * x)).alias("sxx"),
        F.sum(F.when(recent, x * y)).alias("sxy"),
    )
    den = F.col("n") * F.col("sxx") - F.col("sx") * F.col("sx")
    slope = F.when(
        (F.col("n") >= 2) & (den != 0), (F.col("n") * F.col("sxy") - F.col("sx") * F.col("sy")) / den
    )
    cap = F.lit(params.capacity_bytes).cast("long") if params.capacity_bytes else F.col("total_bytes")
    s = s.select("broker", "last_ts", "size_bytes", cap.alias("capacity_bytes"), slope.alias("slope"))
    return s.select(
        "broker",
        "last_ts",
        "size_bytes",
        "capacity_bytes",
        F.when(F.col("capacity_bytes") != 0, F.col("size_bytes") / F.col("capacity_bytes")).alias(
            "used_ratio"
        ),
        F.col("slope").alias("slope_bytes_per_day"),
        F.when(
            (F.col("capacity_bytes") != 0) & (F.col("slope") > 0),
            (F.col("capacity_bytes") - F.col("size_bytes")) / F.col("slope"),
        ).alias("days_to_full"),
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


def _idle(summary, group_summary, end: int, params: JobParams):
    from pyspark.sql import functions as F

    s = summary.where(~F.col("topic").startswith("__"))
    if group_summary is not None:
        consumed = group_summary.groupBy("topic").agg(F.max("last_progress_ts").alias("last_consume_ts"))
        s = s.join(consumed, "topic", "left")
    else:
        s = s.withColumn("last_consume_ts", F.lit(None).cast("long"))
    since = F.coalesce(F.greatest("last_write_ts", "last_consume_ts"), F.col("first_ts"))
    s = s.withColumn("idle_days", (F.lit(end) - since) / DAY_MS)
    return s.where(F.col("idle_days") >= params.idle_days).select(
        "topic", "partitions", "size_bytes", "last_write_ts", "last_consume_ts", "idle_days"
    )


def run_jobs(
    spark,
    lake_dir: Path,
    cluster: str,
    since: datetime,
    until: datetime,
    params: JobParams | None = None,
    progress: Progress | None = None,
) -> dict[str, list[dict]]:
    """Every report for one cluster and window [since, until). Re-running a window gives the same rows."""
    params = params or JobParams()
    step = progress or (lambda _f, _t: None)
    out: dict[str, list[dict]] = {}
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
        spark, lake_dir, "brokers", cluster, since, until, ["ts", "broker", "size_bytes", "total_bytes"]
    )
    groups = _read(
        spark, lake_dir, "groups", cluster, since, until, ["ts", "group", "topic", "lag", "committed_offset"]
    )
    cached = []
    try:
        summary = group_summary = None
        if parts is not None:
            step(0.1, "scanning partition snapshots")
            topic_ts, leaders = _topic_frames(parts)
            cached.append(topic_ts)
            from pyspark.sql import functions as F

            cluster_size = topic_ts.groupBy("ts").agg(
                F.sum("size").alias("log_bytes"),
                F.sum(F.col("end") - F.col("start")).alias("messages"),
                F.sum("partitions").alias("partitions"),
                F.count(F.lit(1)).alias("topics"),
            )
            if brokers is not None:
                disk_ts = brokers.groupBy("ts").agg(
                    F.sum(F.greatest(F.coalesce("size_bytes", F.lit(0)), F.lit(0))).alias("disk_bytes")
                )
                cluster_size = cluster_size.join(disk_ts, "ts", "left")
            else:
                cluster_size = cluster_size.withColumn("disk_bytes", F.lit(None))
            cluster_size = cluster_size.withColumn(
                "disk_bytes", F.coalesce("disk_bytes", F.lit(0)).cast("long")
            )
            out["cluster_size"] = _collect(cluster_size)
            step(0.4, "topic growth")
            out["topic_growth"] = _collect(_topic_growth(topic_ts))
            summary = _topic_summary(topic_ts).cache()
            cached.append(summary)
            out["topic_summary"] = _collect(summary)
            if brokers is not None:
                step(0.6, "broker disk and forecast")
                disk = _broker_disk(brokers, leaders).cache()
                cached.append(disk)
                out["broker_disk"] = _collect(disk)
                end = max((d["ts"] for d in out["broker_disk"]), default=None)
                out["broker_forecast"] = (
                    _collect(_broker_forecast(disk, end, params)) if end is not None else []
                )
        if groups is not None:
            step(0.8, "consumer lag")
            per_ts, lag, group_summary = _group_frames(groups)
            cached.append(per_ts)
            out["group_lag"] = _collect(lag)
            out["group_summary"] = _collect(group_summary)
        if summary is not None:
            end = max((t["last_ts"] for t in out["topic_summary"]), default=None)
            out["idle_topics"] = (
                _collect(_idle(summary, group_summary, end, params)) if end is not None else []
            )
    finally:
        for df in cached:
            df.unpersist()
    step(1.0, "done")
    return out
