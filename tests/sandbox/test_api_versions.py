"""ApiVersions: brokers and controllers advertise exactly what they implement."""

from __future__ import annotations

import socket
import struct

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from tests.sandbox.conftest import addr, call, recv_exact

pytestmark = []

CONTROLLER_KEYS = {
    18,
    17,
    36,
    60,
    32,
    44,
    33,
    29,
    30,
    31,
    43,
    45,
    46,
    49,
    50,
    51,
    55,
    57,
    64,
    80,
    81,
}  # 17, 36: SASL


def test_it_advertises_the_controller_subset_on_controllers(cluster):
    resp = call(
        cluster.bootstrap_controllers.split(",")[0],
        ApiVersionsRequest(client_software_name="t", client_software_version="1"),
        3,
    )
    assert resp.error_code == 0
    assert {k.api_key for k in resp.api_keys} == CONTROLLER_KEYS
    assert {f.name for f in resp.finalized_features} >= {"metadata.version", "kraft.version"}


def test_it_advertises_data_and_admin_apis_on_brokers(cluster):
    resp = call(
        cluster.bootstrap_servers.split(",")[0],
        ApiVersionsRequest(client_software_name="t", client_software_version="1"),
        3,
    )
    keys = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert keys[3] == (0, 13) and keys[0] == (3, 13) and keys[19] == (2, 7)
    assert 55 in keys and 60 in keys and 45 in keys
    assert (keys[48], keys[49]) == ((0, 1), (0, 1))  # Describe/AlterClientQuotas, as Kafka 4.1


def test_it_answers_an_unknown_api_versions_version_with_v0_unsupported_version(cluster):
    sock = socket.create_connection(addr(cluster.bootstrap_servers.split(",")[0]), timeout=5)
    # header: api key 18, version 99, correlation id 5, client id "x"; empty body
    payload = struct.pack(">hhih", 18, 99, 5, 1) + b"x" + b"\x00"
    sock.sendall(struct.pack(">i", len(payload)) + payload)
    size = struct.unpack(">i", recv_exact(sock, 4))[0]
    data = recv_exact(sock, size)
    assert struct.unpack_from(">i", data)[0] == 5
    resp = ApiVersionsResponse.decode(data[4:], version=0)
    assert resp.error_code == 35
    assert any(k.api_key == 3 for k in resp.api_keys)
    sock.close()


def test_it_rejects_invalid_client_software_names_like_kafka(cluster):
    # Kafka answers a v3 body (error 42, no APIs) that kafka-python cannot decode: compare bytes
    sock = socket.create_connection(addr(cluster.bootstrap_servers.split(",")[0]), timeout=5)
    req = ApiVersionsRequest(client_software_name="bad name!", client_software_version="1")
    req.with_header(correlation_id=3, client_id="p")
    sock.sendall(req.encode(version=3, header=True, framed=True))
    size = struct.unpack(">i", recv_exact(sock, 4))[0]
    assert recv_exact(sock, size) == bytes.fromhex("00000003002a010000000000")
    sock.close()
