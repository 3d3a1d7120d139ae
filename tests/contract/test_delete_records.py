"""Purging records (KIP-107 DeleteRecords) through the gateway, on the sandbox and on a real Kafka 4.1:
each partition's low watermark, -1 as the high watermark, an offset at or below the log start changing
nothing, Kafka's refusals per partition, and what ListOffsets, reads by time and Fetch answer after.

Run against a real cluster with ``KAFKA_BOOTSTRAP_SERVERS=host:9092 .venv/bin/python -m pytest
tests/contract/test_delete_records.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import time

import pytest

from console.kafka import KafkaOperationError

from .conftest import eventually

pytestmark = pytest.mark.contract

T0 = 1_700_000_000_000


def _fill(gw, topic: str, partition: int, count: int) -> None:
    for i in range(count):
        gw.produce_record(
            topic, partition=partition, key=None, value=f"record {i:04d}".encode(), timestamp_ms=T0 + i * 1000
        )


def _names(answers: dict) -> dict:
    return {p: a.name if isinstance(a, KafkaOperationError) else a for p, a in answers.items()}


def test_it_moves_log_starts_and_answers_each_partitions_low_watermark(gw, topics):
    topic = topics.create(partitions=3, replication_factor=2)
    _fill(gw, topic, 0, 10)
    _fill(gw, topic, 1, 4)
    assert gw.delete_records(topic, {0: 6, 1: -1, 2: 0}) == {0: 6, 1: 4, 2: 0}
    assert gw.partition_bounds(topic) == {0: (6, 10), 1: (4, 4), 2: (0, 0)}
    # at or below the log start: nothing moves, the answer is the start as it is
    assert gw.delete_records(topic, {0: 3}) == {0: 6}
    assert gw.partition_bounds(topic) == {0: (6, 10), 1: (4, 4), 2: (0, 0)}
    # a time before every record held: the first offset held, never one below the log start
    assert gw.offsets_for_time(topic, [0], T0) == {0: 6}
    read = gw.read_records(topic, {0: 2}, max_records=5, max_bytes=1 << 20, deadline_s=time.monotonic() + 10)[
        0
    ]
    assert (read.error.name, read.log_start, read.high_watermark) == ("OFFSET_OUT_OF_RANGE", 6, 10)
    read = gw.read_records(
        topic, {0: 6}, max_records=10, max_bytes=1 << 20, deadline_s=time.monotonic() + 10
    )[0]
    assert [r.offset for r in read.records] == [6, 7, 8, 9]


def test_it_answers_kafkas_refusals_per_partition_and_changes_nothing(gw, topics):
    topic = topics.create(partitions=2)
    compacted = topics.create(partitions=1, configs={"cleanup.policy": "compact"})
    _fill(gw, topic, 0, 5)
    for i in range(2):  # a compacted topic takes keyed records only
        gw.produce_record(compacted, partition=0, key=f"k{i}".encode(), value=b"v")
    assert _names(gw.delete_records(topic, {0: 6, 1: 0, 7: 1})) == {
        0: "OFFSET_OUT_OF_RANGE",  # above the high watermark
        1: 0,
        7: "UNKNOWN_TOPIC_OR_PARTITION",
    }
    assert _names(gw.delete_records(topic, {0: -2})) == {0: "OFFSET_OUT_OF_RANGE"}
    assert _names(gw.delete_records(compacted, {0: 1})) == {0: "POLICY_VIOLATION"}
    assert gw.partition_bounds(topic) == {0: (0, 5), 1: (0, 0)}
    assert gw.partition_bounds(compacted) == {0: (0, 2)}
    with pytest.raises(KafkaOperationError) as caught:
        gw.delete_records(topics.name(), {0: 1})
    assert caught.value.name == "UNKNOWN_TOPIC_OR_PARTITION"


def test_kafkas_internal_topics_are_refused(gw):
    meta = gw.describe_topics(["__consumer_offsets"])["__consumer_offsets"]
    if isinstance(meta, KafkaOperationError):  # no group has committed yet: Kafka does not know it
        with pytest.raises(KafkaOperationError) as caught:
            gw.delete_records("__consumer_offsets", {0: 0})
        assert caught.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
    else:
        assert _names(gw.delete_records("__consumer_offsets", {0: 0})) == {0: "INVALID_TOPIC_EXCEPTION"}


def test_it_reads_the_leaders_sizes_for_the_estimate(gw, topics):
    topic = topics.create(partitions=2, replication_factor=2)
    _fill(gw, topic, 0, 20)
    sizes = eventually(lambda: gw.partition_sizes(topic), lambda s: (s.get(0) or 0) > 0)
    assert set(sizes) == {0, 1}
    assert sizes[0] > 20 * len(b"record 0000") and sizes[1] == 0
