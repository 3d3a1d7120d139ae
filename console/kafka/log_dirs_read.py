"""DescribeLogDirs answers read from their bytes in one pass, no object per replica.

A reassignment poll of 10,000 moving partitions asks each involved broker about the partitions it
may host: ~40,000 replicas a cycle, which kafka-python decoded into a data-container object each
(on its I/O thread, ~0.1 s of CPU a cycle). A telemetry snapshot of 1M partitions asks every broker
about everything it holds: 3M replicas, which kept as a map per (broker, topic) were ~1 GB.
``LogDirsBytesRequest`` has kafka-python hand the answer over as bytes (as
``metadata_read.MetadataBytesRequest`` does for Metadata) and ``read_dirs`` reads them once: each
dir's figures are returned and each topic's partition records handed to a sink as
``(partition, size, offset lag, is future)`` tuples, fixed-size records in the flexible versions
when they carry no tagged field (Kafka sends none) unpacked by ``struct.iter_unpack`` in one call.
``read_held`` is the poll's sink: ``{(topic, partition): (size, offset lag)}``. Every length is
checked against the bytes: a truncated or malformed answer is a KafkaOperationError, never a wrong
size.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from kafka.protocol.admin import DescribeLogDirsRequest

from .errors import from_code
from .metadata_read import _Answer, _Header, read_answer

__all__ = ["DirFigures", "HeldReplicas", "LogDirsBytesRequest", "PartitionRecord", "read_dirs", "read_held"]

# {(topic, partition): (size, offset lag)}: the replicas one broker holds, future replicas left out
HeldReplicas = dict[tuple[str, int], tuple[int, int]]
# (partition, size, offset lag, is future): one partition record of a topic in one dir
PartitionRecord = tuple[int, int, int, bool]
# (path, error code, bytes of its replicas - moving ones included -, total bytes, usable bytes);
# total and usable are -1 where the answer does not say (versions before 4)
DirFigures = tuple[str, int, int, int, int]

_I16, _I32, _I64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
_PART = struct.Struct(">iqq?")  # partition index, size, offset lag, is future
_PART_FLEX = struct.Struct(">iqq?x")  # the same and an empty tagged-fields count (checked, not read)
_size_of = itemgetter(1)


class LogDirsBytesRequest(DescribeLogDirsRequest, init=False):
    """DescribeLogDirs whose answer kafka-python hands over as bytes (``read_held`` reads it)."""

    API_NAME = "DescribeLogDirs"  # in errors and failover, the API it is (kp_failover.request_name)

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        super().with_header(correlation_id=correlation_id, client_id=client_id)
        self._header = _Header(self._header)


def read_dirs(answer: _Answer, sink: Callable[[str, list[PartitionRecord]], Any]) -> list[DirFigures]:
    """An answer ``LogDirsBytesRequest`` brought -> each dir's figures (its buffer released);
    ``sink(topic, records)`` is called with each topic's partition records of each dir as they are
    read (a topic in two dirs: twice). The answer's error, or unreadable bytes, raise
    KafkaOperationError (the sink may have been called for part of it)."""
    error_code, dirs = read_answer(
        answer, lambda body, version: _read(body, version, sink), "DescribeLogDirs"
    )
    err = from_code(error_code, None)
    if err is not None:
        raise err
    return dirs


def read_held(answer: _Answer) -> HeldReplicas:
    """An answer ``LogDirsBytesRequest`` brought -> the broker's replicas over every log dir (its
    buffer released). The answer's error, or unreadable bytes, raise KafkaOperationError."""
    held: HeldReplicas = {}

    def hold(name: str, records: list[PartitionRecord]) -> None:
        for pid, size, lag, future in records:
            if not future:
                held[(name, pid)] = (size, lag)

    read_dirs(answer, hold)
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


def _read(
    body: memoryview, version: int, sink: Callable[[str, list[PartitionRecord]], Any]
) -> tuple[int, list[DirFigures]]:
    """(the answer's error code, its dirs' figures): DescribeLogDirs versions 0 to 5 (0 is laid out as 1)."""
    if not 0 <= version <= 5:
        raise ValueError(f"version {version} is not read")
    r = _Reader(body, version >= 2)
    r.take(4)  # throttle time
    error_code = r.fixed(_I16) if version >= 3 else 0
    dirs: list[DirFigures] = []
    for _ in range(r.count()):  # log dirs
        dir_error = r.fixed(_I16)  # the dir's replicas, if any, are listed as they are
        path = r.string()
        used = 0
        for _ in range(r.count()):  # topics
            name = r.string()
            records = _partitions(r, r.count())
            used += sum(map(_size_of, records))
            sink(name, records)
            r.skip_tags()
        total, usable = (r.fixed(_I64), r.fixed(_I64)) if version >= 4 else (-1, -1)
        r.take(1 if version >= 5 else 0)  # cordoned
        r.skip_tags()
        dirs.append((path, dir_error, used, total, usable))
    r.skip_tags()
    return error_code, dirs


def _partitions(r: _Reader, n: int) -> list[PartitionRecord]:
    """A topic's ``n`` partition records."""
    record = _PART_FLEX if r.flexible else _PART
    at, end = r.pos, r.pos + n * record.size
    # the fast path: every record of its fixed size (in the flexible versions each record's last
    # byte, its tagged fields' count, is 0)
    if end <= len(r.data) and (
        not r.flexible or r.data[at + _PART.size : end : record.size].tobytes() == bytes(n)
    ):
        r.take(end - at)
        return list(record.iter_unpack(r.data[at:end]))
    records = []
    for _ in range(n):  # tagged fields (or too few bytes: the reads say where)
        records.append(_PART.unpack_from(r.data, r.take(_PART.size)))
        r.skip_tags()
    return records
