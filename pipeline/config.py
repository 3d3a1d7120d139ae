"""Pipeline and telemetry settings, read from the environment in one place.

These are read here (not in console/settings.py) so the Spark jobs run without Django,
e.g. through ``spark-submit`` on a cluster. Every name is listed in pipeline/README.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def _float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


def _spark_conf(text: str) -> dict[str, str]:
    """``SPARK_CONF="spark.executor.memory=4g;spark.executor.cores=2"`` → a dict."""
    pairs = (item.split("=", 1) for item in text.split(";") if "=" in item)
    return {k.strip(): v.strip() for k, v in pairs}


@dataclass(frozen=True)
class PipelineConfig:
    """Where the lake lives, how often snapshots are taken and how reports are judged."""

    lake_dir: Path
    snapshot_interval_s: int = 300
    pipeline_interval_s: int = 3600
    window_days: int = 30
    idle_days: float = 7.0
    forecast_window_days: float = 7.0
    min_history_h: float = 24.0  # no forecast or growth verdict from a shorter history of snapshots
    broker_capacity_bytes: int = 0  # 0: use the total size the broker's log dir reports
    spark_master: str = "local[*]"
    spark_shuffle_partitions: int = 8
    spark_conf: dict[str, str] = field(default_factory=dict, hash=False)
    # raw rows (every dataset) a run must reduce from which it rolls up with Spark, not pyarrow
    spark_min_rows: int = 5_000_000


def load() -> PipelineConfig:
    """The configuration from the environment (called at use time so tests can change it)."""
    var_dir = Path(os.environ.get("CONSOLE_VAR_DIR", BASE_DIR / "var"))
    return PipelineConfig(
        lake_dir=Path(os.environ.get("TELEMETRY_LAKE_DIR", var_dir / "lake")),
        snapshot_interval_s=_int("TELEMETRY_INTERVAL_S", 300),
        pipeline_interval_s=_int("PIPELINE_INTERVAL_S", 3600),
        window_days=_int("PIPELINE_WINDOW_DAYS", 30),
        idle_days=_float("PIPELINE_IDLE_DAYS", 7.0),
        forecast_window_days=_float("PIPELINE_FORECAST_WINDOW_DAYS", 7.0),
        min_history_h=_float("PIPELINE_MIN_HISTORY_H", 24.0),
        broker_capacity_bytes=_int("BROKER_DISK_CAPACITY_BYTES", 0),
        spark_master=os.environ.get("SPARK_MASTER", "local[*]"),
        spark_shuffle_partitions=_int("SPARK_SHUFFLE_PARTITIONS", 8),
        spark_conf=_spark_conf(os.environ.get("SPARK_CONF", "")),
        spark_min_rows=_int("PIPELINE_SPARK_MIN_ROWS", 5_000_000),
    )
