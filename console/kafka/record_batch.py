"""The records of one v2 record batch (Kafka's ``DefaultRecordBatch`` format), read in one pass.

A browse reads up to 500 records a page; going through kafka-python's record objects (a
``DefaultRecord`` per record, then ours) cost twice kafka-python's own iteration. This reads the
batch's records straight into tuples; the batch is
decompressed with kafka-python's codec functions (gzip, snappy, lz4, zstd). Older formats (magic 0
and 1) are not read here: the caller reads them through kafka-python.

The layout (KIP-98, ``DefaultRecordBatch``): a 61-byte header - base offset (int64), length
(int32), partition leader epoch (int32), magic (int8), CRC (uint32), attributes (int16: bits 0-2
the codec, bit 3 LogAppendTime, bit 4 transactional, bit 5 control), last offset delta (int32),
base timestamp (int64), max timestamp (int64), producer id (int64), producer epoch (int16), base
sequence (int32), record count (int32) - then the records: length, attributes (int8), timestamp
delta, offset delta, key, value (each a length and the bytes, -1 = null) and headers (a count, then
each name and value), every integer a zig-zag varint.
"""

from __future__ import annotations

import struct

from kafka import codec

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LENGTH_AT = 8
MAGIC_AT = 16
CONTROL = 0x20
LOG_APPEND_TIME = 0x08
_DECODERS = {1: "gzip_decode", 2: "snappy_decode", 3: "lz4_decode", 4: "zstd_decode"}


class BatchHeader:
    """The fields of a v2 batch header a reader needs."""

    __slots__ = ("base_offset", "last_offset", "control", "log_append_time", "codec", "base_timestamp",
                 "max_timestamp", "count")  # fmt: skip

    def __init__(self, data: bytes, pos: int) -> None:
        (base, _, _, _, _, attributes, last_delta, base_ts, max_ts, _, _, _, count) = HEADER.unpack_from(
            data, pos
        )
        self.base_offset, self.last_offset = base, base + last_delta
        self.control = bool(attributes & CONTROL)
        self.log_append_time = bool(attributes & LOG_APPEND_TIME)
        self.codec = attributes & 0x07
        self.base_timestamp, self.max_timestamp, self.count = base_ts, max_ts, count


def records(data: bytes, pos: int, end: int, head: BatchHeader, start: int) -> list[tuple]:
    """The batch's records at or after offset ``start`` as ``(offset, timestamp, key, value,
    headers, size)`` (timestamp: the batch's max for LogAppendTime; size: the bytes of the key, the
    value and the headers' names and values); raises ValueError on bytes that do not hold the
    records the header announces."""
    body = data[pos + HEADER_SIZE : end]
    if head.codec:
        name = _DECODERS.get(head.codec)
        decode = getattr(codec, name, None) if name else None
        if decode is None:
            raise ValueError(f"compression codec {head.codec} cannot be decoded here")
        body = bytes(decode(body))
    out = []
    i, size = 0, len(body)
    base, base_ts = head.base_offset, head.base_timestamp
    append_ts = head.max_timestamp if head.log_append_time else None
    varint = _varint
    # Each varint is read inline when it is one byte (most are: a record's attributes, deltas, key and
    # header lengths), through ``_varint`` otherwise: a call per field cost a third of the decoding.
    for _ in range(head.count):
        b = body[i]
        length, i = ((b >> 1) ^ -(b & 1), i + 1) if b < 0x80 else varint(body, i)
        stop = i + length
        b = body[i + 1]  # after the record's attributes (unused)
        ts_delta, i = ((b >> 1) ^ -(b & 1), i + 2) if b < 0x80 else varint(body, i + 1)
        b = body[i]
        offset_delta, i = ((b >> 1) ^ -(b & 1), i + 1) if b < 0x80 else varint(body, i)
        b = body[i]
        n, i = ((b >> 1) ^ -(b & 1), i + 1) if b < 0x80 else varint(body, i)
        if n < 0:
            key, payload = None, 0
        else:
            key, payload = body[i : i + n], n
            i += n
        b = body[i]
        n, i = ((b >> 1) ^ -(b & 1), i + 1) if b < 0x80 else varint(body, i)
        if n < 0:
            value = None
        else:
            value = body[i : i + n]
            i += n
            payload += n
        b = body[i]
        count, i = ((b >> 1) ^ -(b & 1), i + 1) if b < 0x80 else varint(body, i)
        headers = []
        for _ in range(count):
            b = body[i]
            n, i = ((b >> 1) ^ -(b & 1), i + 1) if b < 0x80 else varint(body, i)
            name = body[i : i + n].decode()
            i += n
            payload += n
            b = body[i]
            n, i = ((b >> 1) ^ -(b & 1), i + 1) if b < 0x80 else varint(body, i)
            if n < 0:
                headers.append((name, None))
            else:
                headers.append((name, body[i : i + n]))
                i += n
                payload += n
        if i != stop or i > size:
            raise ValueError(f"a record's length says {length} bytes, its fields hold {length + i - stop}")
        offset = base + offset_delta
        if offset >= start:
            out.append((offset, base_ts + ts_delta if append_ts is None else append_ts, key, value,
                        tuple(headers), payload))  # fmt: skip
    if i != size:
        raise ValueError(f"{size - i} bytes left after the batch's {head.count} records")
    return out


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """A zig-zag varint at ``i``: (value, the position after it)."""
    b = buf[i]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), i + 1
    value, shift = b & 0x7F, 7
    while True:
        i += 1
        b = buf[i]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return (value >> 1) ^ -(value & 1), i + 1
        shift += 7
