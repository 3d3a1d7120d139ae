"""Deterministic synthetic snapshots for tests, demos and benchmarks.

The same arguments always give the same rows. The shape exercises every report: topics that
grow at different rates, idle topics (every 7th, no writes and a stalled consumer), skewed topics
(every 4th, partition 0 three times heavier), capped topics (every 5th, retention.bytes), and
consumer groups that keep up, fall behind or stall.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pipeline import lake

MSG_BYTES = 1000
BROKER_DISK_BYTES = 2 * 1024**4
RETENTION_MS = 7 * 86_400_000


@dataclass(frozen=True)
class Shape:
    """How big the synthetic cluster is and how its snapshots are spaced."""

    topics: int = 8
    partitions: int = 4
    brokers: int = 3
    replication: int = 2
    snapshots: int = 24
    interval_s: int = 3600
    seed: int = 7


def _topic_name(t: int) -> str:
    return f"topic-{t:03d}"


def _plan(shape: Shape) -> list[dict]:
    rng = random.Random(shape.seed)
    plan = []
    for t in range(shape.topics):
        idle = t % 7 == 6
        rate = 0.0 if idle else rng.uniform(1e3, 1e5)  # bytes/s for the whole topic
        retention_bytes = int(rng.uniform(2e7, 6e7)) if t % 5 == 4 else -1
        parts = []
        for p in range(shape.partitions):
            weight = 3.0 if (t % 4 == 3 and p == 0) else 1.0
            parts.append(
                {
                    "p": p,
                    "weight": weight,
                    "start_bytes": int(rng.uniform(1e6, 5e7)),
                    "replicas": [
                        (t + p + i) % shape.brokers + 1 for i in range(min(shape.replication, shape.brokers))
                    ],
                }
            )
        plan.append(
            {
                "t": t,
                "name": _topic_name(t),
                "rate": rate,
                "retention_bytes": retention_bytes,
                "parts": parts,
                "group_mode": "stalled" if idle else ("behind" if t % 3 == 1 else "keeping"),
            }
        )
    return plan


class _Fixed:
    """What every snapshot shares (names, replicas, retention, per-partition rates), built once;
    the varying columns are then computed per snapshot with pyarrow (a 30-day lake in minutes)."""

    def __init__(self, shape: Shape, plan: list[dict]) -> None:
        cols: dict[str, list] = {n: [] for n in ("t", "topic", "p", "reps", "start", "rate", "rb", "mode")}
        for topic in plan:
            tw = sum(p["weight"] for p in topic["parts"])
            for part in topic["parts"]:
                cols["t"].append(topic["t"])
                cols["topic"].append(topic["name"])
                cols["p"].append(part["p"])
                cols["reps"].append(part["replicas"])
                cols["start"].append(part["start_bytes"])
                cols["rate"].append(topic["rate"] * part["weight"] / tw)  # same operation order as before
                cols["rb"].append(topic["retention_bytes"])
                cols["mode"].append(topic["group_mode"])
        n = len(cols["p"])
        self.n = n
        self.topic = pa.array(cols["topic"], pa.string())
        self.partition = pa.array(cols["p"], pa.int32())
        self.replicas = pa.array(cols["reps"], pa.list_(pa.int32()))
        self.start_bytes = pa.array(cols["start"], pa.int64())
        self.rate = pa.array(cols["rate"], pa.float64())
        self.retention_bytes = pa.array(cols["rb"], pa.int64())
        self.capped = pc.greater_equal(self.retention_bytes, 0)
        self.retention_ms = pa.array([RETENTION_MS] * n, pa.int64())
        self.p64 = pa.array(cols["p"], pa.int64())
        # leader: the second replica when (k + p) % 11 == 10, one array per k % 11
        self.leaders = [
            pa.array(
                [
                    r[1] if len(r) > 1 and (k + p) % 11 == 10 else r[0]
                    for p, r in zip(cols["p"], cols["reps"], strict=True)
                ],
                pa.int32(),
            )
            for k in range(11)
        ]
        # replica_sizes repeat the size once per replica: a take() of the size array
        self.rep_offsets = pa.array([0, *itertools.accumulate(len(r) for r in cols["reps"])], pa.int32())
        self.rep_index = pa.array([i for i, r in enumerate(cols["reps"]) for _ in r], pa.int32())
        self.rep_broker = pa.array([b for r in cols["reps"] for b in r], pa.int32())
        self.stalled = pa.array([m == "stalled" for m in cols["mode"]])
        self.behind = pa.array([m == "behind" for m in cols["mode"]])
        self.stalled_committed = pa.array([s // MSG_BYTES for s in cols["start"]], pa.int64())
        self.keep_lag = [pa.array([(k + p) % 3 for p in cols["p"]], pa.int64()) for k in range(3)]
        self.group = pa.array([f"app-{t % 5}" for t in cols["t"]], pa.string())
        self.brokers = pa.array(range(1, shape.brokers + 1), pa.int32())
        self.log_dirs = pa.array([f"/var/lib/kafka/broker-{b}/data" for b in range(1, shape.brokers + 1)])


def _snapshot(shape: Shape, fixed: _Fixed, k: int, ts: datetime) -> dict[str, pa.Table]:
    """The k-th snapshot's three datasets."""
    f = fixed
    elapsed = k * shape.interval_s
    grown = pc.cast(pc.trunc(pc.multiply(f.rate, float(elapsed))), pa.int64())
    written = pc.add(f.start_bytes, grown)
    size = pc.if_else(f.capped, pc.min_element_wise(written, f.retention_bytes), written)
    end = pc.divide(written, MSG_BYTES)
    start = pc.subtract(end, pc.divide(size, MSG_BYTES))
    sizes = pa.ListArray.from_arrays(f.rep_offsets, pc.take(size, f.rep_index))
    behind = pc.max_element_wise(start, pc.subtract(pc.subtract(end, 10 * k), f.p64))
    keeping = pc.subtract(end, f.keep_lag[k % 3])
    committed = pc.if_else(f.stalled, f.stalled_committed, pc.if_else(f.behind, behind, keeping))
    lag = pc.max_element_wise(pc.subtract(end, committed), 0)
    per_broker = (
        pa.table({"broker": f.rep_broker, "size": pc.take(size, f.rep_index)})
        .group_by("broker")
        .aggregate([("size", "sum")])
    )
    used = dict(zip(per_broker["broker"].to_pylist(), per_broker["size_sum"].to_pylist(), strict=True))
    used_bytes = pa.array([used.get(b, 0) for b in range(1, shape.brokers + 1)], pa.int64())
    nb = shape.brokers

    def table(schema: pa.Schema, n: int, cols: dict) -> pa.Table:
        head = {
            "schema_version": pa.array([lake.SCHEMA_VERSION] * n, pa.int16()),
            "ts": pa.array([ts] * n, schema.field("ts").type),
        }
        return pa.table({**head, **cols}, schema=schema)

    return {
        "partitions": table(
            lake.PARTITIONS,
            f.n,
            {
                "topic": f.topic,
                "partition": f.partition,
                "leader": f.leaders[k % 11],
                "replicas": f.replicas,
                "isr": f.replicas,
                "replica_sizes": sizes,
                "log_start_offset": start,
                "log_end_offset": end,
                "size_bytes": size,
                "retention_ms": f.retention_ms,
                "retention_bytes": f.retention_bytes,
            },
        ),
        "brokers": table(
            lake.BROKERS,
            nb,
            {
                "broker": f.brokers,
                "log_dir": f.log_dirs,
                "size_bytes": used_bytes,
                "total_bytes": pa.array([BROKER_DISK_BYTES] * nb, pa.int64()),
                "usable_bytes": pc.subtract(BROKER_DISK_BYTES, used_bytes),
                "error": pa.nulls(nb, pa.string()),
            },
        ),
        "groups": table(
            lake.GROUPS,
            f.n,
            {
                "group": f.group,
                "topic": f.topic,
                "partition": f.partition,
                "committed_offset": committed,
                "log_end_offset": end,
                "lag": lag,
            },
        ),
    }


def snapshots(shape: Shape, start: datetime) -> Iterator[tuple[datetime, dict[str, pa.Table]]]:
    """Yield (ts, {dataset: table}) for each snapshot, oldest first."""
    fixed = _Fixed(shape, _plan(shape))
    start = lake.utc(start)
    for k in range(shape.snapshots):
        ts = start + timedelta(seconds=k * shape.interval_s)
        yield ts, _snapshot(shape, fixed, k, ts)


def write_lake(lake_dir: Path, cluster: str, shape: Shape, start: datetime, per_file: int = 1) -> int:
    """Write the snapshots into the lake, ``per_file`` snapshots per file (same UTC day); returns rows."""
    rows = 0
    pending: list[tuple[datetime, dict[str, pa.Table]]] = []

    def flush() -> None:
        first = pending[0][0]
        merged = {ds: pa.concat_tables([t[ds] for _, t in pending]) for ds in lake.DATASETS}
        lake.write_snapshot(
            lake_dir, cluster, first, merged, shape.interval_s, name=f"gen-{int(first.timestamp())}.parquet"
        )
        pending.clear()

    for ts, tables in snapshots(shape, start):
        if pending and (len(pending) >= per_file or pending[0][0].date() != ts.date()):
            flush()
        pending.append((ts, tables))
        rows += tables["partitions"].num_rows
    if pending:
        flush()
    return rows
