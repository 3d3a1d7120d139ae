"""The gateway over time: a cluster nobody uses gives its Kafka clients back (issue 35: idle Kafka
clients closed), and the requests it sends are named for the operator as Kafka names them."""

from __future__ import annotations

import threading

from console.kafka import ClusterConnection, close_idle, get_gateway
from console.kafka.gateway import _observed


def test_it_closes_the_clients_of_an_idle_gateway_and_reopens_them_on_the_next_call(sandbox):
    gw = get_gateway(ClusterConnection(bootstrap_servers=sandbox.bootstrap_servers))
    first = gw.describe_cluster()
    assert gw._kp_client is not None
    assert close_idle(3600.0) == 0 and gw._kp_client is not None  # used just now: kept
    closed = close_idle(0.0)
    assert closed >= 1 and gw._kp_client is None and gw._admin_client is None
    again = gw.describe_cluster()  # opened again (the "controller" is a random broker under KRaft)
    assert (again.cluster_id, again.brokers) == (first.cluster_id, first.brokers)
    assert gw._kp_client is not None


def test_it_never_closes_a_gateway_while_a_call_is_in_progress(sandbox, monkeypatch):
    gw = get_gateway(ClusterConnection(bootstrap_servers=sandbox.bootstrap_servers))
    gw.describe_cluster()
    inside, release = threading.Event(), threading.Event()
    real = type(gw).describe_cluster.__wrapped__

    def slow(self):
        inside.set()
        release.wait(10)
        return real(self)

    # the slow body wrapped the way every public method is (the wrapper counts calls in progress)
    monkeypatch.setattr(type(gw), "describe_cluster", _observed("describe_cluster", slow))
    got = []
    caller = threading.Thread(target=lambda: got.append(gw.describe_cluster()))
    caller.start()
    assert inside.wait(10)
    try:
        assert gw._close_if_idle(0.0) is False and gw._kp_client is not None
    finally:
        release.set()
        caller.join(10)
    assert got and got[0].cluster_id
    assert gw._close_if_idle(0.0) is True


def test_a_whole_metadata_read_is_named_metadata_in_its_errors():
    """The request the console decodes in C is Kafka's Metadata to failover and to the operator (an
    error says "Metadata", not a class name of the console's)."""
    from console.kafka.kp_failover import ANY_BROKER_READS, request_name
    from console.kafka.metadata_read import MetadataBytesRequest

    assert request_name(MetadataBytesRequest()) == "Metadata" == request_name(MetadataBytesRequest(["t"]))
    assert "Metadata" in ANY_BROKER_READS
