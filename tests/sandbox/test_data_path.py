"""The sandbox's data path answers as Kafka 4.1 does where the message browser depends on it.

What needs the sandbox's inside (a log start moved without DeleteRecords, which the sandbox does not
serve; the raw Fetch answer) is checked here; tests/contract/test_messages.py checks the rest on the
sandbox and on a real Kafka alike.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kafka.protocol.consumer import FetchRequest
from kafka.record.memory_records import MemoryRecords

from console.kafka import ClusterConnection, KafkaGateway, KafkaOperationError
from console.kafka.record_read import fetch_request

T0 = 1_700_000_000_000


@pytest.fixture
def gw(cluster) -> Iterator[KafkaGateway]:
    gateway = KafkaGateway(
        ClusterConnection(bootstrap_servers=cluster.bootstrap_servers, request_timeout_s=5)
    )
    yield gateway
    gateway.close()


def _leader_address(cluster, topic: str, partition: int = 0) -> str:
    leader = cluster.state.topics[topic].partitions[partition].leader
    node = cluster.state.brokers[leader]
    return f"{node.host}:{node.port}"


def _fill(gw, topic: str, partition: int, count: int, size: int = 10) -> None:
    for i in range(count):
        gw.produce_record(
            topic, partition=partition, key=None, value=bytes([65 + i % 26]) * size, timestamp_ms=T0 + i
        )


def test_it_answers_offsets_below_the_log_start_as_out_of_range(cluster, gw):
    from .conftest import call

    cluster.create_topic("trimmed", partitions=1)
    _fill(gw, "trimmed", 0, 10)
    with cluster.state.lock:  # what DeleteRecords up to offset 6 leaves
        cluster.state.topics["trimmed"].partitions[0].log_start_offset = 6
    assert gw.partition_bounds("trimmed") == {0: (6, 10)}
    read = gw.read_records(
        "trimmed", {0: 2}, max_records=5, max_bytes=1 << 20, deadline_s=time.monotonic() + 5
    )[0]
    assert (read.error.name, read.records, read.log_start, read.high_watermark) == (
        "OFFSET_OUT_OF_RANGE",
        (),
        6,
        10,
    )
    assert read.error.message == "offset 2 of trimmed-0 is before the log start (offsets 6 to 10 are held)"
    # Kafka answers an out-of-range partition without bounds (ReplicaManager's UnknownOffset)
    answer = call(_leader_address(cluster, "trimmed"), fetch_request("trimmed", [(0, 2, 1024)], 1024), 11)
    part = answer.responses[0].partitions[0]
    assert (part.error_code, part.high_watermark, part.log_start_offset, bytes(part.records or b"")) == (
        1,
        -1,
        -1,
        b"",
    )
    # a time before every record held: the first offset held, never one below the log start
    assert gw.offsets_for_time("trimmed", [0], T0) == {0: 6}


def test_it_cuts_the_answer_at_the_partition_limit_and_leaves_out_an_oversized_batch_of_a_later_partition(
    cluster, gw
):
    from .conftest import call

    cluster.create_topic("limits", partitions=2, assignment=[[1], [1]])
    _fill(gw, "limits", 0, 5, size=100)  # batches of ~170 bytes
    gw.produce_record("limits", partition=1, key=None, value=b"z" * 5000)
    address = _leader_address(cluster, "limits")
    answer = call(address, fetch_request("limits", [(0, 0, 400), (1, 0, 1000)], 1 << 20), 11)
    first, second = answer.responses[0].partitions
    cut = bytes(first.records)
    assert len(cut) == 400  # two whole batches and a cut third, as Kafka slices its log
    assert [r.offset for b in MemoryRecords(cut) for r in b] == [0, 1]
    assert (second.error_code, bytes(second.records or b""), second.high_watermark) == (0, b"", 1)
    # the first partition of a request gets its oversized first batch whole (KIP-74)
    alone = call(address, fetch_request("limits", [(1, 0, 1000)], 1000), 11).responses[0].partitions[0]
    assert [r.value for b in MemoryRecords(bytes(alone.records)) for r in b] == [b"z" * 5000]
    # and the gateway reads both partitions whole through it
    read = gw.read_records(
        "limits", {0: 0, 1: 0}, max_records=10, max_bytes=1 << 20, deadline_s=time.monotonic() + 5
    )
    assert [len(read[p].records) for p in (0, 1)] == [5, 1]


def test_it_stamps_log_append_time_from_its_clock(cluster, gw):
    cluster.create_topic("appended", partitions=1, configs={"message.timestamp.type": "LogAppendTime"})
    now = int(cluster.state.now_ms)  # the clock is stopped (speed 0)
    produced = gw.produce_record("appended", partition=0, key=b"k", value=b"v", timestamp_ms=T0)
    assert (produced.offset, produced.timestamp) == (0, now)
    read = gw.read_records(
        "appended", {0: 0}, max_records=5, max_bytes=1 << 20, deadline_s=time.monotonic() + 5
    )[0]
    assert [(r.timestamp, r.timestamp_type) for r in read.records] == [(now, "LogAppendTime")]
    assert gw.offsets_for_time("appended", [0], now) == {0: 0}
    assert gw.offsets_for_time("appended", [0], now + 1) == {0: None}


def test_the_fetch_request_it_sends_is_a_consumers(cluster):
    request = fetch_request("t", [(0, 5, 100)], 200)
    assert isinstance(request, FetchRequest)
    assert (request.replica_id, request.max_wait_ms, request.isolation_level, request.max_bytes) == (
        -1,
        0,
        0,
        200,
    )


def test_it_refuses_create_times_beyond_the_topics_limits_as_kafka_does(cluster, gw):
    cluster.create_topic("stamped", partitions=1, configs={"message.timestamp.before.max.ms": "60000"})
    now = int(max(cluster.state.now_ms, time.time() * 1000))
    for late in (now - 3_600_000, now + 7_200_000):
        with pytest.raises(KafkaOperationError) as exc:
            gw.produce_record("stamped", partition=0, key=None, value=b"x", timestamp_ms=late)
        assert exc.value.name == "INVALID_TIMESTAMP"
    assert (
        gw.produce_record("stamped", partition=0, key=None, value=b"x", timestamp_ms=now - 1000).offset == 0
    )
    # a LogAppendTime topic stamps its own time: the producer's is not checked
    cluster.create_topic(
        "stamped-by-broker", partitions=1, configs={"message.timestamp.type": "LogAppendTime"}
    )
    assert (
        gw.produce_record(
            "stamped-by-broker", partition=0, key=None, value=b"x", timestamp_ms=now + 7_200_000
        ).offset
        == 0
    )


def test_a_partition_without_a_leader_is_that_partitions_error(cluster, gw):
    cluster.create_topic("headless", partitions=2, assignment=[[2], [3]])
    gw.produce_record("headless", partition=0, key=None, value=b"kept")
    cluster.stop_broker(3)  # partition 1's only replica: no leader
    read = gw.read_records(
        "headless", {0: 0, 1: 0}, max_records=5, max_bytes=1 << 20, deadline_s=time.monotonic() + 2
    )
    assert [r.value for r in read[0].records] == [b"kept"] and read[0].error is None
    assert (read[1].error.name, read[1].error.message) == ("LEADER_NOT_AVAILABLE", "headless-1 has no leader")
    bounds = gw.partition_bounds("headless")
    assert bounds[0] == (0, 1) and bounds[1].name == "LEADER_NOT_AVAILABLE"
    with pytest.raises(KafkaOperationError) as exc:
        gw.produce_record("headless", partition=1, key=None, value=b"x")
    assert exc.value.name == "LEADER_NOT_AVAILABLE"
    # no key: a partition with a leader
    assert {
        gw.produce_record("headless", partition=None, key=None, value=b"y").partition for _ in range(5)
    } == {0}


def test_a_record_the_client_cannot_write_is_a_kafka_error(cluster, gw):
    cluster.create_topic("typed", partitions=1)
    for bad in (
        {"value": "text, not bytes"},
        {"value": b"v", "headers": [("h", "text")]},
        {"value": b"v", "headers": [(1, b"v")]},
    ):
        with pytest.raises(KafkaOperationError) as exc:
            gw.produce_record("typed", partition=0, key=None, **bad)
        assert exc.value.name == "INVALID_RECORD" and exc.value.message.startswith(
            "the record cannot be written: "
        )
    assert gw.partition_bounds("typed") == {0: (0, 0)}


def test_a_read_right_after_the_bounds_takes_their_leaders_once(cluster, gw, monkeypatch):
    from console.kafka import messages as kafka_messages

    cluster.create_topic("handed", partitions=2)
    _fill(gw, "handed", 0, 3)
    looks = []
    describe = gw.describe_topics
    monkeypatch.setattr(gw, "describe_topics", lambda topics: looks.append(topics) or describe(topics))

    def read(positions):
        return gw.read_records(
            "handed", positions, max_records=5, max_bytes=1 << 20, deadline_s=time.monotonic() + 5
        )

    assert gw.partition_bounds("handed") == {0: (0, 3), 1: (0, 0)}
    assert [r.offset for r in read({0: 0})[0].records] == [0, 1, 2]
    assert len(looks) == 1  # the bounds' Metadata served the read
    read({0: 0})
    assert len(looks) == 2  # handed over once: the next read looks again
    gw.partition_bounds("handed")
    read({0: 0, 7: 0})  # a partition the handed map lacks: looked up afresh
    assert len(looks) == 4
    monkeypatch.setattr(kafka_messages, "LEADERS_REUSE_S", 0.0)
    gw.partition_bounds("handed")
    read({0: 0})  # too old to reuse
    assert len(looks) == 6
