"""The message browser's Kafka calls, on the sandbox and on a real Kafka 4.1.

``read_records`` must read what an independent consumer reads (kafka-python's ``KafkaConsumer``
with no group, ``assign`` + ``seek``) record for record: partition, offset, key, value, headers,
timestamp and its type, whatever codec the producer compressed the batches with. ``produce_record``
writes with acks=all and places a keyed record where the Java client's default partitioner does.

Run against a real cluster with ``KAFKA_BOOTSTRAP_SERVERS=host:9092 .venv/bin/python -m pytest
tests/contract/test_messages.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import os
import time

import pytest
from confluent_kafka import Producer

from console.kafka import KafkaOperationError, RawRecord
from console.kafka.clientconf import kafka_python_config
from console.kafka.messages import key_partition

from .conftest import eventually, unique

pytestmark = pytest.mark.contract

T0 = 1_700_000_000_000  # the records' CreateTime: fixed, so reads by time have known answers
DAY_MS = 24 * 3600 * 1000
CONSUMER_KEYS = (
    "bootstrap_servers",
    "security_protocol",
    "ssl_context",
    "ssl_check_hostname",
    "sasl_mechanism",
    "sasl_plain_username",
    "sasl_plain_password",
    "sasl_oauth_token_provider",
    "sasl_kerberos_service_name",
    "sasl_kerberos_name",
)
# Kafka's own murmur2 test vectors (apache/kafka UtilsTest.testMurmur2, signed Java ints).
JAVA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"abc": 479470107,
}


def _deadline(s: float = 10.0) -> float:
    return time.monotonic() + s


def independent_read(conn, topic: str, partition: int, start: int, count: int) -> list[tuple]:
    """``count`` records from ``start`` as kafka-python's KafkaConsumer reads them (no group)."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTP

    cfg = {k: v for k, v in kafka_python_config(conn).items() if k in CONSUMER_KEYS}
    consumer = KafkaConsumer(group_id=None, enable_auto_commit=False, **cfg)
    try:
        tp = KafkaTP(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, start)
        out: list[tuple] = []
        end = time.monotonic() + 20
        while len(out) < count and time.monotonic() < end:
            for records in consumer.poll(timeout_ms=500).values():
                out.extend(records)
        return [
            (partition, r.offset, r.timestamp, ("CreateTime", "LogAppendTime")[r.timestamp_type], r.key, r.value,
             tuple((k, v) for k, v in r.headers))
            for r in out[:count]
        ]  # fmt: skip
    finally:
        consumer.close()


def _tuples(records: tuple[RawRecord, ...]) -> list[tuple]:
    return [
        (r.partition, r.offset, r.timestamp, r.timestamp_type, r.key, r.value, r.headers) for r in records
    ]


def _produce_keyed(gw, topic: str, count: int) -> list:
    """``count`` keyed records with headers, CreateTime T0 + i seconds, partition by key."""
    return [
        gw.produce_record(
            topic,
            partition=None,
            key=f"key-{i % 7}".encode(),
            value=f'{{"n": {i}, "note": "value {i}"}}'.encode(),
            headers=[("trace", f"t-{i}".encode()), ("empty", None), ("kind", b"\x00\x01bin")],
            timestamp_ms=T0 + i * 1000,
        )
        for i in range(count)
    ]


def test_it_reads_back_keyed_records_with_headers_as_an_independent_consumer_does(gw, conn, topics):
    topic = topics.create(partitions=3)
    produced = _produce_keyed(gw, topic, 30)
    for i, rec in enumerate(produced):
        assert rec.partition == key_partition(f"key-{i % 7}".encode(), 3)
        assert rec.timestamp == T0 + i * 1000
    per_partition = {p: sum(1 for r in produced if r.partition == p) for p in range(3)}
    assert gw.partition_bounds(topic) == {p: (0, n) for p, n in per_partition.items()}

    read = gw.read_records(
        topic, dict.fromkeys(range(3), 0), max_records=500, max_bytes=1 << 20, deadline_s=_deadline()
    )
    assert sorted(read) == [0, 1, 2]
    for p, n in per_partition.items():
        assert read[p].error is None
        assert (read[p].next_offset, read[p].log_start, read[p].high_watermark) == (n, 0, n)
        assert _tuples(read[p].records) == independent_read(conn, topic, p, 0, n)
        assert [r.offset for r in read[p].records] == list(range(n))
    first = next(r for p in range(3) for r in read[p].records if r.value.startswith(b'{"n": 0,'))
    assert first == RawRecord(
        partition=produced[0].partition,
        offset=0,
        timestamp=T0,
        timestamp_type="CreateTime",
        key=b"key-0",
        value=b'{"n": 0, "note": "value 0"}',
        headers=(("trace", b"t-0"), ("empty", None), ("kind", b"\x00\x01bin")),
        size=len(b"key-0") + len(b'{"n": 0, "note": "value 0"}') + len(b"tracet-0emptykind\x00\x01bin"),
    )


def test_it_reads_from_an_offset_a_time_the_newest_and_the_oldest(gw, topics):
    topic = topics.create(partitions=1)
    for i in range(20):
        gw.produce_record(topic, partition=0, key=None, value=f"v{i}".encode(), timestamp_ms=T0 + i * 1000)

    def values(positions, n):
        read = gw.read_records(topic, positions, max_records=n, max_bytes=1 << 20, deadline_s=_deadline())
        return [r.value.decode() for r in read[0].records], read[0].next_offset

    assert values({0: 5}, 3) == (["v5", "v6", "v7"], 8)  # by offset
    assert values({0: 0}, 2) == (["v0", "v1"], 2)  # oldest
    assert values({0: 17}, 10) == (["v17", "v18", "v19"], 20)  # newest: the last 3
    assert values({0: 20}, 10) == ([], 20)  # at the high watermark: nothing yet, no error
    late = gw.read_records(topic, {0: 0}, max_records=2, max_bytes=1 << 20, deadline_s=time.monotonic() - 1)[
        0
    ]
    assert ([r.offset for r in late.records], late.high_watermark) == (
        [0, 1],
        20,
    )  # one round whatever the time
    assert gw.offsets_for_time(topic, [0], T0 + 7000) == {0: 7}
    assert gw.offsets_for_time(topic, [0], T0 + 7001) == {0: 8}  # the first record at or after it
    assert gw.offsets_for_time(topic, [0], T0 - 5) == {0: 0}
    assert gw.offsets_for_time(topic, [0], T0 + 60_000) == {0: None}  # no record that recent
    missing = gw.offsets_for_time(topic, [0, 4], T0)[4]
    assert isinstance(missing, KafkaOperationError) and missing.name == "UNKNOWN_TOPIC_OR_PARTITION"


def test_it_reads_across_partitions_within_the_limits(gw, topics):
    topic = topics.create(partitions=3)
    for p in range(3):
        for i in range(10):
            gw.produce_record(topic, partition=p, key=b"k", value=b"x" * 100, timestamp_ms=T0 + i)
    read = gw.read_records(
        topic, {0: 0, 1: 4, 2: 9}, max_records=4, max_bytes=1 << 20, deadline_s=_deadline()
    )
    assert {p: [r.offset for r in pr.records] for p, pr in read.items()} == {
        0: [0, 1, 2, 3],
        1: [4, 5, 6, 7],
        2: [9],
    }
    assert {p: pr.next_offset for p, pr in read.items()} == {0: 4, 1: 8, 2: 10}
    # a read bounded by bytes continues where it stopped: a cut batch is no error
    seen, position = [], 0
    for _ in range(20):
        part = gw.read_records(topic, {0: position}, max_records=10, max_bytes=300, deadline_s=_deadline())[0]
        assert part.error is None
        seen += [r.offset for r in part.records]
        position = part.next_offset
        if position == 10:
            break
    assert seen == list(range(10))


def test_it_refuses_unknown_topics_partitions_and_offsets_past_the_end(gw, topics):
    topic = topics.create(partitions=2)
    gw.produce_record(topic, partition=1, key=None, value=b"one")
    with pytest.raises(KafkaOperationError) as exc:
        gw.partition_bounds("ct-no-such-topic-messages")
    assert exc.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
    with pytest.raises(KafkaOperationError) as exc:
        gw.log_starts("ct-no-such-topic-messages")
    assert exc.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
    with pytest.raises(KafkaOperationError) as exc:
        gw.read_records(
            "ct-no-such-topic-messages", {0: 0}, max_records=1, max_bytes=1024, deadline_s=_deadline()
        )
    assert exc.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
    read = gw.read_records(topic, {1: 5, 7: 0}, max_records=5, max_bytes=1 << 20, deadline_s=_deadline())
    assert read[1].error.name == "OFFSET_OUT_OF_RANGE"
    assert (read[1].records, read[1].log_start, read[1].high_watermark) == ((), 0, 1)
    assert "past the high watermark" in read[1].error.message
    assert read[7].error.name == "UNKNOWN_TOPIC_OR_PARTITION"
    with pytest.raises(KafkaOperationError) as exc:
        gw.produce_record(topic, partition=9, key=None, value=b"x")
    assert exc.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
    # CreateTime more than message.timestamp.after.max.ms (Kafka 4's default: 1 hour) ahead of the broker
    with pytest.raises(KafkaOperationError) as exc:
        gw.produce_record(
            topic, partition=1, key=None, value=b"x", timestamp_ms=int(time.time() * 1000) + 30 * DAY_MS
        )
    assert (exc.value.name, exc.value.message) == (
        "INVALID_TIMESTAMP",
        f"One or more records have been rejected due to invalid timestamp ({topic}-1)",
    )
    assert gw.partition_bounds(topic) == {0: (0, 0), 1: (0, 1)}  # nothing written
    assert gw.log_starts(topic) == {0: 0, 1: 0}


def test_it_refuses_a_record_larger_than_the_topics_limit(gw, topics):
    topic = topics.create(partitions=1, configs={"max.message.bytes": "10000"})
    assert gw.produce_record(topic, partition=0, key=None, value=b"x" * 9000).offset == 0
    with pytest.raises(KafkaOperationError) as exc:  # the batch of one record: ~20 KB
        gw.produce_record(topic, partition=0, key=None, value=b"x" * 20_000)
    assert (exc.value.code, exc.value.name) == (10, "MESSAGE_TOO_LARGE")  # Kafka's Errors name
    assert gw.partition_bounds(topic) == {0: (0, 1)}


def test_it_reports_an_offset_below_the_log_start(gw, topics, endpoints):
    from confluent_kafka import TopicPartition as CTP
    from confluent_kafka.admin import AdminClient

    topic = topics.create(partitions=1)
    for i in range(10):
        gw.produce_record(topic, partition=0, key=None, value=f"v{i}".encode())
    admin = AdminClient(endpoints.client_config())
    for future in admin.delete_records([CTP(topic, 0, 6)]).values():
        future.result(30)
    assert gw.partition_bounds(topic) == {0: (6, 10)}
    assert gw.log_starts(topic) == {0: 6}
    read = gw.read_records(topic, {0: 2}, max_records=5, max_bytes=1 << 20, deadline_s=_deadline())[0]
    assert (read.error.name, read.records, read.log_start, read.high_watermark) == (
        "OFFSET_OUT_OF_RANGE",
        (),
        6,
        10,
    )
    assert "before the log start" in read.error.message


def test_it_places_keyed_records_where_the_java_partitioner_does(gw, topics):
    # Kafka's own vectors, by hand: toPositive(murmur2) % 6 as BuiltInPartitioner.partitionForKey
    assert {k: (v & 0x7FFFFFFF) % 6 for k, v in JAVA_MURMUR2.items()} == {
        b"21": 0,
        b"foobar": 0,
        b"a-little-bit-long-string": 2,
        b"a-little-bit-longer-string": 5,
        b"abc": 3,
    }
    topic = topics.create(partitions=6)
    placed = {k: gw.produce_record(topic, partition=None, key=k, value=b"v").partition for k in JAVA_MURMUR2}
    assert placed == {k: (v & 0x7FFFFFFF) % 6 for k, v in JAVA_MURMUR2.items()}
    unkeyed = gw.produce_record(topic, partition=None, key=None, value=b"anywhere")
    assert 0 <= unkeyed.partition < 6 and unkeyed.offset >= 0


def test_it_leaves_transaction_markers_out(gw, conn, topics, endpoints):
    topic = topics.create(partitions=1)
    producer = Producer(endpoints.client_config(**{"transactional.id": unique("ct-txn")}))
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, value=f"t{i}".encode(), partition=0)
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"aborted", partition=0)
    assert producer.flush(30) == 0  # written, then aborted (abort alone drops what is still queued)
    producer.abort_transaction(30)
    read = eventually(
        lambda: gw.read_records(topic, {0: 0}, max_records=50, max_bytes=1 << 20, deadline_s=_deadline())[0],
        lambda r: r.next_offset == 6,
    )
    # READ_UNCOMMITTED, kafka-console-consumer's default: the aborted record shows, the markers do not
    assert [(r.offset, r.value) for r in read.records] == [
        (0, b"t0"),
        (1, b"t1"),
        (2, b"t2"),
        (4, b"aborted"),
    ]
    assert (read.error, read.next_offset, read.high_watermark) == (None, 6, 6)
    assert _tuples(read.records) == independent_read(conn, topic, 0, 0, 4)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_it_decodes_compressed_batches(gw, conn, topics, endpoints, codec):
    topic = topics.create(partitions=1)
    producer = Producer(endpoints.client_config(**{"compression.type": codec, "linger.ms": 50}))
    for i in range(40):
        producer.produce(topic, value=(f"{codec} record {i} " * 20).encode(), key=f"k{i}".encode(),
                         partition=0, timestamp=T0 + i, headers=[("codec", codec.encode())])  # fmt: skip
    assert producer.flush(30) == 0
    # from the middle of a compressed batch: its records before the offset are skipped
    read = gw.read_records(topic, {0: 3}, max_records=500, max_bytes=1 << 20, deadline_s=_deadline())[0]
    assert read.error is None and read.next_offset == 40
    assert _tuples(read.records) == independent_read(conn, topic, 0, 3, 37)
    assert read.records[0].value == (f"{codec} record 3 " * 20).encode()
    assert read.records[0].headers == (("codec", codec.encode()),)
    assert gw.offsets_for_time(topic, [0], T0 + 5) == {0: 5}  # a record inside a compressed batch


def test_it_reads_log_append_time_as_the_broker_stamped_it(gw, conn, topics):
    topic = topics.create(partitions=1, configs={"message.timestamp.type": "LogAppendTime"})
    produced = gw.produce_record(topic, partition=0, key=b"k", value=b"v", timestamp_ms=T0)
    assert produced.offset == 0 and produced.timestamp > T0
    read = gw.read_records(topic, {0: 0}, max_records=5, max_bytes=1 << 20, deadline_s=_deadline())[0]
    assert [(r.timestamp, r.timestamp_type) for r in read.records] == [(produced.timestamp, "LogAppendTime")]
    assert _tuples(read.records) == independent_read(conn, topic, 0, 0, 1)


def test_it_returns_a_batch_larger_than_the_byte_limit_whole(gw, topics):
    topic = topics.create(partitions=2)
    big = os.urandom(200_000)
    gw.produce_record(topic, partition=0, key=b"small", value=b"s")
    gw.produce_record(topic, partition=1, key=b"big", value=big)
    gw.produce_record(topic, partition=1, key=b"after", value=b"a")
    read = gw.read_records(topic, {0: 0, 1: 0}, max_records=10, max_bytes=64 * 1024, deadline_s=_deadline())
    assert [r.key for r in read[0].records] == [b"small"]
    assert read[1].error is None
    assert [r.key for r in read[1].records][:1] == [b"big"]
    assert read[1].records[0].value == big and read[1].records[0].size == 3 + len(big)
