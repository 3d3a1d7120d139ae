"""Server-side TLS for a node's connections, over the plain asyncio stream (ssl.SSLObject + MemoryBIO).

asyncio's own TLS transport closes the socket at once when a handshake fails, dropping the alert
OpenSSL wrote: a client refused for its certificate would only see "connection reset". Kafka's
SslTransportLayer flushes the alert first, and clients report it ("tlsv13 alert certificate
required", "tlsv1 alert unknown ca", "sslv3 alert certificate expired"), so this layer does too:
it sends the alert, half-closes, and reads what the client still sends (so the kernel does not
answer it with a reset that would discard the alert) before closing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from typing import Any

READ_CHUNK = 65536
LINGER_S = 1.0  # after a failed handshake, how long to wait for the client to close


class TlsStream:
    """The reader/writer pair of one TLS connection (``readexactly``, ``write``, ``drain``)."""

    def __init__(
        self, ctx: ssl.SSLContext, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self.ssl_object = ctx.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._reader = reader
        self._writer = writer
        self._buf = bytearray()

    def _send_pending(self) -> None:
        pending = self._outgoing.read()
        if pending:
            self._writer.write(pending)

    async def _receive(self) -> bool:
        """Feed the next bytes from the socket to TLS; False at end of stream."""
        self._send_pending()
        await self._writer.drain()
        data = await self._reader.read(READ_CHUNK)
        if not data:
            return False
        self._incoming.write(data)
        return True

    async def handshake(self) -> None:
        """Complete the server handshake; on failure send the alert, then raise the ssl.SSLError."""
        while True:
            try:
                self.ssl_object.do_handshake()
                break
            except ssl.SSLWantReadError:
                if not await self._receive():
                    raise ConnectionError(
                        "the client closed the connection during the TLS handshake"
                    ) from None
            except ssl.SSLError:
                await self._fail()
                raise
        self._send_pending()
        await self._writer.drain()

    async def _fail(self) -> None:
        with contextlib.suppress(OSError, asyncio.TimeoutError, RuntimeError):
            self._send_pending()
            await self._writer.drain()
            if self._writer.can_write_eof():
                self._writer.write_eof()

            async def _drain_reads() -> None:
                while await self._reader.read(READ_CHUNK):
                    pass

            await asyncio.wait_for(_drain_reads(), LINGER_S)

    async def readexactly(self, n: int) -> bytes:
        """``n`` decrypted bytes; IncompleteReadError when the client closes first."""
        while len(self._buf) < n:
            try:
                chunk = self.ssl_object.read(READ_CHUNK)
            except ssl.SSLWantReadError:
                if not await self._receive():
                    raise asyncio.IncompleteReadError(bytes(self._buf), n) from None
                continue
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                raise asyncio.IncompleteReadError(bytes(self._buf), n) from None
            if not chunk:
                raise asyncio.IncompleteReadError(bytes(self._buf), n)
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def write(self, data: bytes) -> None:
        """Encrypt and queue ``data``."""
        self.ssl_object.write(data)
        self._send_pending()

    async def drain(self) -> None:
        """Wait until the socket's write buffer has room again."""
        await self._writer.drain()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        """As StreamWriter's, with ``ssl_object`` this connection's."""
        if name == "ssl_object":
            return self.ssl_object
        return self._writer.get_extra_info(name, default)


__all__ = ["TlsStream"]
