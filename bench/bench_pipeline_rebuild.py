"""A rebuild of the pipeline (Spark) vs a plain single-pass Spark aggregation of the same columns.

Lake: ``bench/pipeline_lake.py`` at ``BENCH_PARTITIONS`` partitions (100,000 by default: 5,000
topics x 20, RF 3, 6 brokers, one consumer group per topic partition), 5-minute snapshots,
``BENCH_LAKE_DAYS`` days (0.25 by default: 6 hours, 72 snapshots = 7.2M partition rows, 7.2M group
rows; ``BENCH_PARTITIONS=1000 BENCH_LAKE_DAYS=30`` is the earlier 30-day shape, 8.64M + 8.64M).
Both sides in one Spark session (``local[2]``, the console's settings), warm JVM, alternating:

* rebuild: ``pipeline.jobs.run_jobs(rebuild=True)`` over the lake (drop the window's rollups,
  roll up every hour in Spark in passes of ``PIPELINE_ROLLUP_CHUNK_BYTES``, one aggregation per
  dataset each, write them, then every report over the rollups) and ``reports.publish``;
* single pass: one aggregation per dataset over the same raw files and columns, grouped by the
  rollups' keys ((snapshot, topic), (snapshot, broker), (group, topic, snapshot)), every value
  column summed and the result summed once more so nothing is pruned (every value decoded; not a
  ``count()``, which Parquet answers from the footers).

Prints ``RESULT pipeline_rebuild ratio=<rebuild / single pass> goal<=1.5`` last.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pipeline_lake as bl  # noqa: E402

from pipeline import jobs, lake, reports  # noqa: E402
from pipeline.reference import JobParams  # noqa: E402

DAYS = float(os.environ.get("BENCH_LAKE_DAYS", 0.25))
PARTITIONS = int(os.environ.get("BENCH_PARTITIONS", 100_000))


def main() -> None:
    root = bl.ensure(DAYS, PARTITIONS)
    spark = bl.session()
    since, end = bl.START, bl.until(DAYS)
    params = JobParams()
    paths = {ds: lake.window_paths(root, ds, bl.CLUSTER, since, end) for ds in lake.DATASETS}
    rolled = []

    def rebuild():
        got: dict = {}
        out = jobs.run_jobs(spark, root, bl.CLUSTER, since, end, params, now=end, rebuild=True, stats=got)
        assert got["engine"] == jobs.SPARK, got
        rolled.append(got["rolled_hours"])
        reports.publish(root, bl.CLUSTER, out, {"cluster": bl.CLUSTER, "bench": True})
        return out

    def single():
        return bl.decode_all(spark, paths, since, end, grouped=True)

    runs, cpu = bl.alternate_cpu(spark, {"rebuild": rebuild, "single pass": single})
    runs.report(
        {
            "rebuild": f"rebuild: roll up {rolled[-1]} hours + reports over {DAYS:g} days",
            "single pass": "single pass: one grouped aggregation per dataset, same columns",
        }
    )
    print(runs.ratios("rebuild", "single pass"))
    shape = f"days={DAYS:g} partitions={PARTITIONS} partition_rows={bl.shape(DAYS, PARTITIONS).snapshots * PARTITIONS}"
    bl.gate(spark, "pipeline_rebuild", runs, "rebuild", "single pass", 1.5, cpu, shape)


if __name__ == "__main__":
    main()
