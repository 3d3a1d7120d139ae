"""The telemetry collector: one snapshot per cluster per interval into the Parquet lake (DESIGN D8).

A snapshot is a handful of batched requests (one Metadata, ListOffsets per leader broker for the
earliest and the latest offsets, one DescribeLogDirs per broker, one DescribeConfigs for every
topic's retention, and the consumer groups' committed offsets when the gateway offers them),
turned into three Parquet files: partitions, brokers, groups (see ``pipeline/lake.py``).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from django.utils import timezone

from console import access
from console.clusters.actions import gateway_for
from console.crypto import SecretUnreadable
from console.kafka import ConfigResource, KafkaOperationError
from console.models import Cluster
from pipeline import config as pipeline_config
from pipeline import lake

log = logging.getLogger(__name__)

# The gateway method that answers committed offsets of consumer groups (asked of the gateway's owner):
# list_consumer_group_offsets(groups=None) -> {group: {TopicPartition: offset} | KafkaOperationError}


#: The topic configs a snapshot records (DescribeConfigs asks for these keys only).
RETENTION_KEYS = ("retention.ms", "retention.bytes")


@dataclass
class RawSnapshot:
    """What the batched requests answered, before it becomes columns.

    ``latest`` and ``earliest`` map ``(topic, partition)`` to an offset (``offsets_by_leader``'s
    answers; ``list_offsets``' ``PartitionOffsets`` are accepted too); a partition without an
    answer is absent and recorded as -1.
    """

    metadata: Any
    latest: dict
    earliest: dict
    log_dirs: dict
    configs: dict
    group_offsets: dict
    errors: list[str] = field(default_factory=list)
    rpc_seconds: float = 0.0

    def __post_init__(self) -> None:
        self.latest = _plain_offsets(self.latest)
        self.earliest = _plain_offsets(self.earliest)


def _plain_offsets(answers: dict) -> dict:
    if all(type(v) is int for v in answers.values()):
        return answers
    return {
        tp: v if type(v) is int else v.offset
        for tp, v in answers.items()
        if not isinstance(v, KafkaOperationError)
    }


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
    """Every request a snapshot needs, each one batched (the imperative shell).

    After the Metadata, the log dirs, the retention configs and the groups' offsets are asked
    on a helper thread while this one asks the offsets (both specs in one flight): the requests
    are independent, and the brokers answer them while the other answers are decoded.
    """
    started = time.perf_counter()
    errors: list[str] = []
    md = gw.list_topics_metadata()
    by_leader: dict[int, dict[str, list[int]]] = {}
    for t in md.topics:
        name = t.name
        for p in t.partitions:
            if p.leader >= 0:  # a partition without a leader has no offsets to ask (recorded as -1)
                by_leader.setdefault(p.leader, {}).setdefault(name, []).append(p.id)

    def the_rest() -> tuple[dict, dict, dict]:
        # The brokers of this snapshot's metadata, so a broker that just restarted is asked too.
        log_dirs = gw.describe_log_dirs([b.id for b in md.brokers])
        configs: dict = {}
        try:
            configs = gw.describe_configs(
                [ConfigResource("TOPIC", t.name) for t in md.topics],
                include_documentation=False,
                keys=list(RETENTION_KEYS),
            )
        except KafkaOperationError as exc:
            errors.append(f"retention configs: {exc.operator_text}")
        group_offsets: dict = {}
        try:
            group_offsets = gw.list_consumer_group_offsets()
        except KafkaOperationError as exc:
            errors.append(f"consumer groups: {exc.operator_text}")
        return log_dirs, configs, group_offsets

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="snapshot") as pool:
        rest = pool.submit(the_rest)
        (latest, _), (earliest, _) = gw.offsets_by_leader(by_leader, ("latest", "earliest"))
        log_dirs, configs, group_offsets = rest.result()
    return RawSnapshot(
        md, latest, earliest, log_dirs, configs, group_offsets, errors, time.perf_counter() - started
    )


def _retention(entries: Any, name: str) -> int | None:
    if not isinstance(entries, dict) or entries.get(name) is None or entries[name].value is None:
        return None
    try:
        return int(entries[name].value)
    except ValueError:
        return None


def _list_array(offsets: list[int], values: list[int], value_type: pa.DataType) -> pa.Array:
    """A list column from its flat values and their offsets (no Python list per row)."""
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(values, value_type))


def _broker_columns(raw: RawSnapshot) -> tuple[dict[str, list], dict[int, dict]]:
    """One row per broker log dir, and per broker ``{(topic, partition): replica size}``."""
    cols: dict[str, list] = {n: [] for n in lake.BROKERS.names[2:]}
    broker, log_dir, used_c, total, usable, error = cols.values()
    sizes: dict[int, dict] = {}
    for b, dirs in sorted(raw.log_dirs.items()):
        if isinstance(dirs, KafkaOperationError):
            raw.errors.append(f"log dirs of broker {b}: {dirs.operator_text}")
            for col, value in zip(cols.values(), (b, "", None, None, None, dirs.name), strict=True):
                col.append(value)
            continue
        mine = sizes.setdefault(b, {})
        for d in dirs:
            used = 0
            for tp, rep in d.replicas.items():
                size = rep.size
                used += size
                if not rep.is_future:  # a future replica is a move between dirs: counts for disk only
                    mine[tp] = size
            broker.append(b)
            log_dir.append(d.path)
            used_c.append(used)
            total.append(d.total_bytes)
            usable.append(d.usable_bytes)
            error.append(d.error.name if d.error else None)
    return cols, sizes


def _partition_columns(raw: RawSnapshot, sizes: dict[int, dict]) -> dict[str, Any]:
    """The partitions dataset's columns, filled in one pass over the metadata."""
    topic: list[str] = []
    pid: list[int] = []
    leader: list[int] = []
    replicas: list[int] = []
    replica_offsets = [0]
    isr: list[int] = []
    isr_offsets = [0]
    replica_sizes: list[int] = []
    start: list[int] = []
    end: list[int] = []
    size: list[int] = []
    rms_c: list[int | None] = []
    rbytes_c: list[int | None] = []
    latest, earliest = raw.latest.get, raw.earliest.get
    size_of = sizes.get
    none: dict = {}
    for t in raw.metadata.topics:
        name = t.name
        cfg = raw.configs.get(ConfigResource("TOPIC", name))
        n = len(t.partitions)
        topic += [name] * n
        rms_c += [_retention(cfg, "retention.ms")] * n
        rbytes_c += [_retention(cfg, "retention.bytes")] * n
        for p in t.partitions:
            key = (name, p.id)
            pid.append(p.id)
            leader.append(p.leader)
            replicas += p.replicas
            replica_offsets.append(len(replicas))
            isr += p.isr
            isr_offsets.append(len(isr))
            replica_sizes += [size_of(r, none).get(key, -1) for r in p.replicas]
            start.append(earliest(key, -1))
            end.append(latest(key, -1))
            size.append(size_of(p.leader, none).get(key, -1))
    return {
        "topic": topic,
        "partition": pid,
        "leader": leader,
        "replicas": _list_array(replica_offsets, replicas, pa.int32()),
        "isr": _list_array(isr_offsets, isr, pa.int32()),
        "replica_sizes": _list_array(replica_offsets, replica_sizes, pa.int64()),
        "log_start_offset": start,
        "log_end_offset": end,
        "size_bytes": size,
        "retention_ms": rms_c,
        "retention_bytes": rbytes_c,
    }


def _group_columns(raw: RawSnapshot) -> dict[str, list]:
    cols: dict[str, list] = {n: [] for n in lake.GROUPS.names[2:]}
    group_c, topic, partition, committed_c, end_c, lag = cols.values()
    latest = raw.latest.get
    for group, offsets in sorted(raw.group_offsets.items()):
        if isinstance(offsets, KafkaOperationError):
            raw.errors.append(f"offsets of group {group}: {offsets.operator_text}")
            continue
        for tp, committed in offsets.items():
            end = latest(tp, -1)
            if committed is not None and committed >= 0 and end >= 0:
                group_c.append(group)
                topic.append(tp[0])
                partition.append(tp[1])
                committed_c.append(committed)
                end_c.append(end)
                lag.append(max(0, end - committed))
    return cols


def build_tables(raw: RawSnapshot, ts: datetime) -> dict[str, pa.Table]:
    """The three datasets' tables from one snapshot's answers (the functional core)."""
    broker_cols, sizes = _broker_columns(raw)
    return {
        "partitions": _table(lake.PARTITIONS, _partition_columns(raw, sizes), ts),
        "brokers": _table(lake.BROKERS, broker_cols, ts),
        "groups": _table(lake.GROUPS, _group_columns(raw), ts),
    }


def _table(schema: pa.Schema, columns: dict[str, Any], ts: datetime) -> pa.Table:
    """``columns`` (Python lists or Arrow arrays, in the schema's order after version and ts)."""
    assert list(columns) == schema.names[2:], list(columns)
    n = len(next(iter(columns.values())))
    arrays = [
        pa.repeat(pa.scalar(lake.SCHEMA_VERSION, pa.int16()), n),
        pa.repeat(pa.scalar(ts, schema.field("ts").type), n),
    ]
    arrays += [
        col if isinstance(col, pa.Array) else pa.array(col, schema.field(name).type)
        for name, col in columns.items()
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
