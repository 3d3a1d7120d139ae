"""The telemetry collector: one snapshot per cluster per interval into the Parquet lake (DESIGN D8).

A snapshot is a handful of batched requests (one Metadata, ListOffsets per leader broker for the
earliest and the latest offsets, one DescribeLogDirs per broker, one DescribeConfigs for every
topic's retention, and the consumer groups' committed offsets when the gateway offers them),
turned into three Parquet files: partitions, brokers, groups (see ``pipeline/lake.py``).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from array import array
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
from console.drift import observe as drift
from console.kafka import ConfigResource, KafkaOperationError, errlog, heap
from console.kafka.health import LogDirUsage, PartitionLayout, ReplicaSizes
from console.models import Cluster
from console.telemetry import summary
from pipeline import config as pipeline_config
from pipeline import lake

log = logging.getLogger(__name__)

# The gateway method that answers committed offsets of consumer groups (asked of the gateway's owner):
# list_consumer_group_offsets(groups=None) -> {group: {TopicPartition: offset} | KafkaOperationError}


#: The topic configs a snapshot records (DescribeConfigs asks for these keys only).
RETENTION_KEYS = ("retention.ms", "retention.bytes")
#: ... and the one the cluster's summary counts partitions under min ISR with (not in the lake).
CONFIG_KEYS = (*RETENTION_KEYS, summary.MIN_ISR)


@dataclass
class RawSnapshot:
    """What the batched requests answered, before it becomes columns.

    ``layout`` is every partition as flat rows (``gateway.partition_layout()``); ``log_dirs`` maps
    a broker to its dirs or error and ``sizes`` holds every replica's size
    (``gateway.log_dir_usage(layout)``; none known when not given). ``latest`` and
    ``earliest`` are given as ``{(topic, partition): offset}`` (``offsets_by_leader``'s answers;
    ``list_offsets``' ``PartitionOffsets`` are accepted too) and kept as one offset per row
    (``array('q')``, -1 for a partition without an answer).
    """

    layout: PartitionLayout
    latest: Any
    earliest: Any
    log_dirs: dict
    configs: dict
    group_offsets: dict
    errors: list[str] = field(default_factory=list)
    rpc_seconds: float = 0.0
    groups_listed: bool = True  # False when the consumer groups could not be listed
    sizes: ReplicaSizes | None = None

    def __post_init__(self) -> None:
        self.latest = _row_offsets(self.layout, self.latest)
        self.earliest = _row_offsets(self.layout, self.earliest)
        if self.sizes is None:
            self.sizes = ReplicaSizes(self.layout)


def _row_offsets(layout: PartitionLayout, answers: Any) -> array:
    """``{(topic, partition): offset | PartitionOffsets | error}`` as one offset per layout row."""
    if isinstance(answers, array):
        return answers
    out = array("q", [-1]) * len(layout)
    row_of = layout.row_of
    for (topic, partition), value in answers.items():
        if type(value) is not int:
            if isinstance(value, KafkaOperationError):
                continue
            value = value.offset
        row = row_of(topic, partition)
        if row >= 0:
            out[row] = value
    return out


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
    # The snapshot's Metadata, handed to drift's look by collect_for (which drops it before returning).
    layout: PartitionLayout | None = field(default=None, repr=False, compare=False)


def fetch_snapshot(gw) -> RawSnapshot:
    """Every request a snapshot needs, each one batched (the imperative shell).

    After the Metadata, the log dirs, the retention configs and the groups' offsets are asked
    on a helper thread while this one asks the offsets (both specs together): the requests are
    independent, and the brokers answer them while the other answers are decoded.

    Memory (a batch worker at 1M partitions): the Metadata is kept as flat rows (no per-partition
    objects), and each broker's replica sizes and each leader's offsets are written into arrays
    aligned with those rows as their answer is read, a few answers in flight at a time.
    """
    started = time.perf_counter()
    errors: list[str] = []
    layout = gw.partition_layout()
    heap.give_back()  # the Metadata answer and its decoding, freed

    def the_rest() -> tuple[tuple[dict, ReplicaSizes], dict, dict]:
        # The brokers of this snapshot's metadata, so a broker that just restarted is asked too.
        log_dirs = gw.log_dir_usage(layout)
        configs: dict = {}
        try:
            configs = gw.config_values([ConfigResource("TOPIC", name) for name in layout.topics], CONFIG_KEYS)
        except KafkaOperationError as exc:
            errors.append(f"retention configs: {exc.operator_text}")
        group_offsets: dict | None = None
        try:
            group_offsets = gw.list_consumer_group_offsets()
        except KafkaOperationError as exc:
            errors.append(f"consumer groups: {exc.operator_text}")
        return log_dirs, configs, group_offsets

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="snapshot") as pool:
        rest = pool.submit(the_rest)
        latest, earliest = gw.offsets_by_row(layout, ("latest", "earliest"))
        (log_dirs, sizes), configs, group_offsets = rest.result()
    return RawSnapshot(
        layout,
        latest,
        earliest,
        log_dirs,
        configs,
        group_offsets or {},
        errors,
        time.perf_counter() - started,
        groups_listed=group_offsets is not None,
        sizes=sizes,
    )


def _retention(values: Any, name: str) -> int | None:
    """A topic's retention config as an int (None: no answer, no value, not a number)."""
    value = values.get(name) if isinstance(values, dict) else None
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def _ints(values: array, value_type: pa.DataType) -> pa.Array:
    """An Arrow array over an ``array('i')`` / ``array('q')``'s buffer (no copy, no int objects)."""
    assert values.itemsize == value_type.bit_width // 8, (values.typecode, value_type)
    return pa.Array.from_buffers(value_type, len(values), [None, pa.py_buffer(values)])


def _list_array(offsets: array, values: array, value_type: pa.DataType) -> pa.Array:
    """A list column from its flat values and their offsets (no Python list per row)."""
    return pa.ListArray.from_arrays(_ints(offsets, pa.int32()), _ints(values, value_type))


def _broker_columns(raw: RawSnapshot) -> dict[str, list]:
    """One row per broker log dir (a broker that did not answer: one row with its error)."""
    cols: dict[str, list] = {n: [] for n in lake.BROKERS.names[2:]}
    broker, log_dir, used, total, usable, error = cols.values()
    for b, answer in sorted(raw.log_dirs.items()):
        if isinstance(answer, KafkaOperationError):
            raw.errors.append(f"log dirs of broker {b}: {answer.operator_text}")
            for col, value in zip(cols.values(), (b, "", None, None, None, answer.name), strict=True):
                col.append(value)
            continue
        d: LogDirUsage
        for d in answer:
            broker.append(b)
            log_dir.append(d.path)
            used.append(d.used_bytes)
            total.append(d.total_bytes)
            usable.append(d.usable_bytes)
            error.append(d.error.name if d.error else None)
    return cols


def _partition_columns(raw: RawSnapshot) -> dict[str, Any]:
    """The partitions dataset's columns: the layout's arrays and the replica sizes as they are."""
    layout, sizes = raw.layout, raw.sizes
    offsets = layout.replica_offsets
    rms: list[int | None] = []
    rbytes: list[int | None] = []
    for name in layout.topics:
        cfg = raw.configs.get(ConfigResource("TOPIC", name))
        rms.append(_retention(cfg, "retention.ms"))
        rbytes.append(_retention(cfg, "retention.bytes"))
    topic_index = _ints(layout.topic_index, pa.int32())
    return {
        "topic": pa.array(layout.topics, pa.string()).take(topic_index),
        "partition": _ints(layout.partition, pa.int32()),
        "leader": _ints(layout.leader, pa.int32()),
        "replicas": _list_array(offsets, layout.replicas, pa.int32()),
        "isr": _list_array(layout.isr_offsets, layout.isr, pa.int32()),
        "replica_sizes": _list_array(offsets, sizes.values, pa.int64()),
        "log_start_offset": _ints(raw.earliest, pa.int64()),
        "log_end_offset": _ints(raw.latest, pa.int64()),
        "size_bytes": _ints(sizes.leader_sizes(), pa.int64()),
        "retention_ms": pa.array(rms, pa.int64()).take(topic_index),
        "retention_bytes": pa.array(rbytes, pa.int64()).take(topic_index),
    }


def _group_columns(raw: RawSnapshot) -> dict[str, list]:
    cols: dict[str, list] = {n: [] for n in lake.GROUPS.names[2:]}
    group_c, topic, partition, committed_c, end_c, lag = cols.values()
    latest, row_of = raw.latest, raw.layout.row_of
    for group, offsets in sorted(raw.group_offsets.items()):
        if isinstance(offsets, KafkaOperationError):
            raw.errors.append(f"offsets of group {group}: {offsets.operator_text}")
            continue
        for tp, committed in offsets.items():
            row = row_of(tp[0], tp[1])
            end = latest[row] if row >= 0 else -1
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
    broker_cols = _broker_columns(raw)
    return {
        "partitions": _table(lake.PARTITIONS, _partition_columns(raw), ts),
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
    keep_layout: bool = False,
) -> SnapshotResult:
    """Take one snapshot of a cluster into the lake, unless this interval already has one.

    Beat calls it without an actor (the system); a person needs ``operation.run`` on the cluster.
    ``keep_layout`` keeps the snapshot's Metadata on the result (for collect_for's drift look).
    """
    if actor is not None:
        access.require(actor, cluster, access.RUN_OPERATIONS)
    cfg = pipeline_config.load()
    root = Path(lake_dir or cfg.lake_dir)
    ts = lake.utc(now or timezone.now()).replace(microsecond=0)
    if cluster.controller_mode:
        _summarize_controllers(cluster, ts)
        return SnapshotResult(
            cluster.name,
            ts,
            skipped=True,
            errors=("controller mode: topics, offsets and log dirs need broker endpoints",),
        )
    if not force and lake.snapshot_exists(root, cluster.name, ts, cfg.snapshot_interval_s):
        return SnapshotResult(cluster.name, ts, skipped=True)
    started = time.perf_counter()
    raw = _fetch_and_summarize(cluster, ts)
    heap.give_back()  # the answers, freed as they were read: pyarrow allocates elsewhere
    tables = build_tables(raw, ts)
    paths = lake.write_snapshot(root, cluster.name, ts, tables, cfg.snapshot_interval_s)
    rows = {name: table.num_rows for name, table in tables.items()}
    del tables
    pa.default_memory_pool().release_unused()  # pyarrow's pool keeps freed pages for reuse otherwise
    heap.give_back()  # before the drift look, which starts from here
    return SnapshotResult(
        cluster.name,
        ts,
        partitions=rows["partitions"],
        brokers=rows["brokers"],
        group_rows=rows["groups"],
        paths={k: str(v) for k, v in paths.items()},
        errors=tuple(raw.errors),
        rpc_seconds=raw.rpc_seconds,
        total_seconds=time.perf_counter() - started,
        layout=raw.layout if keep_layout else None,
    )


def _fetch_and_summarize(cluster: Cluster, ts: datetime) -> RawSnapshot:
    """The snapshot's requests, and beside them the cluster's facts for its summary row, written from
    both (counts from the snapshot's own layout and configs). A failure to reach Kafka is written to
    the summary too, then raised."""
    actor = access.system_actor()  # resolved here: the facts' thread needs no database
    try:
        gw = gateway_for(cluster)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="summary") as pool:
            reading = pool.submit(summary.read_facts, cluster, gw, actor)
            raw = fetch_snapshot(gw)
            facts = reading.result()
    except KafkaOperationError as exc:
        summary.unreachable(cluster, exc.operator_text)
        raise
    except SecretUnreadable as exc:
        summary.unreachable(cluster, str(exc))
        raise
    summary.write_snapshot(
        cluster,
        facts,
        taken_at=ts,
        layout=raw.layout,
        configs=raw.configs,
        consumer_groups=len(raw.group_offsets) if raw.groups_listed else None,
    )
    return raw


def _summarize_controllers(cluster: Cluster, ts: datetime) -> None:
    """A controller-mode connection's summary: what the controllers answer (no partitions)."""
    try:
        facts = summary.read_facts(cluster, gateway_for(cluster))
    except SecretUnreadable as exc:
        summary.unreachable(cluster, str(exc))
        raise
    summary.write(cluster, facts, taken_at=ts)


def collect_for(cluster: Cluster, *, now: datetime | None = None) -> SnapshotResult | str:
    """One cluster's scheduled snapshot: its result, or the operator text of why Kafka (or the
    cluster's stored secret) could not be read. A run of failures is logged once (errlog), with a count."""
    key = f"telemetry snapshot of {cluster.name}"
    mark = drift.audit_mark()  # before the snapshot's reads: the console's changes from here on are its own
    try:
        result = collect_snapshot(cluster=cluster, now=now, keep_layout=True)
    except KafkaOperationError as exc:
        errlog.RUNS.failed(key, f"failed: {exc.operator_text}", logger=log)
        return exc.operator_text
    except SecretUnreadable as exc:  # this cluster's password needs the old key; the others go on
        log.warning("telemetry snapshot of %s skipped: %s", cluster.name, exc)
        return str(exc)
    errlog.RUNS.recovered(key)
    if result.layout is not None:  # compare with the previous look (console/drift; never fails the snapshot)
        drift.after_snapshot(cluster, result.layout, mark=mark, now=result.ts)
        result = dataclasses.replace(result, layout=None)
    heap.give_back()  # the worker idles at its size, not at the snapshot's
    return result


def collect_all_snapshots(*, now: datetime | None = None) -> dict[str, SnapshotResult | str]:
    """A snapshot of every registered cluster, one after another; one cluster failing does not stop the rest."""
    return {cluster.name: collect_for(cluster, now=now) for cluster in Cluster.objects.all()}
