"""Fixes to kafka-python 3.0's socket reader, applied once when console.kafka is imported.

``KafkaTCPTransport._read_from_sock`` reads everything the socket holds, and when the read ends with
the peer's close it aborts the connection *without handing the bytes it did read to the protocol*.
Kafka answers a refused login (SaslHandshake UNSUPPORTED_SASL_MECHANISM, SaslAuthenticate
SASL_AUTHENTICATION_FAILED with its message) and closes the connection at once, so over TLS both
usually arrive in one read, and kafka-python reported "socket disconnected" instead of Kafka's answer
(real Kafka 4.1, SCRAM-SHA-512 listener, wrong password). The replacement delivers the bytes first,
lets the waiting request run, then aborts; it is installed only over the exact function it was
written against (kafka-python 3.0.12; another version keeps its own).

The I/O thread's cost of a large answer (the alert evaluator reads a whole cluster's Metadata, ~5 MB
at 100,000 partitions, from every cluster each minute), each a replacement installed the same way:
- ``_sock_recv`` (plain and TLS) drained the socket 4,096 bytes a ``recv`` (~1,000 calls and bytes
  objects an answer, joined again): it reads ``RECV_BYTES`` a call, otherwise the same (until the
  socket would block; the same errors, logged on kafka-python's logger);
- the reader hands the parser a view of what it read, not the bytes: the parser copies each
  frame's bytes into its buffer, and slicing the bytes first was one more copy of the answer;
- ``NetworkSelector.register_event`` (every wait on a socket) asked the selector for a socket it
  had not registered, and ``selectors`` words that KeyError with the socket's repr (getsockname and
  getpeername, twice: four system calls, each a release of the GIL taken back behind the threads
  that decode): it looks the descriptor up instead.
Measured with the allocator keeping freed memory (``heap.py``), the I/O thread's CPU for one such
answer went from ~14 ms to ~3 ms (a cluster of the alerts bench, 10 reads; GIL held for most of it).

``KafkaProtocol.receive_bytes`` (the parser) is kafka-python's state machine with one change: a
frame's buffer comes from the request it answers when that request offers one (``frame_buffer``;
a whole-cluster Metadata read, ``metadata_read._WholeHeader``), else it is kafka-python's
``KafkaBytes`` of the frame's size. The whole-cluster answer is then decoded while it arrives and
never held whole (46 MB at 1,000,000 partitions), and its decoding overlaps its transfer.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import selectors
import ssl
import time

import kafka.errors as kerrors
from kafka.net.selector import NetworkSelector, Task
from kafka.net.transport import KafkaSSLTransport, KafkaTCPTransport
from kafka.protocol.frame import KafkaBytes
from kafka.protocol.parser import KafkaProtocol
from kafka.protocol.schemas.fields.codecs import Int32

__all__ = ["install"]

log = logging.getLogger("kafka.net.transport")  # kafka-python's own: errlog collapses its repeats

# sha256 of the source of kafka-python 3.0.12's KafkaTCPTransport._read_from_sock
_KNOWN = "572fe643c70751bf28e4e977ce7fcc667ba473801a01cd642c85834ad2413af5"
# ... and of its KafkaTCPTransport._sock_recv and KafkaSSLTransport._sock_recv
_KNOWN_RECV = "2594a6a62ec5a3e56355033514d33265dcd9513bc5c24342c1b91c90641589ff"
_KNOWN_RECV_TLS = "0a592f230c5c4455245fa50057926170680e0f950c003a2186b10e578f10a481"
# ... and of its NetworkSelector.register_event
_KNOWN_REGISTER = "1c21f7a3ab3797799808ff89a966cbe169d902a5b39c3c629ed944ce93982ded"
# ... and of its KafkaProtocol.receive_bytes
_KNOWN_PARSER = "d54b3fe40b87ef8231856572057a066106e621c172d646b9ccfd54e745d93ff3"
RECV_BYTES = 256 * 1024  # one recv's most (a TLS socket returns at most one record, 16 KB, a call)
_WOULD_BLOCK = (BlockingIOError, InterruptedError)
_WOULD_BLOCK_TLS = (*_WOULD_BLOCK, ssl.SSLWantReadError, ssl.SSLWantWriteError)


async def _read_from_sock(self: KafkaTCPTransport) -> None:
    while self._read and not self._closed:
        await self._net.wait_read(self._sock)
        recvd_data, err = self._sock_recv()
        if recvd_data:
            self.last_read = time.monotonic()
            if self._protocol and self._protocol._sensors:
                self._protocol._sensors.bytes_received.record(len(recvd_data))
            try:
                # a view: the parser copies each frame's bytes into its buffer, a bytes slice of
                # the whole read (a 5 MB Metadata answer) was one more copy of it
                self._protocol.data_received(memoryview(recvd_data))
            except kerrors.KafkaProtocolError as e:
                return self.abort(error=e)
        if err:
            if recvd_data:
                # let the request that the last answer completes (a SASL step) see it before the
                # connection fails: that request's error is the one worth reporting
                await self._net.sleep(0)
            return self.abort(error=err)
    return None


def _drain(self: KafkaTCPTransport, would_block: tuple) -> tuple[bytes, Exception | None]:
    """Everything the socket holds now, ``RECV_BYTES`` a read, and the error that ended it (None
    when it would block): kafka-python's ``_sock_recv`` with larger reads."""
    recvd = []
    err = None
    while True:
        try:
            data = self._sock.recv(RECV_BYTES)
        except would_block:
            break
        except BaseException as e:  # noqa: BLE001 - as kafka-python: any failure closes the socket
            log.exception("%s: Error receiving network data closing socket", self)
            err = kerrors.KafkaConnectionError(e)
            break
        if not data:
            log.error("%s: socket disconnected", self)
            err = kerrors.KafkaConnectionError("socket disconnected")
            break
        recvd.append(data)
    return b"".join(recvd), err


def _sock_recv(self: KafkaTCPTransport) -> tuple[bytes, Exception | None]:
    return _drain(self, _WOULD_BLOCK)


def _sock_recv_tls(self: KafkaSSLTransport) -> tuple[bytes, Exception | None]:
    return _drain(self, _WOULD_BLOCK_TLS)


_ORIGINAL: dict = {}  # the functions replaced, where a replacement hands an odd case back


def register_event(self: NetworkSelector, fileobj, event, task) -> None:
    """kafka-python's, without asking the selector for a socket it has not registered: every wait
    on a socket did, and ``selectors`` words that KeyError with the socket's repr (getsockname and
    getpeername, twice): four system calls, each a release of the GIL the I/O thread then waits to
    take back while the evaluator's threads decode."""
    if not isinstance(task, Task):
        task = Task(task)
    fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
    if fd < 0:  # a closed socket: kafka-python's own lookup (by the object) and its errors
        _ORIGINAL["register_event"](self, fileobj, event, task)
        return
    key = self._selector._fd_to_key.get(fd)
    if key is None:
        self._selector.register(
            fileobj, event, (task, None) if event == selectors.EVENT_READ else (None, task)
        )
        return
    reader, writer = key.data
    if event == selectors.EVENT_READ and reader:
        raise RuntimeError(f"EVENT_READ already registered for fileobj {fileobj} by {reader} (new: {task})")
    if event == selectors.EVENT_WRITE and writer:
        raise RuntimeError(f"EVENT_WRITE already registered for fileobj {fileobj} by {writer} (new: {task})")
    data = (task, writer) if event == selectors.EVENT_READ else (reader, task)
    self._selector.modify(fileobj, key.events | event, data)


def _frame_buffer(parser: KafkaProtocol, size: int):
    """The buffer of a frame of ``size`` bytes: the one the request it answers (the oldest in
    flight: Kafka answers a connection's requests in order) offers, or kafka-python's own."""
    waiting = parser.in_flight_requests
    offer = getattr(waiting[0], "frame_buffer", None) if waiting else None
    return offer(size) if offer is not None else KafkaBytes(size)


def receive_bytes(self: KafkaProtocol, data) -> list:
    """Every response the bytes complete, as ``(correlation id, response)``: kafka-python's parser,
    with each frame's buffer from ``_frame_buffer``."""
    responses = []
    i, n = 0, len(data)
    while i < n:
        if not self._receiving:  # the frame's 4-byte length, maybe over several reads
            take = min(4 - self._header.tell(), n - i)
            self._header.write(data[i : i + take])
            i += take
            if self._header.tell() < 4:
                break
            self._header.seek(0)
            size = Int32.decode(self._header)
            self._validate_frame_size(size)
            self._rbuffer = _frame_buffer(self, size)
            self._receiving = True
        frame = self._rbuffer
        take = min(len(frame) - frame.tell(), n - i)
        frame.write(data[i : i + take])
        i += take
        if frame.tell() < len(frame):
            break
        frame.seek(0)
        responses.append(self._process_response(frame))
        self._reset_buffer()
    return responses


def _fingerprint(fn: object) -> str:
    return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()


def install() -> bool:
    """Replace the reader (and the socket drains) when they are the ones these fixes were written
    against; True when the reader's fix is installed."""
    for cls, fix, known in (
        (KafkaTCPTransport, _sock_recv, _KNOWN_RECV),
        (KafkaSSLTransport, _sock_recv_tls, _KNOWN_RECV_TLS),
    ):
        current = cls.__dict__.get("_sock_recv")
        if current is not None and current is not fix and _fingerprint(current) == known:
            cls._sock_recv = fix
    current = KafkaProtocol.receive_bytes
    if current is not receive_bytes and _fingerprint(current) == _KNOWN_PARSER:
        KafkaProtocol.receive_bytes = receive_bytes
    current = NetworkSelector.register_event
    if current is not register_event and _fingerprint(current) == _KNOWN_REGISTER:
        _ORIGINAL["register_event"] = current
        NetworkSelector.register_event = register_event
    current = KafkaTCPTransport._read_from_sock
    if current is _read_from_sock:
        return True
    if _fingerprint(current) != _KNOWN:
        return False
    KafkaTCPTransport._read_from_sock = _read_from_sock
    return True
