"""A fix to kafka-python 3.0's socket reader, applied once when console.kafka is imported.

``KafkaTCPTransport._read_from_sock`` reads everything the socket holds, and when the read ends with
the peer's close it aborts the connection *without handing the bytes it did read to the protocol*.
Kafka answers a refused login (SaslHandshake UNSUPPORTED_SASL_MECHANISM, SaslAuthenticate
SASL_AUTHENTICATION_FAILED with its message) and closes the connection at once, so over TLS both
usually arrive in one read, and kafka-python reported "socket disconnected" instead of Kafka's answer
(real Kafka 4.1, SCRAM-SHA-512 listener, wrong password). The replacement delivers the bytes first,
lets the waiting request run, then aborts; it is installed only over the exact function it was
written against (kafka-python 3.0.12; another version keeps its own).
"""

from __future__ import annotations

import hashlib
import inspect
import time

import kafka.errors as kerrors
from kafka.net.transport import KafkaTCPTransport

__all__ = ["install"]

# sha256 of the source of kafka-python 3.0.12's KafkaTCPTransport._read_from_sock
_KNOWN = "572fe643c70751bf28e4e977ce7fcc667ba473801a01cd642c85834ad2413af5"


async def _read_from_sock(self: KafkaTCPTransport) -> None:
    while self._read and not self._closed:
        await self._net.wait_read(self._sock)
        recvd_data, err = self._sock_recv()
        if recvd_data:
            self.last_read = time.monotonic()
            if self._protocol and self._protocol._sensors:
                self._protocol._sensors.bytes_received.record(len(recvd_data))
            try:
                self._protocol.data_received(recvd_data)
            except kerrors.KafkaProtocolError as e:
                return self.abort(error=e)
        if err:
            if recvd_data:
                # let the request that the last answer completes (a SASL step) see it before the
                # connection fails: that request's error is the one worth reporting
                await self._net.sleep(0)
            return self.abort(error=err)
    return None


def _fingerprint(fn: object) -> str:
    return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()


def install() -> bool:
    """Replace the reader when it is the one this fix was written against; True when installed."""
    current = KafkaTCPTransport._read_from_sock
    if current is _read_from_sock:
        return True
    if _fingerprint(current) != _KNOWN:
        return False
    KafkaTCPTransport._read_from_sock = _read_from_sock
    return True
