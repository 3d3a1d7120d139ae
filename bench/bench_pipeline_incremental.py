"""The incremental pipeline run in Spark on a 30-day lake vs one plain Spark decode pass over that hour's
new raw rows.

The hourly run itself rolls up in pyarrow (``bench_pipeline_hourly``); Spark takes a run of
``PIPELINE_SPARK_MIN_ROWS`` raw rows or more (a backfill, a large cluster's hour). This bench keeps
that path measured: the run is made with ``engine="spark"``.

Lake: ``bench/pipeline_lake.py`` (1,000 partitions, RF 3, 6 brokers, 5-minute snapshots, 30 days;
``BENCH_LAKE_DAYS=1`` or ``7`` for the per-hour cost at other ages), every closed hour already
rolled up (steady state) except the hour that just closed, whose 12 snapshots (12,000 partition
rows, 12,000 group rows, 72 broker rows) are the new raw rows. Both sides in one Spark session
(``local[2]``), alternating:

* hourly run: ``pipeline.jobs.run_jobs(engine="spark")`` over the default 30-day window with ``now`` at the end
  of that hour (roll up the hour just closed, then every report over the window's rollups) and
  ``reports.publish``; before each run (untimed) that hour's rollups are dropped again;
* decode: one aggregation per dataset over that hour's raw files, the same columns, summing
  every value (so every value is decoded; not a ``count()``).

Prints ``RESULT pipeline_incremental ratio=<hourly run / decode> goal<=2`` last.
"""

from __future__ import annotations

import os
import statistics
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pipeline_lake as bl  # noqa: E402

from pipeline import jobs, lake, reports, rollups  # noqa: E402
from pipeline.reference import JobParams  # noqa: E402

DAYS = int(os.environ.get("BENCH_LAKE_DAYS", 30))
WINDOW_DAYS = 30


def main() -> None:
    root = bl.ensure(DAYS)
    spark = bl.session()
    end = bl.until(DAYS)
    hour = end - timedelta(hours=1)
    since = end - timedelta(days=WINDOW_DAYS)
    params = JobParams()
    h_ms, end_ms = (int(t.timestamp() * 1000) for t in (hour, end))

    stats: dict = {}
    jobs.run_jobs(spark, root, bl.CLUSTER, since, end, params, now=end, stats=stats, engine=jobs.SPARK)
    print(f"lake {root}: {DAYS} days; first run rolled up {stats['rolled_hours']} hour(s)", flush=True)
    new = rollups.list_raw(root, bl.CLUSTER, h_ms, end_ms)[h_ms]
    paths = {
        ds: [lake.raw_path(root, bl.CLUSTER, f) for f in new if f.dataset == ds]
        for ds in ("partitions", "brokers", "groups")
    }
    print(f"new raw files of the hour just closed: {len(new)} ({sum(f.size for f in new)} bytes)")

    rollup_s: list[float] = []

    def reopen() -> None:
        rollups.drop(root, bl.CLUSTER, h_ms, end_ms)  # the hour just closed: not rolled up yet

    def hourly(_):
        got: dict = {}
        out = jobs.run_jobs(
            spark, root, bl.CLUSTER, since, end, params, now=end, stats=got, engine=jobs.SPARK
        )
        assert got["rolled_hours"] == 1 and got["open_files"] == 0 and got["engine"] == jobs.SPARK, got
        rollup_s.append(got["rollup_s"])
        reports.publish(root, bl.CLUSTER, out, {"cluster": bl.CLUSTER, "bench": True})
        return out

    def decode():
        return bl.decode_all(spark, paths, hour, end)

    runs, cpu = bl.alternate_cpu(spark, {"hourly run": (reopen, hourly), "decode": decode})
    labels = {
        "hourly run": "hourly run: roll up the closed hour + reports over 30 days",
        "decode": "decode: one aggregation per dataset of the hour's raw rows",
    }
    runs.report(labels)
    print(runs.ratios("hourly run", "decode"))
    part = statistics.median(rollup_s[1:])
    print(
        f"of the hourly run (median): roll-up of the closed hour {part:.2f} s "
        f"({part / runs.median('decode'):.2f}x the decode), reports over the window "
        f"{runs.median('hourly run') - part:.2f} s"
    )
    bl.gate(
        spark,
        "pipeline_incremental",
        runs,
        "hourly run",
        "decode",
        2,
        cpu,
        f"days={DAYS} partitions=1000 interval=300s",
    )


if __name__ == "__main__":
    main()
