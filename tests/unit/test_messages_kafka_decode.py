"""Decoding a Fetch answer's record batches as the Java consumer does (console/kafka/record_read.py).

Control batches (transaction markers) cannot be written by a client, so one is made here by marking
a built batch as Kafka's transaction coordinator marks its markers; the contract test reads real ones.
"""

from __future__ import annotations

import dataclasses
import struct

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from kafka.record.util import calc_crc32c

from console.kafka.record_read import RawRecord, decode_records, partition_limits

CONTROL = 0x20  # the attributes' control bit
TRANSACTIONAL = 0x10


def batch(offset: int, values: list[bytes], *, control: bool = False) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, offset=offset)
    for i, value in enumerate(values):
        builder.append(timestamp=1000 + offset + i, key=b"k", value=value, headers=[("h", b"v")])
    builder.close()
    raw = bytearray(builder.buffer())
    if control:  # a COMMIT marker: key = version 0, type 1
        raw = bytearray(_commit_marker(offset))
        attributes = struct.unpack_from(">h", raw, 21)[0] | CONTROL | TRANSACTIONAL
        struct.pack_into(">h", raw, 21, attributes)
        struct.pack_into(">I", raw, 17, calc_crc32c(memoryview(raw)[21:]))
    return bytes(raw)


def _commit_marker(offset: int) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, offset=offset)
    builder.append(timestamp=5000, key=struct.pack(">hh", 0, 1), value=struct.pack(">hi", 0, 0), headers=[])
    builder.close()
    return bytes(builder.buffer())


def test_it_leaves_control_batches_out_and_counts_their_offsets():
    data = batch(0, [b"a", b"b", b"c"]) + batch(3, [], control=True) + batch(4, [b"d", b"e"])
    decoded = decode_records(data, 2, 0, 100)
    assert [(r.partition, r.offset, r.value) for r in decoded.records] == [
        (2, 0, b"a"),
        (2, 1, b"b"),
        (2, 2, b"c"),
        (2, 4, b"d"),
        (2, 5, b"e"),
    ]
    assert decoded.next_offset == 6
    only_marker = decode_records(batch(3, [], control=True), 2, 3, 100)
    assert (only_marker.records, only_marker.next_offset) == ([], 4)


def test_it_skips_records_before_the_position_and_stops_at_the_limit():
    data = batch(10, [b"a", b"b", b"c", b"d"])
    decoded = decode_records(data, 0, 11, 2)
    assert [r.offset for r in decoded.records] == [11, 12]
    assert decoded.next_offset == 13  # the last record taken + 1, inside the batch
    first = decoded.records[0]
    assert (first.timestamp, first.timestamp_type, first.key, first.headers, first.size) == (
        1011,
        "CreateTime",
        b"k",
        (("h", b"v"),),
        len(b"k") + len(b"b") + len(b"h") + len(b"v"),
    )


def test_a_batch_cut_at_the_end_of_the_answer_is_no_error():
    data = batch(0, [b"a", b"b"]) + batch(2, [b"c", b"d"])
    decoded = decode_records(data[:-7], 0, 0, 100)
    assert [r.offset for r in decoded.records] == [0, 1]
    assert decoded.next_offset == 2  # the cut batch is read again from its start
    nothing = decode_records(data[:20], 0, 0, 100)
    assert (nothing.records, nothing.next_offset) == ([], 0)


def test_a_corrupt_batch_ends_the_records_with_a_kafka_error():
    raw = bytearray(batch(2, [b"c", b"d"]))
    struct.pack_into(">i", raw, 57, 1)  # the record count no longer matches the records
    decoded = decode_records(batch(0, [b"a", b"b"]) + bytes(raw), 4, 0, 100)
    assert ([r.value for r in decoded.records], decoded.next_offset) == ([b"a", b"b"], 2)
    assert (decoded.error.code, decoded.error.name) == (2, "CORRUPT_MESSAGE")
    assert decoded.error.message.startswith("a record batch of partition 4 at offset 2 could not be read: ")
    assert decode_records(batch(0, [b"a"]), 4, 0, 100).error is None


def test_each_partition_asks_for_what_its_records_are_expected_to_take():
    assert partition_limits({0: 500, 1: 1}, 1000.0, 4 << 20) == {0: 550_512, 1: 16 * 1024}
    assert partition_limits({0: 500}, 1000.0, 100_000) == {0: 100_000}  # never beyond what is left


def test_it_reads_compressed_and_old_format_batches():
    def built(magic: int, codec: int) -> bytes:
        builder = MemoryRecordsBuilder(magic=magic, compression_type=codec, batch_size=1 << 20, offset=0)
        for i in range(3):
            builder.append(
                timestamp=2000 + i,
                key=None,
                value=f"v{i}".encode(),
                headers=[] if magic < 2 else [("n", None)],
            )
        builder.close()
        return bytes(builder.buffer())

    for magic, codec in ((2, 1), (2, 2), (2, 3), (2, 4), (1, 0), (1, 1), (0, 0)):
        decoded = decode_records(built(magic, codec), 0, 1, 100)
        assert decoded.error is None, (magic, codec, decoded.error)
        assert [(r.offset, r.value, r.key) for r in decoded.records] == [(1, b"v1", None), (2, b"v2", None)]
        assert decoded.next_offset == 3
        if magic > 0:
            assert [r.timestamp for r in decoded.records] == [2001, 2002]


def test_every_field_of_every_record_is_read_as_kafka_python_reads_it():
    """Varints of one byte and of several (long keys, values, header names; large timestamp and
    offset deltas), null keys, values and header values, many headers and none."""
    from kafka.record.memory_records import MemoryRecords

    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 22, offset=70)
    rows = [
        (1_000, b"k", b"v", [("h", b"x")]),
        (1_000, None, None, []),
        (999, b"", b"", [("n" * 70, None), ("", b"")]),
        (1_000 + 10**9, b"K" * 300, b"V" * 70_000, [(f"h{i}", bytes([i]) * i) for i in range(90)]),
        (5, b"\xff\x00", b'{"a": 1}', [("trace-id", b"t-000001")]),
    ]
    for ts, key, value, headers in rows:
        builder.append(timestamp=ts, key=key, value=value, headers=headers)
    builder.close()
    data = bytes(builder.buffer())
    expected = [
        (r.offset, r.timestamp, r.key, r.value, tuple((n, v) for n, v in r.headers))
        for r in MemoryRecords(data).next_batch()
    ]
    decoded = decode_records(data, 1, 70, 100)
    assert decoded.error is None and decoded.next_offset == 75
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in decoded.records] == expected
    assert decoded.records[3].size == 300 + 70_000 + sum(len(f"h{i}") + i for i in range(90))
    assert decoded.records[1].size == 0 and decoded.records[2].size == 70
    first = RawRecord(1, 70, 1_000, "CreateTime", b"k", b"v", (("h", b"x"),), 4)
    assert decoded.records[0] == first and hash(decoded.records[0]) == hash(first)
    assert repr(decoded.records[0]) == repr(first)
    with pytest.raises(dataclasses.FrozenInstanceError):
        decoded.records[0].offset = 1
