"""Fixtures for sandbox tests: a small cluster with a stopped clock, and raw protocol calls."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from typing import Any

import pytest

from sandbox import SandboxCluster
from sandbox.testing import running_sandbox


@pytest.fixture
def cluster() -> Iterator[SandboxCluster]:
    """3 brokers on racks r1-r3, 3 controllers, ephemeral ports, virtual clock only moved by advance()."""
    with running_sandbox(brokers=3, controllers=3, speed=0, racks=["r1", "r2", "r3"]) as c:
        yield c


def addr(hostport: str) -> tuple[str, int]:
    """("127.0.0.1", 1234) from "127.0.0.1:1234"."""
    host, port = hostport.rsplit(":", 1)
    return host, int(port)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Read exactly n bytes or raise EOFError when the peer closes."""
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return buf


def call(
    hostport: str, request: Any, version: int, sock: socket.socket | None = None, response_cls: Any = None
) -> Any:
    """Send one request with kafka-python's codecs and decode the response (with ``response_cls``
    when given: kafka-python's registry holds one class per API key, and other code in the same
    process may register its own for APIs kafka-python lacks)."""
    from kafka.protocol.api_header import ResponseClassRegistry

    own = sock is None
    sock = sock or socket.create_connection(addr(hostport), timeout=5)
    try:
        request.with_header(correlation_id=7, client_id="sandbox-test")
        sock.sendall(request.encode(version=version, header=True, framed=True))
        size = struct.unpack(">i", recv_exact(sock, 4))[0]
        data = recv_exact(sock, size)
        cls = response_cls or ResponseClassRegistry.get_response_class(request.header)
        return cls.decode(data, version=version, header=True)
    finally:
        if own:
            sock.close()
