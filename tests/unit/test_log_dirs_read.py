"""A poll's DescribeLogDirs answers read from their bytes (``console/kafka/log_dirs_read.py``): the
same replicas kafka-python's own decoding of the same bytes gives, in every version the console
may be answered in; a truncated or malformed answer is a KafkaOperationError."""

from __future__ import annotations

import random

import pytest
from kafka.protocol.admin import DescribeLogDirsResponse

from console.kafka import KafkaOperationError
from console.kafka.log_dirs_read import read_dirs, read_held
from tests.unit.log_dirs_answers import Record, log_dir
from tests.unit.log_dirs_answers import answer as _answer
from tests.unit.log_dirs_answers import encoded as _encoded

VERSIONS = (1, 2, 3, 4, 5)


def _dirs(rows_by_dir: dict[str, list[Record]]) -> list:
    return [log_dir(path, rows, total=1 << 40, usable=1 << 39) for path, rows in rows_by_dir.items()]


def _kafka_python_held(version: int, data: bytes) -> dict:
    """The replicas as the poll read them from kafka-python's decoding (future replicas left out)."""
    found = {}
    for d in DescribeLogDirsResponse.decode(data, version=version).results:
        for t in d.topics:
            for p in t.partitions:
                if not p.is_future_key:
                    found[(t.name, p.partition_index)] = (p.partition_size, p.offset_lag)
    return found


def _move(n: int = 1000) -> dict[str, list]:
    """One broker's replicas of a 1,000-partition move over 40 topics in two log dirs, with replicas
    moving between the dirs (a future copy in the second dir) and 64-bit sizes."""
    rng = random.Random(36)
    rows_a, rows_b = [], []
    for i in range(n):
        topic, partition = f"topic-é-{i % 40}", i // 40
        size = rng.randrange(0, 1 << 42)
        (rows_a if i % 3 else rows_b).append((topic, partition, size, rng.randrange(0, 1000), False))
        if i % 17 == 0:
            rows_b.append((topic, partition, size // 2, rng.randrange(1, 1 << 33), True))
    return {"/data/a": rows_a, "/data/b": rows_b}


@pytest.mark.parametrize("version", VERSIONS)
def test_it_reads_a_1000_partition_move_as_kafka_pythons_decoding_does(version):
    data = _encoded(version, _dirs(_move()))
    expected = _kafka_python_held(version, data)
    assert len(expected) == 1000
    answer = _answer(version, data)
    assert read_held(answer) == expected
    assert answer.buffer is None  # released


@pytest.mark.parametrize("version", VERSIONS)
def test_it_merges_log_dirs_and_leaves_future_replicas_out(version):
    dirs = {
        "/a": [("t", 0, 100, 0, False), ("t", 1, 50, 0, False)],
        "/b": [("t", 0, 40, 60, True), ("u", 0, 7, 0, False)],
        "/empty": [],
    }
    held = read_held(_answer(version, _encoded(version, _dirs(dirs))))
    assert held == {("t", 0): (100, 0), ("t", 1): (50, 0), ("u", 0): (7, 0)}


@pytest.mark.parametrize("version", VERSIONS)
def test_each_dirs_figures_count_its_moving_replicas_too(version):
    dirs = [
        log_dir("/a", [("t", 0, 100, 0, False), ("t", 1, 50, 0, False)], total=1000, usable=800),
        log_dir("/b", [("t", 0, 40, 60, True), ("u", 0, 7, 0, False)], error_code=56, total=2000, usable=10),
        log_dir("/empty", []),
    ]
    seen = []
    got = read_dirs(_answer(version, _encoded(version, dirs)), lambda t, records: seen.append((t, records)))
    told = version >= 4  # total and usable bytes came with version 4
    assert got == [
        ("/a", 0, 150, 1000 if told else -1, 800 if told else -1),
        ("/b", 56, 47, 2000 if told else -1, 10 if told else -1),
        ("/empty", 0, 0, -1, -1),
    ]
    assert seen == [
        ("t", [(0, 100, 0, False), (1, 50, 0, False)]),
        ("t", [(0, 40, 60, True)]),
        ("u", [(0, 7, 0, False)]),
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_it_refuses_every_truncated_answer(version):
    data = _encoded(version, _dirs({"/a": [("t", 0, 100, 0, False), ("t", 1, 5, 0, False)]}))
    for cut in range(len(data)):
        with pytest.raises(KafkaOperationError) as caught:
            read_held(_answer(version, data[:cut]))
        assert caught.value.name == "UNKNOWN_SERVER_ERROR"
        assert "unreadable DescribeLogDirs answer" in str(caught.value)


def test_it_refuses_lengths_past_the_end_and_unknown_versions():
    data = bytearray(_encoded(2, _dirs({"/a": [("t", 0, 100, 0, False)]})))
    data[4] = 0x7F  # the log dirs' count: 126 dirs in a few bytes
    for version, body in ((2, bytes(data)), (6, _encoded(5, []))):
        with pytest.raises(KafkaOperationError) as caught:
            read_held(_answer(version, body))
        assert caught.value.name == "UNKNOWN_SERVER_ERROR"


def test_it_reads_partitions_with_tagged_fields():
    """Kafka sends no tagged field in a partition today; one there is skipped, not misread."""
    data = _encoded(2, _dirs({"/a": [("t", 0, 100, 3, False), ("t", 1, 50, 0, False)]}))
    record = (0).to_bytes(4, "big") + (100).to_bytes(8, "big") + (3).to_bytes(8, "big") + b"\x00"
    at = data.index(record) + len(record)
    assert data[at] == 0  # partition 0's empty tagged fields
    tagged = data[:at] + bytes([1, 9, 2, 0xAB, 0xCD]) + data[at + 1 :]  # one tag (9), 2 bytes
    assert read_held(_answer(2, tagged)) == {("t", 0): (100, 3), ("t", 1): (50, 0)}


def test_it_raises_the_answers_error():
    data = _encoded(3, [], error_code=31)
    with pytest.raises(KafkaOperationError) as caught:
        read_held(_answer(3, data))
    assert caught.value.name == "CLUSTER_AUTHORIZATION_FAILED"
