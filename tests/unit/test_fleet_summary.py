"""A cluster's summary row, written by the telemetry snapshot: exact counts from a sandbox of its own
(under-replicated, offline and under-min-ISR partitions made with a stopped broker and min ISR
settings), the facts (brokers, controller, versions, principals, groups), an unreachable cluster
keeping its last figures, a controller-mode connection, and the overview's fresh figures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from console.clusters.actions import gateway_for
from console.kafka import AclBinding, close_all
from console.kafka.health import PartitionLayout
from console.models import Cluster, ClusterSummary
from console.telemetry import snapshots, summary
from sandbox.testing import running_sandbox

NOW = datetime(2026, 5, 4, 12, 7, 30, tzinfo=UTC)
SECURITY_DISABLED = 54


@pytest.fixture(scope="module")
def own():
    """A sandbox of this module's own (3 brokers, 1 controller, clock stopped): its counts are exact.
    Topics (after broker 3 stops, with the cluster's default min.insync.replicas at 2):
      fa.one   [1,2,3] [2,3,1] [3,1,2], min ISR 3: 3 under-replicated, 3 under min ISR
      fa.two   [3] [1]: p0 offline (its ISR keeps broker 3: 1, under the default 2), p1's ISR of 1 too
      fa.three [1,3] [2,3]: 2 under-replicated, 2 under the default min ISR of 2
    """
    with running_sandbox(brokers=3, controllers=1, speed=0) as c:
        c.create_topic(
            "fa.one", assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2]], configs={"min.insync.replicas": "3"}
        )
        c.create_topic("fa.two", assignment=[[3], [1]])
        c.create_topic("fa.three", assignment=[[1, 3], [2, 3]])
        c.set_broker_config("", "min.insync.replicas", "2")
        c.add_group("fleet-g1", offsets={("fa.one", 0): 0})
        c.add_group("fleet-g2", offsets={("fa.two", 1): 0})
        yield c
    close_all()


@pytest.fixture
def cluster_a(db, own):
    cluster = Cluster.objects.create(
        name="fleet-a", bootstrap_servers=own.bootstrap_servers, request_timeout_s=5
    )
    acls = [
        AclBinding("TOPIC", "fa.one", "LITERAL", "User:alice", "*", "READ", "ALLOW"),
        AclBinding("TOPIC", "fa.two", "LITERAL", "User:alice", "*", "WRITE", "ALLOW"),
        AclBinding("GROUP", "fleet-g1", "LITERAL", "User:bob", "*", "READ", "ALLOW"),
    ]
    gateway_for(cluster).create_acls(acls)
    return cluster


def _fields(row: ClusterSummary) -> dict:
    return {
        f.name: getattr(row, f.name) for f in ClusterSummary._meta.fields if f.name not in ("id", "cluster")
    }


def test_it_counts_partitions_under_min_isr_as_the_topic_list_does():
    layout = PartitionLayout.build(
        [1, 2],
        [
            ("a", [(0, 1, [1, 2], [1, 2]), (1, -1, [2], [2]), (2, 2, [2, 1], [2])]),
            ("b", [(0, 1, [1, 2], [1]), (1, -1, [1], [1])]),  # b-1: offline, its ISR (1) at the default
        ],
    )
    assert summary.partition_counts(layout, {"a": 2}) == summary.PartitionCounts(
        topics=2,
        partitions=5,
        under_replicated=2,
        offline=2,
        under_min_isr=2,
        under_min_isr_topics=(("a", 2),),
    )
    assert summary.metadata_version_name(27) == "4.1-IV1" and summary.kafka_release(27) == "4.1"
    assert summary.metadata_version_name(None) == "" and summary.kafka_release(99) == "newer than 4.2"


def test_it_writes_the_summary_of_a_snapshot_with_exact_counts(own, cluster_a, telemetry_lake):
    healthy = snapshots.collect_for(cluster_a, now=NOW)
    first = _fields(ClusterSummary.objects.get(cluster=cluster_a))
    own.stop_broker(3)
    try:
        broken = snapshots.collect_for(cluster_a, now=NOW + timedelta(minutes=5))
    finally:
        own.start_broker(3)

    assert healthy.partitions == broken.partitions == 7
    assert first == {
        "taken_at": NOW,
        "reachable": True,
        "error": "",
        "kafka_version": "4.1",
        "metadata_version": "4.1-IV1",
        "controller_id": 101,
        "brokers_up": 3,
        "brokers_total": 3,
        "topics": 3,
        "partitions": 7,
        "under_replicated": 0,
        "offline": 0,
        "under_min_isr": 2,  # fa.two's single replicas under the cluster's default of 2
        "under_min_isr_topics": [["fa.two", 2]],
        "consumer_groups": 2,
        "principals": [["User:alice", 2], ["User:bob", 1]],
    }
    # (whether ListGroups reached broker 3's address or not, the count is 2: read, or the last one read)
    assert _fields(ClusterSummary.objects.get(cluster=cluster_a)) == {
        **first,
        "taken_at": NOW + timedelta(minutes=5),
        "brokers_up": 2,
        "under_replicated": 5,
        "offline": 1,
        "under_min_isr": 7,
        "under_min_isr_topics": [["fa.one", 3], ["fa.three", 2], ["fa.two", 2]],  # most first, then by name
    }


def test_it_keeps_the_last_figures_of_an_unreachable_cluster_with_the_error(own, cluster_a, telemetry_lake):
    snapshots.collect_for(cluster_a, now=NOW)
    before = _fields(ClusterSummary.objects.get(cluster=cluster_a))
    Cluster.objects.filter(pk=cluster_a.pk).update(bootstrap_servers="127.0.0.1:1", request_timeout_s=2)
    cluster_a.refresh_from_db()

    error = snapshots.collect_for(cluster_a, now=NOW + timedelta(minutes=10))

    assert isinstance(error, str) and error
    row = ClusterSummary.objects.get(cluster=cluster_a)
    assert _fields(row) == {**before, "reachable": False, "error": error}
    assert before["reachable"] and before["partitions"] == 7 and before["taken_at"] == NOW


def test_it_writes_a_row_without_figures_for_a_cluster_never_reached(db, telemetry_lake):
    cluster = Cluster.objects.create(name="nowhere", bootstrap_servers="127.0.0.1:1", request_timeout_s=2)
    error = snapshots.collect_for(cluster, now=NOW)
    row = ClusterSummary.objects.get(cluster=cluster)
    assert isinstance(error, str)
    assert (row.reachable, row.error, row.brokers_total, row.partitions) == (False, error, 0, 0)


def test_it_summarizes_a_controller_mode_connection_from_what_the_controllers_answer(own, db, telemetry_lake):
    cluster = Cluster.objects.create(
        name="fleet-ctl", bootstrap_controllers=own.bootstrap_controllers, request_timeout_s=5
    )
    result = snapshots.collect_for(cluster, now=NOW)
    assert result.skipped
    row = _fields(ClusterSummary.objects.get(cluster=cluster))
    assert row == {
        **row,
        "taken_at": NOW,
        "reachable": True,
        "error": "",
        "kafka_version": "4.1",
        "metadata_version": "4.1-IV1",
        "controller_id": 101,
        "brokers_up": 1,
        "brokers_total": 1,
        "partitions": 0,
        "consumer_groups": None,
    }


def test_it_counts_no_principals_on_a_cluster_without_an_authorizer(own, cluster_a):
    own.inject_fault("DescribeAcls", error_code=SECURITY_DISABLED)
    try:
        facts = summary.read_facts(cluster_a, gateway_for(cluster_a))
    finally:
        own.clear_faults()
    assert facts.principals == [] and facts.brokers_total == 3 and not facts.error
