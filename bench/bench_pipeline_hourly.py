"""The console's hourly pipeline run (pyarrow in the worker) vs a pyarrow decode + group-by of the same hour.

Lake: ``bench/pipeline_lake.py`` at ``BENCH_PARTITIONS`` partitions (100,000 by default: 5,000
topics x 20, RF 3, 6 brokers, one consumer group per topic partition), 5-minute snapshots,
``BENCH_LAKE_DAYS`` days (1 by default; generated once, ~2 min, 550 MB), every closed hour already
rolled up (steady state) except the hour that just closed, whose 12 snapshots (1.2M partition rows,
1.2M group rows, 72 broker rows at 100,000 partitions) are written one file per snapshot and
dataset, as the collector writes them.

* hourly run: what the worker's ``pipeline.run`` does each hour: ``pipeline.jobs.run_jobs`` over the
  default 30-day window with ``now`` at the end of that hour (list the window's raw files and
  manifests, roll up the hour just closed in pyarrow, merge every report from the window's hour
  states) and ``reports.publish``; no Spark session is given (a run that asked for one fails the
  bench). Before each run (untimed) that hour's rollups and manifest are dropped again and the
  previous hour's run is done, so the window state (``pipeline.window_state``) holds the window one
  hour behind, as the worker finds it each hour: the run reads the new hour, drops the one that
  left the window and writes the state back.
* floor: the same hour's raw files, the same columns, read with ``pyarrow.dataset`` and grouped by
  the rollups' keys ((snapshot, topic, leader), (snapshot, broker), (group, topic, snapshot)) with
  every value column summed: the least work that gives the hour's aggregates. The three datasets
  at once in threads, as the console reads them.

Both sides in this process, same GC policy (setup frozen), alternating, 5 runs after a warm-up.
Prints ``RESULT pipeline_hourly ratio=<hourly run / floor> goal<=3`` last.
"""

from __future__ import annotations

import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness  # noqa: E402
import pipeline_lake as bl  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402

from pipeline import jobs, lake, reports, rollups  # noqa: E402
from pipeline.reference import JobParams  # noqa: E402

DAYS = float(os.environ.get("BENCH_LAKE_DAYS", 1))
PARTITIONS = int(os.environ.get("BENCH_PARTITIONS", 100_000))
WINDOW_DAYS = 30
KEYS = {**bl.KEYS, "partitions": ["ts", "topic", "leader"]}


def _no_spark():
    raise SystemExit("the hourly run asked for a Spark session")


def floor_of(paths: dict[str, list[str]]):
    """The floor: each dataset's hour read with pyarrow and grouped by its rollup keys, values summed."""

    def one(dataset: str) -> int:
        columns = rollups.RAW_COLUMNS[dataset]
        table = ds.dataset(paths[dataset], schema=lake.SCHEMAS[dataset], format="parquet").to_table(columns)
        values = [c for c in columns if c not in KEYS[dataset]]
        return (
            table.group_by(KEYS[dataset], use_threads=False).aggregate([(c, "sum") for c in values]).num_rows
        )

    def run() -> int:
        with ThreadPoolExecutor(max_workers=3) as pool:
            return sum(pool.map(one, lake.DATASETS))

    return run


def main() -> None:
    root = bl.ensure(DAYS, PARTITIONS)
    end = bl.until(DAYS)
    hour = end - timedelta(hours=1)
    since = end - timedelta(days=WINDOW_DAYS)
    params = JobParams()
    h_ms, end_ms = (int(t.timestamp() * 1000) for t in (hour, end))

    # steady state: every hour before the last rolled up (untimed; six hours at a time in pyarrow)
    rolled, t = 0, bl.START
    while t < end:
        t = min(end, t + timedelta(hours=6))
        rolled += jobs.roll_up(None, root, bl.CLUSTER, since, t, now=t, engine=jobs.ARROW)["rolled_hours"]
    print(
        f"lake {root}: {DAYS:g} days, {PARTITIONS} partitions; {rolled} hour(s) rolled up first", flush=True
    )
    new = rollups.list_raw(root, bl.CLUSTER, h_ms, end_ms)[h_ms]
    paths = {d: [lake.raw_path(root, bl.CLUSTER, f) for f in new if f.dataset == d] for d in lake.DATASETS}
    rows = lake.row_count(root, bl.CLUSTER, new)
    print(f"the hour just closed: {len(new)} raw files, {rows} rows, {sum(f.size for f in new)} bytes")

    rollup_s: list[float] = []
    engines: set[str] = set()

    def reopen() -> None:
        rollups.drop(root, bl.CLUSTER, h_ms, end_ms)  # the hour just closed: not rolled up yet
        # the previous hour's run: it leaves the window state one hour behind, as the worker finds it
        jobs.run_jobs(_no_spark, root, bl.CLUSTER, since - timedelta(hours=1), hour, params, now=hour)

    def hourly(_):
        got: dict = {}
        out = jobs.run_jobs(_no_spark, root, bl.CLUSTER, since, end, params, now=end, stats=got)
        assert got["rolled_hours"] == 1 and got["open_files"] == 0, got
        engines.add(got["engine"])
        rollup_s.append(got["rollup_s"])
        reports.publish(root, bl.CLUSTER, out, {"cluster": bl.CLUSTER, "bench": True})
        return out

    floor = floor_of(paths)
    assert floor() > 0
    pa.set_cpu_count(os.cpu_count() or 1)  # the same pyarrow pool for both sides
    harness.freeze()
    runs = harness.alternate({"hourly run": (reopen, hourly), "floor": floor}, runs=5)
    runs.report(
        {
            "hourly run": f"hourly run: roll up the closed hour + reports over {WINDOW_DAYS} days",
            "floor": "floor: pyarrow decode + group-by of the hour's raw rows",
        }
    )
    print(runs.ratios("hourly run", "floor"))
    part = statistics.median(rollup_s[1:])
    print(
        f"of the hourly run (median): listing + roll-up of the closed hour {part:.3f} s, "
        f"reports over the window + publish {runs.median('hourly run') - part:.3f} s; engine {sorted(engines)}"
    )
    harness.gate("pipeline_hourly", runs.median("hourly run") / runs.median("floor"), 3)


if __name__ == "__main__":
    main()
