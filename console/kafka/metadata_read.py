"""Metadata reads decoded in one pass: the whole cluster's, and the named topics' of a poll.

kafka-python sends the request (to any broker, with ``KpClient``'s failover) and hands its answer
over undecoded (``MetadataBytesRequest``); ``_metadata.decode_metadata`` (C,
``console/kafka/_metadata.c``, built by ``pip install``) reads those bytes once into what the
console keeps of them: per topic its partitions packed into one ``bytes`` (marshal's format,
read back by ``cluster.PackedPartitions``) and its counts - partitions, replication factor,
under-replicated and offline partitions. At 1,000,000 partitions the answer is ~46 MB; decoding
it into Python objects first (kafka-python ~5 s, confluent-kafka ~2.3 s) cost 10-20x its trip
over the wire, and the console then packed those objects into bytes anyway. A poll's Metadata of
the moving topics is read the same way (``read_metadata(kp, names)``), so its cost follows the
bytes of those topics, not kafka-python's decoding of them.

Versions 9 to 13 of Metadata are asked (the flexible ones; every broker that serves
DescribeCluster, which the console needs anyway, serves them).
"""

from __future__ import annotations

import marshal
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import kafka.errors as kerrors
from kafka.protocol.metadata import MetadataRequest

from . import _metadata
from .errors import KafkaOperationError, from_code
from .types import BrokerInfo

__all__ = ["MetadataBytesRequest", "WholeMetadata", "WholeTopic", "decode", "read_answer", "read_metadata"]

T = TypeVar("T")

MIN_VERSION, MAX_VERSION = 9, 13


class WholeTopic(NamedTuple):
    """One topic of the answer (a tuple the C decoder builds: no per-partition object)."""

    name: str | None
    error_code: int
    internal: bool
    packed: bytes  # marshal (version 2) of [(id, leader, [replicas], [isr]), ...] in Kafka's order
    partitions: int
    replication_factor: int  # the lowest partition id's replica count
    under_replicated: int  # ISR shorter than the replicas
    offline: int  # no leader


@dataclass(frozen=True, slots=True)
class WholeMetadata:
    cluster_id: str | None
    controller_id: int | None
    brokers: tuple[BrokerInfo, ...]  # sorted by id, with their racks
    topics: dict[str, WholeTopic]  # in Kafka's order (sort the names where order matters); a named
    # read lists each asked topic, an unknown one with its error code
    # (broker, replicas, leaders, under-replicated, out of ISR, offline) by broker over the named
    # topics' partitions, counted by the decoder in its pass (what the Brokers page shows per broker)
    broker_counts: tuple[tuple[int, int, int, int, int, int], ...] = ()


class _Answer:
    """A Metadata answer kafka-python did not decode: its version, and the frame's bytes with the
    position after the response header (kafka-python's receive buffer: no copy)."""

    __slots__ = ("version", "buffer", "start")

    def __init__(self, version: int, buffer: Any, start: int) -> None:
        self.version, self.buffer, self.start = version, buffer, start

    def __repr__(self) -> str:
        return f"<Metadata v{self.version} answer, {len(self.buffer) - self.start} bytes>"


class _Decoded:
    """A Metadata answer decoded while it arrived (``_Streamed``): what ``decode_metadata`` makes of it."""

    __slots__ = ("version", "fields")

    def __init__(self, version: int, fields: tuple) -> None:
        self.version, self.fields = version, fields

    def __repr__(self) -> str:
        return f"<Metadata v{self.version} answer, {len(self.fields[4])} topics>"


class _Streamed:
    """The frame buffer kafka-python's parser writes a Metadata answer into (``kp_fixes``), which
    decodes it while it arrives (``_metadata.Stream``, topic by topic) and keeps only the bytes of
    a topic cut by a read: at 1,000,000 partitions the answer's 46 MB were held whole, then decoded
    after its last byte. It answers ``len``, ``tell``, ``write``, ``seek`` and ``read`` as
    kafka-python's ``KafkaBytes`` does; an unreadable answer is a ``KafkaProtocolError`` (the
    connection is closed, as for any answer kafka-python cannot decode)."""

    __slots__ = ("_size", "_staged", "_pending", "_retry_at", "stream")

    def __init__(self, version: int, size: int) -> None:
        self._size, self._staged, self._pending, self._retry_at = size, 0, bytearray(), 0
        self.stream = _metadata.Stream(version, size)

    def __len__(self) -> int:
        return self._size

    def tell(self) -> int:
        return self._staged

    def seek(self, _at: int) -> None:
        pass  # the parser rewinds before handing the frame over: nothing is read back

    def read(self, _n: int | None = None) -> bytes:
        return b""  # the parser's log of an undecodable answer: the bytes are gone

    def write(self, data: Any) -> None:
        pending = self._pending
        pending += data
        self._staged += len(data)
        whole = self._staged == self._size
        # A topic cut by a read is read again from its start: wait until there is twice as much as
        # the last try had, so a topic of millions of partitions is not re-read for every read.
        if len(pending) < self._retry_at and not whole:
            return
        try:
            used = self.stream.feed(pending)
        except ValueError as exc:
            raise kerrors.KafkaProtocolError(f"unreadable Metadata answer: {exc}") from None
        del pending[:used]
        self._retry_at = 0 if used else 2 * len(pending)


class _Undecoded:
    """Stands in for the response class kafka-python's parser would decode with: the header is
    parsed as kafka-python does (correlation id checked), the rest handed over as bytes - or, for
    a frame it decoded while it arrived, the decoded fields."""

    __slots__ = ("_cls", "_version")

    def __init__(self, cls: Any, version: int) -> None:
        self._cls, self._version = cls, version

    def parse_header(self, buffer: Any) -> Any:
        if isinstance(buffer, _Streamed):
            return _ResponseHeader(buffer.stream.correlation_id)
        return self._cls.parse_header(buffer)

    def decode(self, buffer: Any) -> _Answer | _Decoded:
        if isinstance(buffer, _Streamed):
            try:
                return _Decoded(self._version, buffer.stream.result())
            except ValueError as exc:
                raise kerrors.KafkaProtocolError(f"unreadable Metadata answer: {exc}") from None
        return _Answer(self._version, buffer, buffer.tell())


class _ResponseHeader(NamedTuple):
    correlation_id: int


class _Header:
    """kafka-python's request header, except that it names ``_Undecoded`` as the response class."""

    __slots__ = ("_header",)

    def __init__(self, header: Any) -> None:
        self._header = header

    def __getattr__(self, name: str) -> Any:
        return getattr(self._header, name)

    def get_response_class(self) -> _Undecoded:
        header = self._header
        return _Undecoded(header.get_response_class(), header.request_api_version)


class _WholeHeader(_Header):
    """A whole-cluster Metadata request's header: its answer is decoded while it arrives. (A named
    read - a poll's moving topics - keeps its bytes: the poll skips an answer equal to the last.)"""

    __slots__ = ()

    def frame_buffer(self, size: int) -> _Streamed:
        """Where kafka-python's parser (``kp_fixes.receive_bytes``) writes the answer's frame."""
        return _Streamed(self._header.request_api_version, size)


class MetadataBytesRequest(MetadataRequest, init=False):
    """Metadata of every topic (``names`` None) or of the named ones, whose answer kafka-python
    hands over as bytes."""

    API_NAME = "Metadata"  # in errors and failover, the API it is (kp_failover.request_name)

    def __init__(self, names: list[str] | None = None) -> None:
        self._whole = names is None
        topic = MetadataRequest.MetadataRequestTopic
        super().__init__(
            topics=None if names is None else [topic(name=n) for n in names],
            allow_auto_topic_creation=False,
            min_version=MIN_VERSION,
            max_version=MAX_VERSION,
        )

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        super().with_header(correlation_id=correlation_id, client_id=client_id)
        self._header = (_WholeHeader if self._whole else _Header)(self._header)


def decode(version: int, data: Any) -> WholeMetadata:
    """A Metadata answer's body (after the response header) -> ``WholeMetadata``; a malformed
    answer is a KafkaOperationError (the decoder checks every length against the bytes)."""
    try:
        fields = _metadata.decode_metadata(data, version)
    except ValueError as exc:
        raise KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", f"unreadable Metadata answer: {exc}") from None
    return _whole(fields)


def _whole(fields: tuple) -> WholeMetadata:
    """What ``decode_metadata`` (or a ``Stream``) made of an answer -> ``WholeMetadata``; Kafka's
    top-level error raised."""
    _, cluster_id, controller, brokers, topics, error_code, counts = fields
    if error_code:
        err = from_code(error_code, None)
        if err is not None:
            raise err
    by_name = {}
    for t in topics:
        if t[0] is not None:
            by_name[t[0]] = WholeTopic._make(t)
    if len(by_name) != sum(t[0] is not None for t in topics):  # a name twice: count what is kept
        counts = _recount(by_name.values())
    return WholeMetadata(
        cluster_id,
        controller if controller >= 0 else None,
        tuple(BrokerInfo(i, host, port, rack) for i, host, port, rack in sorted(brokers)),
        by_name,
        tuple(counts),
    )


def _recount(topics) -> list[tuple[int, int, int, int, int, int]]:
    """The decoder's per-broker counts over these topics only (an answer naming a topic twice,
    which Kafka does not send: the dict keeps the last)."""
    c: dict[int, list[int]] = {}
    for t in topics:
        for _, leader, replicas, isr in marshal.loads(t.packed):
            under = len(isr) < len(replicas)
            for r in replicas:
                row = c.setdefault(r, [0] * 5)
                row[0] += 1
                row[4] += leader < 0
                if under:
                    row[2] += 1
                    row[3] += r not in isr
            if leader >= 0:
                c.setdefault(leader, [0] * 5)[1] += 1
    return [(b, *row) for b, row in sorted(c.items())]


def read_answer(answer: _Answer, read: Callable[[memoryview, int], T], api: str) -> T:
    """What ``read(body, version)`` reads from an answer a bytes request brought (the frame's bytes
    after the response header, viewed, not copied), its buffer released after; unreadable bytes
    (a length past the end, a bad string, a version not read) raise KafkaOperationError naming
    ``api``. ``read`` must not keep a view of ``body``: the view is released on return."""
    try:
        with memoryview(answer.buffer) as view, view[answer.start :] as body:
            return read(body, answer.version)
    except (struct.error, ValueError, IndexError) as exc:
        raise KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", f"unreadable {api} answer: {exc}") from None
    finally:
        answer.buffer = None


def decode_answer(answer: _Answer | _Decoded) -> WholeMetadata:
    """An answer ``MetadataBytesRequest`` brought -> ``WholeMetadata`` (its buffer released)."""
    if isinstance(answer, _Decoded):
        return _whole(answer.fields)
    return read_answer(answer, lambda body, version: decode(version, body), "Metadata")


def read_metadata(kp: Any, names: list[str] | None = None) -> WholeMetadata:
    """Every topic's Metadata (``names`` None), or the named topics', from any broker (``kp``: a
    ``KpClient``)."""
    return decode_answer(kp.send(MetadataBytesRequest(names)))
