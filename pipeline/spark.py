"""Spark: the session, built from settings (local[*] by default, any master via SPARK_MASTER; DESIGN
D8), and the roll-up of raw snapshot rows as Spark aggregations, for rebuilds and backfills (at or
above ``PIPELINE_SPARK_MIN_ROWS`` raw rows; below it :mod:`pipeline.arrow_engine` rolls up without a
JVM). Both engines give :func:`pipeline.rollups.finish` the same aggregates.
"""

from __future__ import annotations

import logging
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq

from pipeline import hours, lake, rollups
from pipeline.config import PipelineConfig, load
from pipeline.reference import HOUR_MS


def find_java_home() -> str | None:
    """JAVA_HOME if set, else the JDK of the ``java`` on PATH (the system's)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    if java is None:
        return None
    return str(Path(java).resolve().parent.parent)


def spark_conf(config: PipelineConfig, master: str | None = None) -> dict[str, str]:
    """Every setting the session is built with (SPARK_CONF entries override the defaults)."""
    conf = {
        "spark.master": master or config.spark_master,
        "spark.app.name": "kafka-console-pipeline",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(config.spark_shuffle_partitions),
        # cluster names like "123" must stay strings when Spark discovers the cluster=... directories
        "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.ui.enabled": "false",  # SPARK_CONF="spark.ui.enabled=true" to watch a run
    }
    conf.update(config.spark_conf)
    return conf


def build_session(config: PipelineConfig | None = None, master: str | None = None):
    """Get or create the process's SparkSession."""
    from pyspark.sql import SparkSession

    java_home = find_java_home()
    if java_home:
        os.environ.setdefault("JAVA_HOME", java_home)
    builder = SparkSession.builder
    for key, value in spark_conf(config or load(), master).items():
        builder = builder.config(key, value)
    # py4j logs at INFO from __del__ during interpreter shutdown, after logging's streams are closed
    logging.getLogger("py4j").setLevel(logging.WARNING)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


# Leader counts ride along in the (snapshot, topic) aggregate as one conditional count per broker
# up to this many brokers; past it the partition rows are aggregated per (snapshot, topic, leader).
MAX_PIVOT_BROKERS = 64
# Spans of raw rows up to this long are aggregated per leader with no pivot (see aggregate_raw).
PIVOT_AFTER_MS = 2 * HOUR_MS
# Past this many raw files Spark is given their date directories (with a ts filter) rather than
# the files: a longer list makes Spark list the paths with a job of its own.
MAX_LISTED_FILES = 32


def _read_raw(spark, lake_dir: Path, cluster: str, files: list, lo_ms: int, hi_ms: int, columns: list[str]):
    """The raw rows of ``files`` (one dataset) with ts in [lo_ms, hi_ms), ts as epoch ms."""
    from pyspark.sql import functions as F

    if not files:
        return None
    paths = sorted({lake.raw_path(lake_dir, cluster, f) for f in files})
    if len(paths) > MAX_LISTED_FILES:
        paths = sorted({str(Path(p).parent) for p in paths})
    df = spark.read.parquet(*paths)
    lo, hi = (datetime.fromtimestamp(x / 1000, UTC) for x in (lo_ms, hi_ms))
    df = df.where((F.col("ts") >= F.lit(lo)) & (F.col("ts") < F.lit(hi)))
    return df.select(*columns).withColumn("ts", F.unix_millis("ts"))


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
        return _read_raw(spark, lake_dir, cluster, by_ds[dataset], lo_ms, hi_ms, rollups.RAW_COLUMNS[dataset])

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
            meta = pq.read_metadata(lake.raw_path(lake_dir, cluster, f))
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
