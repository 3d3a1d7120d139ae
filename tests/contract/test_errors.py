"""Failures: unreachable clusters fail fast and clearly; wrong endpoint types are named."""

from __future__ import annotations

import time

import pytest

from console.kafka import ClusterConnection, KafkaOperationError, get_gateway
from tests.contract.conftest import _controller_security, _security
from tests.procs import free_port

pytestmark = pytest.mark.contract


@pytest.mark.parametrize(
    "method",
    [
        "test_connection",
        "describe_cluster",
        "topic_summary",
        "describe_quorum",
        "list_partition_reassignments",
    ],
)
def test_unreachable_address_fails_fast(method):
    port = free_port()
    gw = get_gateway(
        ClusterConnection(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_s=3, connect_timeout_s=2)
    )
    start = time.monotonic()
    with pytest.raises(KafkaOperationError) as exc:
        getattr(gw, method)()
    assert time.monotonic() - start < 3
    err = exc.value
    assert err.name == "NETWORK_EXCEPTION" and err.retriable
    assert f"127.0.0.1:{port}" in err.message
    assert f"127.0.0.1:{port}" in err.operator_text


def test_unreachable_controllers_fail_fast():
    port = free_port()
    gw = get_gateway(
        ClusterConnection(bootstrap_controllers=f"127.0.0.1:{port}", request_timeout_s=3, connect_timeout_s=2)
    )
    start = time.monotonic()
    with pytest.raises(KafkaOperationError) as exc:
        gw.test_connection()
    assert time.monotonic() - start < 3
    assert exc.value.name == "NETWORK_EXCEPTION"


def test_connection_settings_are_validated():
    with pytest.raises(ValueError, match="not both"):
        ClusterConnection(bootstrap_servers="a:1", bootstrap_controllers="b:2")
    with pytest.raises(ValueError):
        ClusterConnection()
    with pytest.raises(ValueError, match="host:port"):
        ClusterConnection(bootstrap_servers="no-port")


def test_brokers_registered_as_controllers(endpoints):
    gw = get_gateway(
        ClusterConnection(
            bootstrap_controllers=endpoints.bootstrap_servers, request_timeout_s=5, **_security()
        )
    )
    with pytest.raises(KafkaOperationError) as exc:
        gw.test_connection()
    assert exc.value.name == "MISMATCHED_ENDPOINT_TYPE"
    assert "bootstrap servers" in exc.value.message


def test_controllers_registered_as_brokers(controller_conn):
    gw = get_gateway(
        ClusterConnection(
            bootstrap_servers=controller_conn.bootstrap_controllers,
            request_timeout_s=5,
            **_controller_security(),
        )
    )
    with pytest.raises(KafkaOperationError) as exc:
        gw.test_connection()
    assert exc.value.name == "MISMATCHED_ENDPOINT_TYPE"
    assert "bootstrap controllers" in exc.value.message
