"""The full 30-day rebuild of the pipeline vs a plain single-pass Spark aggregation of the same columns.

Lake: ``bench/pipeline_lake.py`` (1,000 partitions, RF 3, 6 brokers, 5-minute snapshots, 30 days:
8.64M partition rows, 8.64M group rows, 52k broker rows). Both sides in one Spark session
(``local[2]``), alternating:

* rebuild: ``pipeline.jobs.run_jobs(rebuild=True)`` over the 30 days (drop the window's rollups,
  roll up all 720 hours in one pass per dataset, write them, then every report over the rollups)
  and ``reports.publish``;
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

DAYS = int(os.environ.get("BENCH_LAKE_DAYS", 30))


def main() -> None:
    root = bl.ensure(DAYS)
    spark = bl.session()
    since, end = bl.START, bl.until(DAYS)
    params = JobParams()
    paths = {ds: lake.window_paths(root, ds, bl.CLUSTER, since, end) for ds in lake.DATASETS}
    rolled = []

    def rebuild():
        got: dict = {}
        out = jobs.run_jobs(spark, root, bl.CLUSTER, since, end, params, now=end, rebuild=True, stats=got)
        rolled.append(got["rolled_hours"])
        reports.publish(root, bl.CLUSTER, out, {"cluster": bl.CLUSTER, "bench": True})
        return out

    def single():
        return bl.decode_all(spark, paths, since, end, grouped=True)

    runs, cpu = bl.alternate_cpu(spark, {"rebuild": rebuild, "single pass": single})
    runs.report(
        {
            "rebuild": f"rebuild: roll up {rolled[-1]} hours + reports over {DAYS} days",
            "single pass": "single pass: one grouped aggregation per dataset, same columns",
        }
    )
    print(runs.ratios("rebuild", "single pass"))
    shape = f"days={DAYS} partition_rows={bl.shape(DAYS).snapshots * 1000}"
    bl.gate(spark, "pipeline_rebuild", runs, "rebuild", "single pass", 1.5, cpu, shape)


if __name__ == "__main__":
    main()
