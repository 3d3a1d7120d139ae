"""Fixtures for sandbox tests: a small cluster with a stopped clock, and raw protocol calls."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from sandbox import SandboxCluster
from sandbox.testing import running_sandbox

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def start_cli(*args: str, keys: int = 4) -> tuple[subprocess.Popen, dict[str, str]]:
    """``python -m sandbox --port 0 --speed 0 *args`` running, with the first ``keys`` key=value
    lines it prints (its endpoints and files)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--port", "0", "--speed", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    info: dict[str, str] = {}
    while len(info) < keys:
        line = proc.stdout.readline()
        assert line, "sandbox exited early"
        key, _, value = line.strip().partition("=")
        info[key] = value
    return proc, info


def stop_cli(proc: subprocess.Popen) -> str:
    """SIGTERM, then the sandbox must exit 0; returns the rest of its output."""
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0
    return out
