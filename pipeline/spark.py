"""The SparkSession, built from settings: local[*] by default, any master via SPARK_MASTER (DESIGN D8)."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from pipeline.config import PipelineConfig, load


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
