"""A process keeps at most KAFKA_CLIENTS_MAX clusters' Kafka clients open, whatever the number of
clusters it touches (issue 36: bounded per-cluster cost): opening one more closes the least recently
used idle one, never one with a call in flight. Against a sandbox fleet (one process, many clusters)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest

from console.kafka import ClusterConnection, close_all, get_gateway
from console.kafka import gateway as gateway_module
from sandbox.fleet import SandboxFleet, running_fleet

CAP = 3


@pytest.fixture(scope="module")
def fleet() -> Iterator[SandboxFleet]:
    with running_fleet(CAP + 2, brokers=3, controllers=1, topics=2, partitions=3) as f:
        yield f


@pytest.fixture
def capped(fleet) -> Iterator[list]:
    """The fleet's gateways, with the process-wide cap at CAP; every client closed and the cap lifted after."""
    close_all()
    gateways = [
        get_gateway(ClusterConnection(bootstrap_servers=boot), max_open=CAP)
        for boot in fleet.bootstrap_servers.values()
    ]
    try:
        yield gateways
    finally:
        close_all()
        gateway_module.set_max_open(None)


def _open(gateways: list) -> list[bool]:
    return [gw._kp_client is not None or gw._admin_client is not None for gw in gateways]


def _io_threads() -> int:
    return sum(t.name.startswith("kafka-io") for t in threading.enumerate())


def test_it_keeps_at_most_the_cap_of_clients_open_closing_the_least_recently_used(capped):
    threads_before, os_threads_before = _io_threads(), len(os.listdir(f"/proc/{os.getpid()}/task"))
    for gw in capped:  # CAP + 2 clusters, one after another
        assert gw.describe_cluster().brokers
    assert _open(capped) == [False, False, True, True, True]
    assert gateway_module.open_count() == CAP
    assert _io_threads() - threads_before == CAP
    # the process's OS threads too (other tests' threads may end meanwhile: at most, not exactly)
    assert len(os.listdir(f"/proc/{os.getpid()}/task")) - os_threads_before <= CAP
    capped[2].describe_cluster()  # now the most recently used: the next opening closes #4
    capped[0].describe_cluster()
    assert _open(capped) == [True, False, True, False, True]
    assert _io_threads() - threads_before == CAP


def test_it_never_closes_a_client_with_a_call_in_flight(capped, fleet):
    first, *others = capped
    first.describe_cluster()
    name = next(iter(fleet.clusters))
    fleet.clusters[name].inject_fault("DescribeCluster", delay_s=2.0, count=1)
    got: list = []
    caller = threading.Thread(target=lambda: got.append(first.describe_cluster()))
    caller.start()
    try:
        for gw in others:  # CAP + 1 more clusters opened while the first one waits on Kafka
            gw.describe_cluster()
            assert first._kp_client is not None
        assert caller.is_alive()  # still in flight: the cap is exceeded meanwhile, not the call broken
        assert _open(capped) == [True, False, False, True, True]
    finally:
        caller.join(10)
        fleet.clusters[name].clear_faults()
    assert got and got[0].cluster_id == fleet.clusters[name].cluster_id
    others[0].describe_cluster()  # the next opening closes the least recently used idle ones
    assert gateway_module.open_count() == CAP
    assert _open(capped) == [True, True, False, False, True]  # the first ended its call last


def test_it_comes_back_under_the_cap_when_a_burst_of_calls_ends(capped, fleet):
    """CAP + 2 clusters called at once, each call held by Kafka: all open meanwhile (none may be
    closed), and once the last call ends only the CAP most recently used keep their clients."""
    for cluster in fleet.clusters.values():
        cluster.inject_fault("DescribeCluster", delay_s=1.0, count=1)
    threads_before = _io_threads()
    try:
        callers = [threading.Thread(target=gw.describe_cluster) for gw in capped]
        for t in callers:
            t.start()
        for t in callers:
            t.join(20)
    finally:
        for cluster in fleet.clusters.values():
            cluster.clear_faults()
    assert gateway_module.open_count() == CAP
    assert _io_threads() - threads_before == CAP


def test_it_has_no_cap_until_one_is_given(fleet):
    close_all()
    gateway_module.set_max_open(None)
    try:
        gateways = [
            get_gateway(ClusterConnection(bootstrap_servers=b)) for b in fleet.bootstrap_servers.values()
        ]
        for gw in gateways:
            gw.describe_cluster()
        assert gateway_module.open_count() == CAP + 2
    finally:
        close_all()


@pytest.mark.django_db
def test_it_opens_at_most_kafka_clients_max_through_gateway_for(fleet, settings):
    from console.clusters.actions import gateway_for
    from console.models import Cluster

    close_all()
    settings.KAFKA_CLIENTS_MAX = 2
    rows = [
        Cluster.objects.create(name=name, bootstrap_servers=b) for name, b in fleet.bootstrap_servers.items()
    ]
    try:
        for row in rows:
            assert gateway_for(row).describe_cluster().cluster_id == fleet.clusters[row.name].cluster_id
        assert gateway_module.open_count() == 2
    finally:
        close_all()
        gateway_module.set_max_open(None)


@pytest.mark.django_db
def test_it_keeps_no_more_metadata_snapshots_or_their_locks_than_the_limit(fleet, monkeypatch):
    """Every cluster read once: the snapshots past the limit go, and so do their single-flight locks."""
    from console.models import Cluster
    from console.topics import cache as metadata_cache

    monkeypatch.setattr(metadata_cache, "MAX_CLUSTERS", 2)
    metadata_cache.clear()
    rows = [
        Cluster.objects.create(name=name, bootstrap_servers=b) for name, b in fleet.bootstrap_servers.items()
    ]
    try:
        for row in rows:
            assert metadata_cache.get_snapshot(row).names == ["fleet.topic-00000", "fleet.topic-00001"]
        assert metadata_cache.kept_count() == (2, 2)
        metadata_cache.invalidate(rows[-1])
        assert metadata_cache.kept_count() == (1, 1)
    finally:
        metadata_cache.clear()
        close_all()
