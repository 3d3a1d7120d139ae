"""The telemetry collector: a snapshot of the sandbox lands in the lake with sizes, offsets and lag."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest

from console.kafka import PartitionOffsets, TopicPartition
from console.models import Cluster
from console.telemetry import snapshots as telemetry
from pipeline import lake

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 5, 4, 12, 7, 30, tzinfo=UTC)


@pytest.fixture
def busy_topic(sandbox):
    name = f"telemetry-{uuid.uuid4().hex[:8]}"
    sandbox.create_topic(name, partitions=3, replication_factor=2)
    sandbox.produce_synthetic(name, 300_000)
    sandbox.advance(5)
    sandbox.produce_synthetic(name, 0)
    return name


def _rows(path: str, topic: str | None = None) -> list[dict]:
    rows = pq.read_table(path).to_pylist()
    return [r for r in rows if topic is None or r["topic"] == topic]


def test_it_writes_a_snapshot_with_sizes_and_offsets(kafka_cluster, busy_topic, telemetry_lake):
    result = telemetry.collect_snapshot(cluster=kafka_cluster, now=NOW)

    assert not result.skipped and result.errors == ()
    part_file = (
        telemetry_lake / "partitions" / "cluster=sandbox" / "date=2026-05-04" / "snap-1777896300.parquet"
    )
    assert result.paths["partitions"] == str(part_file)
    rows = _rows(str(part_file), busy_topic)
    assert [r["partition"] for r in rows] == [0, 1, 2]
    for r in rows:
        assert r["schema_version"] == lake.SCHEMA_VERSION
        assert r["ts"] == NOW
        assert r["log_start_offset"] == 0 and r["log_end_offset"] > 0
        assert r["size_bytes"] > 0 and r["replica_sizes"] == [r["size_bytes"]] * 2
        assert len(r["replicas"]) == 2 and r["leader"] in r["replicas"]
        assert r["retention_ms"] == 604_800_000
    brokers = _rows(result.paths["brokers"])
    assert sorted({b["broker"] for b in brokers}) == [1, 2, 3]
    assert sum(b["size_bytes"] for b in brokers) >= 2 * sum(r["size_bytes"] for r in rows)
    assert not [p for p in telemetry_lake.rglob("*") if p.name.startswith(".")]


def test_it_takes_one_snapshot_per_cluster_per_interval(kafka_cluster, busy_topic, telemetry_lake):
    first = telemetry.collect_snapshot(cluster=kafka_cluster, now=NOW)
    again = telemetry.collect_snapshot(cluster=kafka_cluster, now=NOW.replace(minute=9))
    later = telemetry.collect_snapshot(cluster=kafka_cluster, now=NOW.replace(minute=12))
    assert (first.skipped, again.skipped, later.skipped) == (False, True, False)
    assert len(list((telemetry_lake / "partitions").rglob("*.parquet"))) == 2


def test_a_failed_write_leaves_no_file_behind(kafka_cluster, busy_topic, telemetry_lake, monkeypatch):
    def broken(table, where, **kwargs):
        with open(where, "wb") as f:
            f.write(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(lake.pq, "write_table", broken)
    with pytest.raises(OSError):
        telemetry.collect_snapshot(cluster=kafka_cluster, now=NOW)
    assert [p for p in telemetry_lake.rglob("*") if p.is_file()] == []
    assert (
        lake.read_window(
            telemetry_lake, "partitions", "sandbox", NOW.replace(hour=0), NOW.replace(hour=23)
        ).num_rows
        == 0
    )


def test_it_skips_a_cluster_registered_through_its_controllers(db, sandbox, telemetry_lake):
    cluster = Cluster.objects.create(name="ctrl", bootstrap_controllers=sandbox.bootstrap_controllers)
    result = telemetry.collect_snapshot(cluster=cluster, now=NOW)
    assert result.skipped and "controller mode" in result.errors[0]


def test_an_unreachable_cluster_does_not_stop_the_others(
    kafka_cluster, offline_cluster, busy_topic, telemetry_lake
):
    results = telemetry.collect_all_snapshots(now=NOW)
    assert isinstance(results["offline"], str) and "127.0.0.1:1" in results["offline"]
    assert results["sandbox"].partitions > 0


def test_it_computes_lag_from_committed_offsets():
    from console.kafka import ClusterMetadata, PartitionMetadata, TopicMetadata
    from console.kafka.health import PartitionLayout

    md = ClusterMetadata(
        "c",
        1,
        (),
        (
            TopicMetadata(
                "orders", (PartitionMetadata(0, 1, (1,), (1,)), PartitionMetadata(1, 1, (1,), (1,)))
            ),
        ),
    )
    tp0, tp1 = TopicPartition("orders", 0), TopicPartition("orders", 1)
    raw = telemetry.RawSnapshot(
        layout=PartitionLayout.from_metadata((), md.topics),
        latest={tp0: PartitionOffsets(120), tp1: PartitionOffsets(50)},
        earliest={tp0: PartitionOffsets(0), tp1: PartitionOffsets(0)},
        log_dirs={},
        configs={},
        group_offsets={"billing": {tp0: 100, tp1: -1}, "audit": {tp0: 120, tp1: 45}},
    )
    groups = telemetry.build_tables(raw, NOW)["groups"].to_pylist()
    assert [(g["group"], g["partition"], g["committed_offset"], g["lag"]) for g in groups] == [
        ("audit", 0, 120, 0),
        ("audit", 1, 45, 5),
        ("billing", 0, 100, 20),
    ]


def test_it_records_consumer_lag_from_the_sandbox(kafka_cluster, sandbox, busy_topic, telemetry_lake):
    from sandbox.state import Group

    with sandbox.state.lock:
        sandbox.state.groups[f"g-{busy_topic}"] = Group(f"g-{busy_topic}", offsets={(busy_topic, 0): 1})
    result = telemetry.collect_snapshot(cluster=kafka_cluster, now=NOW)
    rows = [g for g in _rows(result.paths["groups"]) if g["group"] == f"g-{busy_topic}"]
    assert len(rows) == 1 and rows[0]["lag"] == rows[0]["log_end_offset"] - 1 > 0
