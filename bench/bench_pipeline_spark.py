"""Every Spark job over 10,000,000 partition-snapshot rows on local[2] vs a scan-only pass.

Lake: 100 topics x 100 partitions (10,000 partitions, RF 3, 6 brokers) snapshotted every 5 minutes
for 1,000 snapshots (~3.5 days) = 10,000,000 partition rows, plus the broker and consumer-group rows
of the same snapshots. It is generated once (deterministically) under var/bench-lake and reused.
Scan-only: ``count()`` of the same Parquet files the jobs read. Jobs: ``pipeline.jobs.run_jobs``
(every report, collected). Both in the same Spark session after a warm-up count.
Prints ``RESULT pipeline_spark ratio=<jobs/scan> goal<=3`` last.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline import generate, lake  # noqa: E402
from pipeline.config import load  # noqa: E402
from pipeline.reference import JobParams  # noqa: E402

SHAPE = generate.Shape(
    topics=100, partitions=100, brokers=6, replication=3, snapshots=1000, interval_s=300, seed=11
)
START = datetime(2026, 1, 1, tzinfo=UTC)
CLUSTER = "bench"


def ensure_lake(root: Path) -> int:
    marker = root / f".complete-{SHAPE.topics}x{SHAPE.partitions}x{SHAPE.snapshots}-{SHAPE.seed}"
    rows = SHAPE.topics * SHAPE.partitions * SHAPE.snapshots
    if marker.exists():
        return rows
    started = time.perf_counter()
    written = generate.write_lake(root, CLUSTER, SHAPE, START, per_file=48)
    marker.write_text(str(written))
    print(f"generated {written} rows in {time.perf_counter() - started:.0f} s", flush=True)
    return written


def main() -> None:
    root = Path(
        os.environ.get("BENCH_LAKE_DIR", Path(__file__).resolve().parent.parent / "var" / "bench-lake")
    )
    rows = ensure_lake(root)
    from pipeline import jobs
    from pipeline.spark import build_session

    master = os.environ.get("SPARK_MASTER", "local[2]")
    spark = build_session(load(), master=master)
    until = START + timedelta(seconds=SHAPE.snapshots * SHAPE.interval_s)

    jvm_pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()

    def jvm_cpu_s() -> float:
        """CPU seconds of the Spark JVM (all threads: tasks, JIT, GC): steadier than wall time on a shared VM."""
        try:
            fields = Path(f"/proc/{jvm_pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            return float("nan")

    def scan() -> tuple[float, int]:
        started = time.perf_counter()
        total = 0
        for dataset in lake.DATASETS:
            paths = lake.window_paths(root, dataset, CLUSTER, START, until)
            total += spark.read.option("basePath", str(root / dataset)).parquet(*paths).count()
        return time.perf_counter() - started, total

    scan()  # warm-up: JVM, file listing, Parquet footers
    cpu = jvm_cpu_s()
    scan_s, counted = scan()
    scan_cpu = jvm_cpu_s() - cpu
    cpu = jvm_cpu_s()
    started = time.perf_counter()
    out = jobs.run_jobs(spark, root, CLUSTER, START, until, JobParams(idle_days=1, forecast_window_days=1))
    jobs_s = time.perf_counter() - started
    jobs_cpu = jvm_cpu_s() - cpu
    lake_bytes = sum(lake.lake_size(root, CLUSTER).values())
    days = SHAPE.snapshots * SHAPE.interval_s / 86400
    print(
        f"master={master} partition_rows={rows} rows_counted={counted} scan_s={scan_s:.2f} jobs_s={jobs_s:.2f} "
        f"scan_cpu_s={scan_cpu:.1f} jobs_cpu_s={jobs_cpu:.1f} report_rows={sum(len(v) for v in out.values())} lake_bytes={lake_bytes} "
        f"lake_bytes_per_day={lake_bytes / days:.0f}"
    )
    spark.stop()
    print(f"RESULT pipeline_spark ratio={jobs_s / scan_s:.2f} goal<=3")


if __name__ == "__main__":
    main()
