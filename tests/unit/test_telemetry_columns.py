"""The snapshot's columns, built in one pass, on the answers' awkward cases: a broker whose log dirs
failed, a replica moving between dirs, a partition without a leader or offsets, a topic without
retention configs, a group whose offsets failed. Rows and schema exactly as the lake defines them."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow.parquet as pq

from console.kafka import (
    BrokerInfo,
    ClusterMetadata,
    ConfigResource,
    KafkaOperationError,
    PartitionMetadata,
    TopicMetadata,
    TopicPartition,
)
from console.kafka.health import PartitionLayout, ReplicaSizes
from console.telemetry import snapshots as telemetry
from pipeline import lake
from tests.unit.log_dirs_answers import answer_of, log_dir

NOW = datetime(2026, 5, 4, 12, 5, tzinfo=UTC)
DOWN = KafkaOperationError(8, "BROKER_NOT_AVAILABLE", "broker 3 is not live")


def raw() -> telemetry.RawSnapshot:
    md = ClusterMetadata(
        "c",
        1,
        (BrokerInfo(1, "h", 1), BrokerInfo(2, "h", 2)),
        (
            TopicMetadata("b", (PartitionMetadata(0, 2, (2, 1, 3), (2,)),)),
            TopicMetadata(
                "a", (PartitionMetadata(1, -1, (2, 3), (), (3,)), PartitionMetadata(0, 1, (1, 2), (1, 2)))
            ),
        ),
    )  # given unsorted: the layout sorts topics by name and partitions by id
    a0, a1, b0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
    layout = PartitionLayout.from_metadata([b.id for b in md.brokers], md.topics)
    sizes = ReplicaSizes(layout)
    dirs = {
        1: sizes.reduce(
            1,
            answer_of(
                [
                    log_dir("/d1", [("a", 0, 100, 0, False), ("b", 0, 7, 0, False)], total=1000, usable=900),
                    log_dir("/d2", [("a", 0, 40, 9, True)]),  # a0 moving to /d2
                ]
            ),
        ),
        2: sizes.reduce(
            2,
            answer_of(
                [
                    log_dir(
                        "/e1",
                        [("a", 0, 90, 0, False), ("a", 1, 5, 0, False), ("b", 0, 8, 0, False)],
                        error_code=56,
                    )
                ]
            ),
        ),
        3: DOWN,
    }
    return telemetry.RawSnapshot(
        layout=layout,
        sizes=sizes,
        latest={("a", 0): 50, ("b", 0): 9},  # a-1 has no leader: not asked
        earliest={("a", 0): 10, ("b", 0): 0},
        log_dirs=dirs,
        configs={
            ConfigResource("TOPIC", "a"): {
                "retention.ms": "3600000",
                "retention.bytes": "-1",
            },
            ConfigResource("TOPIC", "b"): KafkaOperationError(29, "TOPIC_AUTHORIZATION_FAILED", "no"),
        },
        group_offsets={
            "g2": {a0: 45, a1: 3, b0: 9},
            "g1": KafkaOperationError(15, "COORDINATOR_NOT_AVAILABLE", "later"),
        },
    )


def test_the_columns_of_every_awkward_case(tmp_path):
    snapshot = raw()
    tables = telemetry.build_tables(snapshot, NOW)
    assert {k: t.schema for k, t in tables.items()} == lake.SCHEMAS
    head = {"schema_version": lake.SCHEMA_VERSION, "ts": NOW}
    assert tables["partitions"].to_pylist() == [
        {
            **head,
            "topic": "a",
            "partition": 0,
            "leader": 1,
            "replicas": [1, 2],
            "isr": [1, 2],
            "replica_sizes": [100, 90],
            "log_start_offset": 10,
            "log_end_offset": 50,
            "size_bytes": 100,
            "retention_ms": 3_600_000,
            "retention_bytes": -1,
        },
        {
            **head,
            "topic": "a",
            "partition": 1,
            "leader": -1,
            "replicas": [2, 3],
            "isr": [],
            "replica_sizes": [5, -1],
            "log_start_offset": -1,
            "log_end_offset": -1,
            "size_bytes": -1,
            "retention_ms": 3_600_000,
            "retention_bytes": -1,
        },
        {
            **head,
            "topic": "b",
            "partition": 0,
            "leader": 2,
            "replicas": [2, 1, 3],
            "isr": [2],
            "replica_sizes": [8, 7, -1],
            "log_start_offset": 0,
            "log_end_offset": 9,
            "size_bytes": 8,
            "retention_ms": None,
            "retention_bytes": None,
        },
    ]
    assert tables["brokers"].to_pylist() == [
        {**head, "broker": 1, "log_dir": "/d1", "size_bytes": 107, "total_bytes": 1000, "usable_bytes": 900, "error": None},
        {**head, "broker": 1, "log_dir": "/d2", "size_bytes": 40, "total_bytes": None, "usable_bytes": None, "error": None},
        {**head, "broker": 2, "log_dir": "/e1", "size_bytes": 103, "total_bytes": None, "usable_bytes": None, "error": "KAFKA_STORAGE_ERROR"},
        {**head, "broker": 3, "log_dir": "", "size_bytes": None, "total_bytes": None, "usable_bytes": None, "error": "BROKER_NOT_AVAILABLE"},
    ]  # fmt: skip
    assert [(g["group"], g["topic"], g["partition"], g["lag"]) for g in tables["groups"].to_pylist()] == [
        ("g2", "a", 0, 5),
        ("g2", "b", 0, 0),
    ]  # a-1 has no log end: no lag row
    assert any("broker 3" in e for e in snapshot.errors) and any("group g1" in e for e in snapshot.errors)
    paths = lake.write_snapshot(tmp_path, "c", NOW, tables, 300)
    for dataset, path in paths.items():  # what Spark and pyarrow readers get back
        assert pq.read_table(path).equals(tables[dataset])
        # names dictionary-encoded, numbers plain (their hash tables cost more than they saved)
        meta = pq.ParquetFile(path).metadata.row_group(0)
        columns = {meta.column(i).path_in_schema: meta.column(i).encodings for i in range(meta.num_columns)}
        strings = {f.name for f in lake.SCHEMAS[dataset] if str(f.type) == "string"}
        assert strings and strings == {c for c, enc in columns.items() if "RLE_DICTIONARY" in enc}, columns


def test_empty_answers_make_empty_tables_of_the_lake_schemas():
    snapshot = telemetry.RawSnapshot(PartitionLayout.from_metadata((), ()), {}, {}, {}, {}, {})
    tables = telemetry.build_tables(snapshot, NOW)
    assert {k: (t.schema, t.num_rows) for k, t in tables.items()} == {
        k: (s, 0) for k, s in lake.SCHEMAS.items()
    }
