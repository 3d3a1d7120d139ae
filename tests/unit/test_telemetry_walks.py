"""The snapshot's lean reads (issue 19: one snapshot of 100,000 partitions peaked at 534 MB in the
batch worker) answer what the general gateway reads answer, on the sandbox with a broker down:
the partition layout walked out of librdkafka's Metadata = the layout of ``list_topics_metadata()``;
each broker's reduced log dirs = ``describe_log_dirs()`` reduced the old way; the offsets by row =
``offsets_by_leader()``; and the snapshot's tables = tables built from the general reads."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import pytest

from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.kafka.health import PartitionLayout, ReplicaSizes
from console.telemetry import snapshots as telemetry
from tests.unit.log_dirs_answers import answer_of, log_dir
from tests.unit.matrix_world import kafka_restored

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 5, 4, 12, 5, tzinfo=UTC)
LAYOUT_ARRAYS = (
    "topic_index",
    "partition",
    "leader",
    "replica_offsets",
    "replicas",
    "isr_offsets",
    "isr",
)


@pytest.fixture
def restored(frozen):
    with kafka_restored(frozen):
        yield frozen


def same_layout(a: PartitionLayout, b: PartitionLayout) -> None:
    assert (a.brokers, a.topics, a.topic_rows) == (b.brokers, b.topics, b.topic_rows)
    for name in LAYOUT_ARRAYS:
        assert getattr(a, name) == getattr(b, name), name


def old_sizes(dirs) -> tuple[list, dict]:
    """What the snapshot made of ``describe_log_dirs`` before: dir rows and ``{(topic, p): size}``."""
    rows, sizes = [], {}
    for d in dirs:
        rows.append(
            (d.path, d.error, sum(r.size for r in d.replicas.values()), d.total_bytes, d.usable_bytes)
        )
        sizes.update({tuple(tp): r.size for tp, r in d.replicas.items() if not r.is_future})
    return rows, sizes


def test_the_lean_reads_equal_the_general_ones_with_a_broker_down(kafka_cluster, restored):
    gw = gateway_for(kafka_cluster)
    name = f"walk.{uuid.uuid4().hex[:10]}"
    restored.create_topic(name, assignment=[[3, 1], [3], [1, 2], [2, 3, 1]])
    restored.produce_synthetic(name, 50_000)
    restored.advance(2)
    restored.stop_broker(3)
    try:
        md = gw.list_topics_metadata()
        layout = gw.partition_layout()
        same_layout(layout, PartitionLayout.from_metadata([b.id for b in md.brokers], md.topics))
        assert name in layout.topics and 3 not in layout.brokers
        assert -1 in layout.leader  # the new topic's p1 lost its only replica

        # Right after a broker stops, the client's metadata may still list it: the first request to
        # it fails on the connection (NETWORK_EXCEPTION), later ones see it is not live
        # (BROKER_NOT_AVAILABLE). Both reads are compared once the client knows, as real Kafka's do.
        deadline = time.monotonic() + 15
        while gw.describe_log_dirs([3])[3].name != "BROKER_NOT_AVAILABLE" and time.monotonic() < deadline:
            time.sleep(0.2)
        lean, replica_sizes = gw.log_dir_usage(layout)
        general = gw.describe_log_dirs([1, 2, 3])
        assert set(lean) == {1, 2} == set(layout.brokers)  # the layout's brokers: 3 is not live
        assert isinstance(general[3], KafkaOperationError)
        expected_sizes = {}
        for b in (1, 2):
            rows, sizes = old_sizes(general[b])
            assert [(d.path, d.error, d.used_bytes, d.total_bytes, d.usable_bytes) for d in lean[b]] == rows
            assert sizes
            expected_sizes.update({(t, p, b): size for (t, p), size in sizes.items()})
        got_sizes = {}
        for t in layout.topics:
            first, count = layout.topic_rows[t]
            for row in range(first, first + count):
                for j in range(layout.replica_offsets[row], layout.replica_offsets[row + 1]):
                    if replica_sizes.values[j] >= 0:
                        got_sizes[(t, layout.partition[row], layout.replicas[j])] = replica_sizes.values[j]
                    else:  # only broker 3's replicas are unknown
                        assert layout.replicas[j] == 3
        assert got_sizes == expected_sizes

        (latest, _), (earliest, _) = gw.offsets_by_leader(_by_leader(layout), ("latest", "earliest"))
        by_row = gw.offsets_by_row(layout, ("latest", "earliest"))
        for answers, got in zip((latest, earliest), by_row, strict=True):
            assert got == telemetry._row_offsets(layout, answers)
            assert -1 in got  # the partition without a leader
        assert any(v > 0 for v in by_row[0])  # the log ends of the produced topic
    finally:
        restored.start_broker(3)


def test_the_snapshot_equals_tables_from_the_general_reads(kafka_cluster, restored):
    gw = gateway_for(kafka_cluster)
    name = f"walk.{uuid.uuid4().hex[:10]}"
    restored.create_topic(name, assignment=[[1, 2], [2, 3], [3, 1]], configs={"retention.ms": "3600000"})
    restored.produce_synthetic(name, 80_000)
    restored.advance(2)
    md = gw.list_topics_metadata()
    layout = PartitionLayout.from_metadata([b.id for b in md.brokers], md.topics)
    (latest, _), (earliest, _) = gw.offsets_by_leader(_by_leader(layout), ("latest", "earliest"))
    sizes = ReplicaSizes(layout)
    general = {
        b: d if isinstance(d, KafkaOperationError) else _reduced(sizes, b, d)
        for b, d in gw.describe_log_dirs(list(layout.brokers)).items()
    }
    general_configs = gw.describe_configs(
        [telemetry.ConfigResource("TOPIC", t) for t in layout.topics],
        include_documentation=False,
        keys=list(telemetry.CONFIG_KEYS),
    )
    configs = {
        res: entries if isinstance(entries, KafkaOperationError) else {k: e.value for k, e in entries.items()}
        for res, entries in general_configs.items()
    }
    assert gw.config_values(list(general_configs), telemetry.CONFIG_KEYS) == configs
    assert configs[telemetry.ConfigResource("TOPIC", name)]["retention.ms"] == "3600000"
    expected = telemetry.build_tables(
        telemetry.RawSnapshot(
            layout, latest, earliest, general, configs, gw.list_consumer_group_offsets(), sizes=sizes
        ),
        NOW,
    )
    got = telemetry.build_tables(telemetry.fetch_snapshot(gw), NOW)
    for dataset, table in expected.items():
        assert got[dataset].equals(table), dataset
    assert name in got["partitions"].column("topic").to_pylist()


def _reduced(sizes: ReplicaSizes, broker: int, dirs) -> tuple:
    """``describe_log_dirs``' answer for one broker, encoded as a broker sends it and read by the
    same reduction (its offset lags are not in that answer, and are not read)."""
    return sizes.reduce(
        broker,
        answer_of(
            [
                log_dir(
                    d.path,
                    [(tp.topic, tp.partition, r.size, 0, r.is_future) for tp, r in d.replicas.items()],
                    error_code=d.error.code if d.error else 0,
                    total=-1 if d.total_bytes is None else d.total_bytes,
                    usable=-1 if d.usable_bytes is None else d.usable_bytes,
                )
                for d in dirs
            ]
        ),
    )


def _by_leader(layout: PartitionLayout) -> dict[int, dict[str, list[int]]]:
    """``{leader: {topic: [partition]}}``: what ``offsets_by_leader`` is asked with."""
    return {leader: layout.partitions_of(rows) for leader, rows in layout.rows_by_leader().items()}
