"""Broker failure (ISR shrink, leader moves, offline replicas) and injected API faults."""

from __future__ import annotations

import socket
import time

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from tests.sandbox.conftest import addr

pytestmark = []


def _admin(cluster) -> AdminClient:
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "socket.timeout.ms": 3000})


def test_it_refuses_connections_and_moves_leaders_when_a_broker_stops(cluster):
    cluster.create_topic("f", 3, 3, assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    cluster.stop_broker(2)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(addr(cluster.bootstrap_servers.split(",")[1]), timeout=2)
    md = _admin(cluster).list_topics(timeout=10)
    assert sorted(md.brokers) == [1, 3]
    parts = {p.id: p for p in md.topics["f"].partitions.values()}
    assert parts[1].leader == 3
    assert parts[1].isrs == [3, 1]
    assert parts[0].replicas == [1, 2, 3]
    p = cluster.state.topics["f"].partitions[0]
    assert 2 not in p.isr


def test_it_lets_a_restarted_broker_catch_up_and_rejoin_the_isr(cluster):
    cluster.create_topic("r", 1, 2, assignment=[[1, 2]])
    cluster.stop_broker(2)
    cluster.produce_synthetic("r", 1_000_000)
    cluster.advance(5)
    cluster.start_broker(2)
    p = cluster.state.topics["r"].partitions[0]
    assert p.isr == [1]
    cluster.produce_synthetic("r", 0)
    cluster.advance(1)
    assert p.isr == [1, 2]
    assert p.sizes[2] == p.sizes[1] >= 5_000_000


def test_it_fails_an_api_with_an_injected_error_a_given_number_of_times(cluster):
    cluster.inject_fault("CreateTopics", error_code=41, count=1)  # NOT_CONTROLLER
    admin = _admin(cluster)
    fut = admin.create_topics([NewTopic("x1", 1, 1)], operation_timeout=5)["x1"]
    try:
        fut.result(10)  # librdkafka may retry NOT_CONTROLLER transparently
    except KafkaException as exc:
        assert exc.args[0].code() == 41
    cluster.clear_faults()
    cluster.inject_fault("CreateTopics", error_code=38)
    with pytest.raises(KafkaException) as info:
        admin.create_topics([NewTopic("x2", 1, 1)])["x2"].result(10)
    assert info.value.args[0].code() == 38
    assert "x2" not in cluster.state.topics


def test_it_delays_an_api_on_one_node(cluster):
    cluster.inject_fault(3, node=1, delay_s=0.6)
    from kafka.protocol.metadata import MetadataRequest

    from tests.sandbox.conftest import call

    start = time.monotonic()
    call(cluster.bootstrap_servers.split(",")[0], MetadataRequest(topics=[]), 12)
    assert time.monotonic() - start >= 0.6
    start = time.monotonic()
    call(cluster.bootstrap_servers.split(",")[1], MetadataRequest(topics=[]), 12)
    assert time.monotonic() - start < 0.5


def test_it_reports_a_port_in_use_and_releases_everything(cluster):
    from sandbox import SandboxCluster

    taken = int(cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])
    other = SandboxCluster(brokers=1, controllers=0, port=taken, speed=0)
    with pytest.raises(OSError):
        other.start()
    assert other._loop is None


def test_it_accepts_connections_and_answers_nothing_while_a_broker_is_frozen(cluster):
    """As a SIGSTOP'd Kafka: the port accepts, a request waits; after the thaw it is answered."""
    from kafka.protocol.metadata import ApiVersionsRequest

    from tests.sandbox.conftest import call

    hostport = cluster.bootstrap_servers.split(",")[1]
    cluster.freeze_broker(2)
    sock = socket.create_connection(addr(hostport), timeout=0.5)
    try:
        with pytest.raises(TimeoutError):
            call(hostport, ApiVersionsRequest(), 0, sock=sock)
        assert cluster.state.brokers[2].up  # not fenced: still listed, still leading
        cluster.thaw_broker(2)
        sock.settimeout(5)
        assert call(hostport, ApiVersionsRequest(), 0).error_code == 0
    finally:
        sock.close()
        cluster.thaw_broker(2)


def test_it_fences_a_frozen_broker_when_asked_like_kraft_after_the_session_timeout(cluster):
    cluster.create_topic("fz", 1, 2, assignment=[[2, 1]])
    cluster.freeze_broker(2, fenced=True)
    try:
        md = _admin(cluster).list_topics(timeout=10)
        assert sorted(md.brokers) == [1, 3]
        assert md.topics["fz"].partitions[0].leader == 1
    finally:
        cluster.thaw_broker(2)
    assert cluster.state.brokers[2].up
