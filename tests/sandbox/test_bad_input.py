"""Bad input closes only the offending connection; other clients keep being served."""

from __future__ import annotations

import socket
import struct

import pytest
from kafka.protocol.metadata import MetadataRequest

from tests.sandbox.conftest import addr, call, recv_exact

pytestmark = []


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(5)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _still_serves(hostport: str) -> None:
    resp = call(hostport, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)
    assert len(resp.brokers) == 3


@pytest.mark.parametrize(
    "frame",
    [
        struct.pack(">i", 3) + b"abc",  # shorter than a header
        struct.pack(">i", 100 * 1024 * 1024 + 1),  # over socket.request.max.bytes
        struct.pack(">i", -5),  # negative size
        struct.pack(">i", 10) + struct.pack(">hhih", 3, 12, 1, 200),  # header runs past the frame
        struct.pack(">i", 10) + struct.pack(">hhih", 999, 0, 1, -1),  # unknown api key
        struct.pack(">i", 10) + struct.pack(">hhih", 3, 77, 1, -1),  # unsupported version
    ],
)
def test_it_closes_the_connection_on_bad_frames_and_keeps_serving(cluster, frame):
    hostport = cluster.bootstrap_servers.split(",")[0]
    bad = socket.create_connection(addr(hostport), timeout=5)
    other = socket.create_connection(addr(hostport), timeout=5)
    bad.sendall(frame)
    assert _closed(bad)
    call(hostport, MetadataRequest(topics=[], allow_auto_topic_creation=False), 12, sock=other)
    _still_serves(hostport)


def test_it_closes_on_broker_apis_sent_to_a_controller(cluster):
    ctl = cluster.bootstrap_controllers.split(",")[0]
    sock = socket.create_connection(addr(ctl), timeout=5)
    req = MetadataRequest(topics=None, allow_auto_topic_creation=False)
    req.with_header(correlation_id=1, client_id="t")
    sock.sendall(req.encode(version=12, header=True, framed=True))
    assert _closed(sock)


def test_it_keeps_the_connection_for_the_next_request_after_a_good_one(cluster):
    hostport = cluster.bootstrap_servers.split(",")[0]
    sock = socket.create_connection(addr(hostport), timeout=5)
    for _ in range(3):
        resp = call(hostport, MetadataRequest(topics=[], allow_auto_topic_creation=False), 9, sock=sock)
        assert resp.cluster_id == cluster.cluster_id
    sock.close()
    assert recv_exact  # imported helper is used by call()
