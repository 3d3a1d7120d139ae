"""A reassignment poll's requests built once per moving set, and its answers read from their bytes.

A poll of 10,000 moving partitions sends, every second, the same ListPartitionReassignments and the
same DescribeLogDirs per broker as the cycle before (the moving partitions change only as they
settle). ``PollPlan`` builds those requests once and keeps each one's encoded body per version
(``_BodyOnce``: kafka-python then only writes the header in front of it), instead of grouping the
partitions by topic and encoding ~50,000 entries every cycle.

The ListPartitionReassignments answer comes as bytes (``ListingBytesRequest``) and ``read_listed``
walks them into the set of ``(topic, partition)`` Kafka lists, every length checked (a truncated
or malformed answer is a KafkaOperationError, never a wrong set); an answer with the same bytes
as the last one is not read again. The ISR comes from the named Metadata, read as
``poll_reads.partition_isr`` reads it, again only when its bytes changed.
"""

from __future__ import annotations

import hashlib
import marshal
import struct
from collections.abc import Container, Iterable, Mapping
from typing import Any

from kafka.protocol.admin import ListPartitionReassignmentsRequest

from .errors import KafkaOperationError, from_code, no_such_topic, topic_error
from .log_dirs_read import LogDirsBytesRequest, read_held
from .metadata_read import MetadataBytesRequest, _Answer, _Header, decode_answer, read_answer

__all__ = ["ListingBytesRequest", "PartitionIsr", "PollPlan", "isr_answer", "read_listed"]

_I16, _I32 = struct.Struct(">h"), struct.Struct(">i")
_FRAME = struct.Struct(">i")


class _BodyOnce:
    """A request whose body is encoded once per API version and reused by every send (kafka-python
    writes a new header each send: ``with_header`` then ``encode(framed=True, header=True)``).
    The request must not be changed after its first send."""

    def encode(self, version: int | None = None, header: bool = False, framed: bool = False) -> bytes:
        if version is not None:
            self.API_VERSION = version
        version = self.API_VERSION
        bodies = self.__dict__.setdefault("_bodies", {})
        body = bodies.get(version)
        if body is None:
            # API_VERSION is set (setting it again would touch the header, a ``_Header`` here)
            body = bodies[version] = bytes(super().encode())
        head = self.encode_header(flexible=self.flexible_version_q(version)) if header else b""
        if framed:
            return b"".join((_FRAME.pack(len(head) + len(body)), head, body))
        return head + body if head else body


class ListingBytesRequest(ListPartitionReassignmentsRequest, init=False):
    """ListPartitionReassignments whose answer kafka-python hands over as bytes (``read_listed``)."""

    API_NAME = "ListPartitionReassignments"  # in errors and failover (kp_failover.request_name)

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        super().with_header(correlation_id=correlation_id, client_id=client_id)
        self._header = _Header(self._header)


class _ListingOnce(_BodyOnce, ListingBytesRequest, init=False):
    pass


class _LogDirsOnce(_BodyOnce, LogDirsBytesRequest, init=False):
    pass


def read_listed(answer: _Answer) -> set[tuple[str, int]]:
    """An answer ``ListingBytesRequest`` brought -> the ``(topic, partition)`` pairs it lists (its
    buffer released). The answer's error, or unreadable bytes, raise KafkaOperationError."""
    error_code, message, listed = read_answer(answer, _read_listing, "ListPartitionReassignments")
    err = from_code(error_code, message)
    if err is not None:
        raise err
    return listed


def _read_listing(data: memoryview, version: int) -> tuple[int, str | None, set[tuple[str, int]]]:
    """(error code, error message, listed partitions) of a ListPartitionReassignments answer body
    (version 0, the only one: flexible, compact arrays and strings, tagged fields)."""
    if version != 0:
        raise ValueError(f"version {version} not read")
    end = len(data)
    pos = 4  # throttle time
    _need(pos + 2, end)
    error_code = _I16.unpack_from(data, pos)[0]
    message, pos = _string(data, pos + 2, end)
    listed: set[tuple[str, int]] = set()
    add = listed.add
    topics, pos = _uvarint(data, pos, end)
    for _ in range(topics - 1 if topics else 0):
        name, pos = _string(data, pos, end)
        if name is None:
            raise ValueError("a topic without a name")
        parts, pos = _uvarint(data, pos, end)
        for _ in range(parts - 1 if parts else 0):
            _need(pos + 4, end)
            index = _I32.unpack_from(data, pos)[0]
            pos += 4
            for _ in range(3):  # replicas, adding, removing: compact arrays of int32
                n = data[pos] if pos < end else -1
                if n < 0 or n & 0x80:
                    n, pos = _uvarint(data, pos, end)
                else:
                    pos += 1
                if n > 1:
                    pos += 4 * (n - 1)
            _need(pos, end)
            if pos < end and data[pos] == 0:  # no tagged fields (Kafka sends none)
                pos += 1
            else:
                pos = _skip_tags(data, pos, end)
            add((name, index))
        pos = _skip_tags(data, pos, end)
    pos = _skip_tags(data, pos, end)
    return error_code, message, listed


# {topic: {partition: (leader, isr)}} or the topic's error (see ``partition_isr``)
PartitionIsr = dict[str, "dict[int, tuple[int, tuple[int, ...]]] | KafkaOperationError"]


def isr_answer(
    names: list[str], answer: Any, only: Mapping[str, Container[int]] | None = None
) -> PartitionIsr | KafkaOperationError:
    """A named Metadata answer (``MetadataBytesRequest``) -> ``{topic: {partition: (leader, isr)} |
    error}`` (a hot path: every partition of the moving partitions' topics, each poll cycle)."""
    if isinstance(answer, KafkaOperationError):
        return answer
    try:
        topics = decode_answer(answer).topics
    except KafkaOperationError as err:
        return err
    out: PartitionIsr = {}
    for name, t in topics.items():
        err = topic_error(t.error_code, name)
        if err is not None:
            out[name] = err
            continue
        keep = None if only is None else only.get(name, ())
        out[name] = {
            pid: (leader, tuple(isr))
            for pid, leader, _, isr in marshal.loads(t.packed)
            if keep is None or pid in keep
        }
    for name in names:
        if name not in out:
            out[name] = no_such_topic(name)
    return out


def _need(pos: int, end: int) -> None:
    if pos > end:
        raise ValueError(f"the answer ends at {end}, {pos} needed")


def _uvarint(data: memoryview, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= end:
            raise ValueError(f"the answer ends at {end} inside a varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise ValueError("a varint longer than 5 bytes")


def _string(data: memoryview, pos: int, end: int) -> tuple[str | None, int]:
    n, pos = _uvarint(data, pos, end)
    if n == 0:
        return None, pos
    _need(pos + n - 1, end)
    return bytes(data[pos : pos + n - 1]).decode(), pos + n - 1


def _skip_tags(data: memoryview, pos: int, end: int) -> int:
    count, pos = _uvarint(data, pos, end)
    for _ in range(count):
        _, pos = _uvarint(data, pos, end)
        size, pos = _uvarint(data, pos, end)
        _need(pos + size, end)
        pos += size
    return pos


def _group(tps: Iterable[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, partition in tps:
        out.setdefault(topic, []).append(partition)
    return out


class PollPlan:
    """The requests of a poll of one moving set, built once (see the module docstring), and what is
    kept from the last cycle's answers: the listing's digest and set, the ISR's digest and dict."""

    def __init__(
        self,
        moving: Iterable[tuple[str, int]],
        partitions: Mapping[int, Iterable[tuple[str, int]]],
        timeout_ms: int,
        only: Mapping[str, Container[int]] | None = None,
    ) -> None:
        LT = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
        DT = LogDirsBytesRequest.DescribableLogDirTopic
        grouped = _group(moving)
        self.listing = (
            _ListingOnce(
                timeout_ms=timeout_ms,
                topics=[LT(name=t, partition_indexes=ps) for t, ps in grouped.items()],
            )
            if grouped
            else None
        )
        self.dirs = {
            b: _LogDirsOnce(topics=[DT(topic=t, partitions=ps) for t, ps in _group(tps).items()])
            for b, tps in partitions.items()
        }
        self.only = only
        self._listed: tuple[bytes, set[tuple[str, int]]] | None = None
        self._isr: tuple[tuple, dict] | None = None

    def listed(self, answer: Any) -> set[tuple[str, int]]:
        """The partitions a listing answer names (raised: its error); the same bytes as the last
        answer are not read again (a copy of the set is returned)."""
        if isinstance(answer, KafkaOperationError):
            raise answer
        if not isinstance(answer, _Answer):
            raise KafkaOperationError(
                -1, "UNKNOWN_SERVER_ERROR", "unreadable ListPartitionReassignments answer"
            )
        with memoryview(answer.buffer) as view, view[answer.start :] as body:
            digest = hashlib.blake2b(body, digest_size=20).digest()
        kept = self._listed
        if kept is not None and kept[0] == digest:
            answer.buffer = None
            return set(kept[1])
        listed = read_listed(answer)
        self._listed = (digest, listed)
        return set(listed)

    def isr(self, names: list[str], answer: Any) -> Any:
        """A named Metadata answer -> ``{topic: {partition: (leader, isr)} | error}`` of the plan's
        ``only`` partitions (``poll_reads.partition_isr``'s reading); an answer of the same topics
        with the same bytes as the last one is not read again (the same dict, not to be changed)."""
        if not isinstance(answer, _Answer):
            return isr_answer(names, answer, self.only)
        with memoryview(answer.buffer) as view, view[answer.start :] as body:
            digest = (answer.version, tuple(names), hashlib.blake2b(body, digest_size=20).digest())
        kept = self._isr
        if kept is not None and kept[0] == digest:
            answer.buffer = None
            return kept[1]
        isr = isr_answer(names, answer, self.only)
        self._isr = None if isinstance(isr, KafkaOperationError) else (digest, isr)
        return isr


def held(answer: Any) -> Any:
    """One broker's DescribeLogDirs answer -> its replicas, or the error it is."""
    if isinstance(answer, KafkaOperationError):
        return answer
    try:
        return read_held(answer)
    except KafkaOperationError as err:
        return err


def planned_reads(
    gw: Any, plan: PollPlan, topics: Iterable[str]
) -> tuple[set[tuple[str, int]], dict[int, Any], Any]:
    """``poll_reads(moving, partitions, topics, only)`` with the plan's requests: the listing, each
    live broker's log dirs and the Metadata of ``topics`` in one flight. The listing's failure is
    raised once every answer is in; a broker not live is its error, as ``describe_log_dirs`` says."""
    gw._require_brokers("describing log dirs")
    ids = list(plan.dirs)
    live = set(gw._kp.broker_ids(expect=ids))
    out: dict[int, Any] = {}
    asked = []
    for broker in ids:
        if broker in live:
            asked.append((plan.dirs[broker], broker))
        else:
            out[broker] = KafkaOperationError(8, "BROKER_NOT_AVAILABLE", f"broker {broker} is not live")
    first = [] if plan.listing is None else [(plan.listing, None)]
    names = sorted(set(topics))
    isr: Any = {}
    if names:
        answers = gw._kp.send_many([*first, *asked, (MetadataBytesRequest(names), None)])
        isr = plan.isr(names, answers[-1])
        answers = answers[:-1]
    else:
        answers = gw._kp.send_many([*first, *asked])
    listing = answers[0] if first else None
    for (_, broker), answer in zip(asked, answers[len(first) :], strict=True):
        out[broker] = held(answer)
    listed = plan.listed(listing) if first else set()
    return listed, {b: out[b] for b in ids}, isr
