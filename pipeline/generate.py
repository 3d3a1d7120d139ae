"""Deterministic synthetic snapshots for tests, demos and benchmarks.

The same arguments always give the same rows. The shape exercises every report: topics that
grow at different rates, idle topics (every 7th, no writes and a stalled consumer), skewed topics
(every 4th, partition 0 three times heavier), capped topics (every 5th, retention.bytes), and
consumer groups that keep up, fall behind or stall.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pyarrow as pa

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


def _snapshot(shape: Shape, plan: list[dict], k: int) -> tuple[dict, dict, dict]:
    """Columns of the k-th snapshot's three datasets."""
    P = {n: [] for n in lake.PARTITIONS.names if n not in ("schema_version", "ts")}
    G = {n: [] for n in lake.GROUPS.names if n not in ("schema_version", "ts")}
    broker_bytes = dict.fromkeys(range(1, shape.brokers + 1), 0)
    elapsed = k * shape.interval_s
    total_weight_cache: dict[int, float] = {}
    for topic in plan:
        tw = total_weight_cache.setdefault(topic["t"], sum(p["weight"] for p in topic["parts"]))
        for part in topic["parts"]:
            written = part["start_bytes"] + int(topic["rate"] * part["weight"] / tw * elapsed)
            size = written if topic["retention_bytes"] < 0 else min(written, topic["retention_bytes"])
            end = written // MSG_BYTES
            start = end - size // MSG_BYTES
            reps = part["replicas"]
            leader = reps[1] if len(reps) > 1 and (k + part["p"]) % 11 == 10 else reps[0]
            sizes = [size] * len(reps)
            for b in reps:
                broker_bytes[b] += size
            P["topic"].append(topic["name"])
            P["partition"].append(part["p"])
            P["leader"].append(leader)
            P["replicas"].append(reps)
            P["isr"].append(reps)
            P["replica_sizes"].append(sizes)
            P["log_start_offset"].append(start)
            P["log_end_offset"].append(end)
            P["size_bytes"].append(size)
            P["retention_ms"].append(RETENTION_MS)
            P["retention_bytes"].append(topic["retention_bytes"])
            mode = topic["group_mode"]
            if mode == "stalled":
                committed = part["start_bytes"] // MSG_BYTES
            elif mode == "behind":
                committed = max(start, end - 10 * k - part["p"])  # lag grows by 10 messages a snapshot
            else:
                committed = end - (k + part["p"]) % 3
            G["group"].append(f"app-{topic['t'] % 5}")
            G["topic"].append(topic["name"])
            G["partition"].append(part["p"])
            G["committed_offset"].append(committed)
            G["log_end_offset"].append(end)
            G["lag"].append(max(0, end - committed))
    B = {"broker": [], "log_dir": [], "size_bytes": [], "total_bytes": [], "usable_bytes": [], "error": []}
    for b, used in broker_bytes.items():
        B["broker"].append(b)
        B["log_dir"].append(f"/var/lib/kafka/broker-{b}/data")
        B["size_bytes"].append(used)
        B["total_bytes"].append(BROKER_DISK_BYTES)
        B["usable_bytes"].append(BROKER_DISK_BYTES - used)
        B["error"].append(None)
    return P, B, G


def _table(schema: pa.Schema, cols: dict, ts: list) -> pa.Table:
    n = len(ts)
    arrays = {"schema_version": [lake.SCHEMA_VERSION] * n, "ts": ts, **cols}
    return pa.table({name: pa.array(arrays[name], type=schema.field(name).type) for name in schema.names})


def snapshots(shape: Shape, start: datetime) -> Iterator[tuple[datetime, dict[str, pa.Table]]]:
    """Yield (ts, {dataset: table}) for each snapshot, oldest first."""
    plan = _plan(shape)
    start = lake.utc(start)
    for k in range(shape.snapshots):
        ts = start + timedelta(seconds=k * shape.interval_s)
        P, B, G = _snapshot(shape, plan, k)
        yield (
            ts,
            {
                "partitions": _table(lake.PARTITIONS, P, [ts] * len(P["topic"])),
                "brokers": _table(lake.BROKERS, B, [ts] * len(B["broker"])),
                "groups": _table(lake.GROUPS, G, [ts] * len(G["topic"])),
            },
        )


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
