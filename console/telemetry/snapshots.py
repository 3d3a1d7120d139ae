"""The telemetry collector: one snapshot per cluster per interval into the Parquet lake (DESIGN D8).

A snapshot is a handful of batched requests (one Metadata, ListOffsets per leader broker for the
earliest and the latest offsets, one DescribeLogDirs per broker, one DescribeConfigs for every
topic's retention, and the consumer groups' committed offsets when the gateway offers them),
turned into three Parquet files: partitions, brokers, groups (see ``pipeline/lake.py``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from django.utils import timezone

from console import access
from console.clusters.actions import gateway_for
from console.crypto import SecretUnreadable
from console.kafka import ConfigResource, KafkaOperationError, TopicPartition
from console.models import Cluster
from pipeline import config as pipeline_config
from pipeline import lake

log = logging.getLogger(__name__)

# The gateway method that answers committed offsets of consumer groups (asked of the gateway's owner):
# list_consumer_group_offsets(groups=None) -> {group: {TopicPartition: offset} | KafkaOperationError}


@dataclass
class RawSnapshot:
    """What the batched requests answered, before it becomes columns."""

    metadata: Any
    latest: dict
    earliest: dict
    log_dirs: dict
    configs: dict
    group_offsets: dict
    errors: list[str] = field(default_factory=list)
    rpc_seconds: float = 0.0


@dataclass(frozen=True)
class SnapshotResult:
    """The outcome of one collection for one cluster."""

    cluster: str
    ts: datetime
    skipped: bool = False
    partitions: int = 0
    brokers: int = 0
    group_rows: int = 0
    paths: dict = field(default_factory=dict)
    errors: tuple[str, ...] = ()
    rpc_seconds: float = 0.0
    total_seconds: float = 0.0


def fetch_snapshot(gw) -> RawSnapshot:
    """Every request a snapshot needs, each one batched (the imperative shell)."""
    started = time.perf_counter()
    errors: list[str] = []
    md = gw.list_topics_metadata()
    leaders = {TopicPartition(t.name, p.id): p.leader for t in md.topics for p in t.partitions}
    tps = list(leaders)
    latest = gw.list_offsets(tps, "latest", leaders=leaders)
    earliest = gw.list_offsets(tps, "earliest", leaders=leaders)
    # The brokers of this snapshot's metadata, so a broker that just restarted is asked too.
    log_dirs = gw.describe_log_dirs([b.id for b in md.brokers])
    configs: dict = {}
    try:
        configs = gw.describe_configs(
            [ConfigResource("TOPIC", t.name) for t in md.topics], include_documentation=False
        )
    except KafkaOperationError as exc:
        errors.append(f"retention configs: {exc.operator_text}")
    group_offsets: dict = {}
    try:
        group_offsets = gw.list_consumer_group_offsets()
    except KafkaOperationError as exc:
        errors.append(f"consumer groups: {exc.operator_text}")
    return RawSnapshot(
        md, latest, earliest, log_dirs, configs, group_offsets, errors, time.perf_counter() - started
    )


def _offset(answers: dict, tp: TopicPartition) -> int:
    got = answers.get(tp)
    return got.offset if got is not None and not isinstance(got, KafkaOperationError) else -1


def _retention(entries: Any, name: str) -> int | None:
    if not isinstance(entries, dict) or entries.get(name) is None or entries[name].value is None:
        return None
    try:
        return int(entries[name].value)
    except ValueError:
        return None


def _broker_rows(raw: RawSnapshot) -> tuple[list[tuple], dict[tuple[TopicPartition, int], int]]:
    """One row per broker log dir, and each (partition, broker) replica's size."""
    rows: list[tuple] = []
    sizes: dict[tuple[TopicPartition, int], int] = {}
    for broker, dirs in sorted(raw.log_dirs.items()):
        if isinstance(dirs, KafkaOperationError):
            raw.errors.append(f"log dirs of broker {broker}: {dirs.operator_text}")
            rows.append((broker, "", None, None, None, dirs.name))
            continue
        for d in dirs:
            used = 0
            for tp, rep in d.replicas.items():
                used += rep.size
                if not rep.is_future:  # a future replica is a move between dirs: counts for disk only
                    sizes[(tp, broker)] = rep.size
            rows.append(
                (broker, d.path, used, d.total_bytes, d.usable_bytes, d.error.name if d.error else None)
            )
    return rows, sizes


def _partition_rows(raw: RawSnapshot, sizes: dict) -> tuple[list[tuple], dict[TopicPartition, int]]:
    rows: list[tuple] = []
    ends: dict[TopicPartition, int] = {}
    for t in raw.metadata.topics:
        cfg = raw.configs.get(ConfigResource("TOPIC", t.name))
        rms, rbytes = _retention(cfg, "retention.ms"), _retention(cfg, "retention.bytes")
        for p in t.partitions:
            tp = TopicPartition(t.name, p.id)
            end = ends[tp] = _offset(raw.latest, tp)
            replica_sizes = [sizes.get((tp, r), -1) for r in p.replicas]
            rows.append(
                (
                    t.name,
                    p.id,
                    p.leader,
                    list(p.replicas),
                    list(p.isr),
                    replica_sizes,
                    _offset(raw.earliest, tp),
                    end,
                    sizes.get((tp, p.leader), -1),
                    rms,
                    rbytes,
                )
            )
    return rows, ends


def _group_rows(raw: RawSnapshot, ends: dict[TopicPartition, int]) -> list[tuple]:
    rows: list[tuple] = []
    for group, offsets in sorted(raw.group_offsets.items()):
        if isinstance(offsets, KafkaOperationError):
            raw.errors.append(f"offsets of group {group}: {offsets.operator_text}")
            continue
        for tp, committed in offsets.items():
            end = ends.get(tp, -1)
            if committed is not None and committed >= 0 and end >= 0:
                rows.append((group, tp.topic, tp.partition, committed, end, max(0, end - committed)))
    return rows


def build_tables(raw: RawSnapshot, ts: datetime) -> dict[str, pa.Table]:
    """The three datasets' tables from one snapshot's answers (the functional core)."""
    broker_rows, sizes = _broker_rows(raw)
    partition_rows, ends = _partition_rows(raw, sizes)
    group_rows = _group_rows(raw, ends)
    return {
        "partitions": _table(lake.PARTITIONS, partition_rows, ts),
        "brokers": _table(lake.BROKERS, broker_rows, ts),
        "groups": _table(lake.GROUPS, group_rows, ts),
    }


def _table(schema: pa.Schema, rows: list[tuple], ts: datetime) -> pa.Table:
    n = len(rows)
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema.names[2:]]
    arrays = [pa.array([lake.SCHEMA_VERSION] * n, pa.int16()), pa.array([ts] * n, schema.field("ts").type)]
    arrays += [
        pa.array(col, schema.field(name).type) for name, col in zip(schema.names[2:], columns, strict=True)
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def collect_snapshot(
    *,
    cluster: Cluster,
    actor=None,
    now: datetime | None = None,
    force: bool = False,
    lake_dir: Path | None = None,
) -> SnapshotResult:
    """Take one snapshot of a cluster into the lake, unless this interval already has one.

    Beat calls it without an actor (the system); a person needs ``operation.run`` on the cluster.
    """
    if actor is not None:
        access.require(actor, cluster, access.RUN_OPERATIONS)
    cfg = pipeline_config.load()
    root = Path(lake_dir or cfg.lake_dir)
    ts = lake.utc(now or timezone.now()).replace(microsecond=0)
    if cluster.controller_mode:
        return SnapshotResult(
            cluster.name,
            ts,
            skipped=True,
            errors=("controller mode: topics, offsets and log dirs need broker endpoints",),
        )
    if not force and lake.snapshot_exists(root, cluster.name, ts, cfg.snapshot_interval_s):
        return SnapshotResult(cluster.name, ts, skipped=True)
    started = time.perf_counter()
    raw = fetch_snapshot(gateway_for(cluster))
    tables = build_tables(raw, ts)
    paths = lake.write_snapshot(root, cluster.name, ts, tables, cfg.snapshot_interval_s)
    return SnapshotResult(
        cluster.name,
        ts,
        partitions=tables["partitions"].num_rows,
        brokers=tables["brokers"].num_rows,
        group_rows=tables["groups"].num_rows,
        paths={k: str(v) for k, v in paths.items()},
        errors=tuple(raw.errors),
        rpc_seconds=raw.rpc_seconds,
        total_seconds=time.perf_counter() - started,
    )


def collect_all_snapshots(*, now: datetime | None = None) -> dict[str, SnapshotResult | str]:
    """Beat's job: a snapshot of every registered cluster; one cluster failing does not stop the rest."""
    out: dict[str, SnapshotResult | str] = {}
    for cluster in Cluster.objects.all():
        try:
            out[cluster.name] = collect_snapshot(cluster=cluster, now=now)
        except KafkaOperationError as exc:
            log.warning("telemetry snapshot of %s failed: %s", cluster.name, exc.operator_text)
            out[cluster.name] = exc.operator_text
        except SecretUnreadable as exc:  # this cluster's password needs the old key; the others go on
            log.warning("telemetry snapshot of %s skipped: %s", cluster.name, exc)
            out[cluster.name] = str(exc)
    return out
