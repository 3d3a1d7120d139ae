"""The pipeline benches' lake and Spark session (not a bench itself).

Shape: ``partitions`` // 20 topics x 20 partitions (1,000 by default: 50 topics; RF 3, 6 brokers,
one consumer group per topic partition) snapshotted every 5 minutes, ``days`` days long (30 by
default: 8,640 snapshots = 8.64M partition rows + 8.64M group rows + 52k broker rows; a fraction
of a day for the larger shapes, e.g. 0.25 = 6 hours). All hours but the last are written one
file per hour and dataset (``gen-<ts>.parquet``, 12 snapshots each); the last hour is written as
the collector writes it, one file per snapshot and dataset (``snap-<slot>.parquet``). Generated
once per shape under ``var/bench-lake-<days>d`` (``var/bench-lake-<partitions>p-<hours>h`` for
other shapes; gitignored) and reused (a marker file names the
shape), rollups included once a bench has run there.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline import generate, lake, rollups

START = datetime(2026, 1, 1, tzinfo=UTC)
CLUSTER = "bench"
INTERVAL_S = 300
PER_HOUR = 3600 // INTERVAL_S


PARTITIONS = 1000


def shape(days: float, partitions: int = PARTITIONS) -> generate.Shape:
    return generate.Shape(
        topics=partitions // 20,
        partitions=20,
        brokers=6,
        replication=3,
        snapshots=int(days * 86400) // INTERVAL_S,
        interval_s=INTERVAL_S,
        seed=11,
    )


def lake_root(days: float, partitions: int = PARTITIONS) -> Path:
    name = f"bench-lake-{days:g}d" if partitions == PARTITIONS else f"bench-lake-{partitions}p-{days * 24:g}h"
    default = Path(__file__).resolve().parent.parent / "var" / name
    return Path(os.environ.get("BENCH_LAKE_DIR", default))


def until(days: float) -> datetime:
    return START + timedelta(days=days)


def ensure(days: float, partitions: int = PARTITIONS) -> Path:
    """The lake of ``days`` days and ``partitions`` partitions, generated when its marker is missing."""
    s = shape(days, partitions)
    root = lake_root(days, partitions)
    marker = root / f".complete-{s.topics}x{s.partitions}x{s.snapshots}-{s.interval_s}-{s.seed}"
    if marker.exists():
        return root
    started = time.perf_counter()
    last_hour = until(days) - timedelta(hours=1)
    pending: list = []

    def flush() -> None:
        first = pending[0][0]
        merged = {ds: _concat([t[ds] for _, t in pending]) for ds in lake.DATASETS}
        lake.write_snapshot(
            root, CLUSTER, first, merged, INTERVAL_S, name=f"gen-{int(first.timestamp())}.parquet"
        )
        pending.clear()

    rows = 0
    for ts, tables in generate.snapshots(s, START):
        rows += tables["partitions"].num_rows
        if ts >= last_hour:  # the hour just closed: one file per snapshot, as the collector writes
            lake.write_snapshot(root, CLUSTER, ts, tables, INTERVAL_S)
            continue
        pending.append((ts, tables))
        if len(pending) == PER_HOUR:
            flush()
    if pending:
        flush()
    marker.write_text(str(rows))
    print(
        f"generated {rows} partition rows ({days:g} days, {partitions} partitions) "
        f"in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return root


def _concat(tables):
    import pyarrow as pa

    return pa.concat_tables(tables)


def session():
    """The benches' Spark session: the console's settings, on ``local[2]`` unless SPARK_MASTER says."""
    from pipeline.config import load
    from pipeline.spark import build_session

    return build_session(load(), master=os.environ.get("SPARK_MASTER", "local[2]"))


def jvm_cpu(spark):
    """A function returning the Spark JVM's CPU seconds so far (tasks, JIT, GC)."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()

    def read() -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            return float("nan")

    return read


def alternate_cpu(spark, sides: dict, runs: int = 5):
    """``harness.alternate`` of ``{name: fn}`` (or ``(prepare, fn)``, ``fn(prepare())``) with each
    side's Spark JVM CPU seconds summed over the runs and the warm-up: returns the runs and the CPU
    seconds per run of each side."""
    import harness

    cpu = jvm_cpu(spark)
    used = dict.fromkeys(sides, 0.0)

    def measured(name: str, side):
        prepare, fn = side if isinstance(side, tuple) else (lambda: None, lambda _: side())

        def begin():
            return prepare(), cpu()

        def run(started):
            arg, c0 = started
            out = fn(arg)
            used[name] += cpu() - c0
            return out

        return begin, run

    timed = harness.alternate({name: measured(name, side) for name, side in sides.items()}, runs=runs)
    return timed, {name: seconds / (runs + 1) for name, seconds in used.items()}


def gate(spark, name: str, timed, ours: str, floor: str, goal: float, cpu: dict, shape: str) -> None:
    """The JVM CPU per run of both sides, Spark stopped, then ``harness.gate`` on median(ours) / median(floor)."""
    import harness

    print(
        f"JVM CPU s per run (incl. warm-up): {ours} {cpu[ours]:.1f}, {floor} {cpu[floor]:.1f}; "
        f"{shape} master={spark.sparkContext.master}"
    )
    ratio = timed.median(ours) / timed.median(floor)
    spark.stop()
    harness.gate(name, ratio, goal)


KEYS = {"partitions": ["ts", "topic"], "brokers": ["ts", "broker"], "groups": ["group", "topic", "ts"]}


def decode_all(
    spark, paths_by_dataset: dict[str, list[str]], lo: datetime, hi: datetime, grouped: bool = False
) -> int:
    """A floor: one plain Spark aggregation per dataset over the same columns the pipeline reads,
    with ts in [lo, hi), that decodes every value: a global sum of each column (string lengths for
    names) or, ``grouped``, the sums per (snapshot, topic) / (snapshot, broker) / (group, topic,
    snapshot) then summed once more (so Spark cannot prune a column). Not ``count()``, which
    Parquet answers from the footers. The three run at once from driver threads, as the
    pipeline's aggregations do."""
    from concurrent.futures import ThreadPoolExecutor

    from pyspark.sql import functions as F

    # the pipeline's own columns, ts apart (it is the range filter and, ungrouped, its max)
    cols = {ds: [c for c in rollups.RAW_COLUMNS[ds] if c != "ts"] for ds in lake.DATASETS}

    def one(ds: str) -> int:
        df = spark.read.parquet(*paths_by_dataset[ds]).where(
            (F.col("ts") >= F.lit(lo)) & (F.col("ts") < F.lit(hi))
        )
        if grouped:
            values = [c for c in cols[ds] if c not in KEYS[ds]]
            df = df.groupBy(*KEYS[ds]).agg(*[F.sum(c).alias(c) for c in values])
            return df.agg(F.count(F.lit(1)), *[F.sum(c) for c in values]).collect()[0][0]
        aggs = [F.count(F.lit(1)), F.max("ts")]
        aggs += [F.sum(F.length(c)) if c in ("topic", "group") else F.sum(c) for c in cols[ds]]
        return df.agg(*aggs).collect()[0][0]

    with ThreadPoolExecutor(max_workers=3) as pool:
        return sum(pool.map(one, [ds for ds in lake.DATASETS if paths_by_dataset.get(ds)]))
