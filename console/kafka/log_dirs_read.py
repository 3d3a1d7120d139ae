"""A poll's DescribeLogDirs answers read in one pass: each broker's replicas as
``{(topic, partition): (size, offset lag)}``, no object per replica.

A reassignment poll of 10,000 moving partitions asks each involved broker about the partitions it
may host: ~40,000 replicas a cycle. kafka-python decoded each into a data-container object (on its
I/O thread, ~0.1 s of CPU a cycle at that size) that the poll then read into this dict and
dropped. ``LogDirsBytesRequest`` has kafka-python hand the answer over as bytes (as
``metadata_read.MetadataBytesRequest`` does for Metadata) and ``read_held`` reads them once:
a topic's partitions, fixed-size records in the flexible versions when they carry no tagged
field (Kafka sends none), are unpacked by ``struct.iter_unpack`` in one call. Every length is
checked against the bytes: a truncated or malformed answer is a KafkaOperationError, never a
wrong size.
"""

from __future__ import annotations

import struct
from typing import Any

from kafka.protocol.admin import DescribeLogDirsRequest

from .errors import from_code
from .metadata_read import _Answer, _Header, read_answer

__all__ = ["HeldReplicas", "LogDirsBytesRequest", "read_held"]

# {(topic, partition): (size, offset lag)}: the replicas one broker holds, future replicas left out
HeldReplicas = dict[tuple[str, int], tuple[int, int]]

_I16, _I32, _I64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
_PART = struct.Struct(">iqq?")  # partition index, size, offset lag, is future
_PART_FLEX = struct.Struct(">iqq?B")  # the same and an empty tagged-fields count


class LogDirsBytesRequest(DescribeLogDirsRequest, init=False):
    """DescribeLogDirs whose answer kafka-python hands over as bytes (``read_held`` reads it)."""

    API_NAME = "DescribeLogDirs"  # in errors and failover, the API it is (kp_failover.request_name)

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        super().with_header(correlation_id=correlation_id, client_id=client_id)
        self._header = _Header(self._header)


def read_held(answer: _Answer) -> HeldReplicas:
    """An answer ``LogDirsBytesRequest`` brought -> the broker's replicas over every log dir (its
    buffer released). The answer's error, or unreadable bytes, raise KafkaOperationError."""
    error_code, held = read_answer(answer, _read, "DescribeLogDirs")
    err = from_code(error_code, None)
    if err is not None:
        raise err
    return held


class _Reader:
    """A position in the answer's bytes; every read checked against their end."""

    __slots__ = ("data", "pos", "flexible")

    def __init__(self, data: memoryview, flexible: bool) -> None:
        self.data, self.pos, self.flexible = data, 0, flexible

    def take(self, n: int) -> int:
        """The position of the next ``n`` bytes, which are skipped."""
        at = self.pos
        if n < 0 or at + n > len(self.data):
            raise ValueError(f"{n} bytes wanted at {at} of {len(self.data)}")
        self.pos = at + n
        return at

    def fixed(self, s: struct.Struct) -> Any:
        return s.unpack_from(self.data, self.take(s.size))[0]

    def uvarint(self) -> int:
        value = shift = 0
        while True:
            byte = self.data[self.take(1)]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise ValueError("varint longer than 5 bytes")

    def count(self) -> int:
        """An array's length (a null array: 0)."""
        n = self.uvarint() - 1 if self.flexible else self.fixed(_I32)
        return max(n, 0)

    def string(self) -> str:
        n = self.uvarint() - 1 if self.flexible else self.fixed(_I16)
        if n < 0:
            return ""
        at = self.take(n)
        return str(self.data[at : at + n], "utf-8")

    def skip_tags(self) -> None:
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self.take(self.uvarint())


def _read(body: memoryview, version: int) -> tuple[int, HeldReplicas]:
    """(the answer's error code, its replicas): DescribeLogDirs versions 0 to 5 (0 is laid out as 1)."""
    if not 0 <= version <= 5:
        raise ValueError(f"version {version} is not read")
    r = _Reader(body, version >= 2)
    r.take(4)  # throttle time
    error_code = r.fixed(_I16) if version >= 3 else 0
    held: HeldReplicas = {}
    for _ in range(r.count()):  # log dirs
        r.take(2)  # the dir's error code (its replicas, if any, are listed as they are)
        r.string()  # the dir's path
        for _ in range(r.count()):  # topics
            name = r.string()
            _partitions(r, name, r.count(), held)
            r.skip_tags()
        r.take(16 if version >= 4 else 0)  # total and usable bytes
        r.take(1 if version >= 5 else 0)  # cordoned
        r.skip_tags()
    r.skip_tags()
    return error_code, held


def _partitions(r: _Reader, name: str, n: int, held: HeldReplicas) -> None:
    """A topic's ``n`` partition records into ``held`` (future replicas left out)."""
    record = _PART_FLEX if r.flexible else _PART
    at, end = r.pos, r.pos + n * record.size
    # the fast path: every record of its fixed size (in the flexible versions each record's last
    # byte, its tagged fields' count, is 0)
    if end <= len(r.data) and (
        not r.flexible or r.data[at + _PART.size : end : record.size].tobytes() == bytes(n)
    ):
        r.take(end - at)
        for row in record.iter_unpack(r.data[at:end]):
            if not row[3]:  # not a future replica
                held[(name, row[0])] = row[1:3]
        return
    for _ in range(n):  # tagged fields (or too few bytes: the reads say where)
        pid, size, lag, future = _PART.unpack_from(r.data, r.take(_PART.size))
        r.skip_tags()
        if not future:
            held[(name, pid)] = (size, lag)
