"""DescribeCluster, metadata, connection test, quorum and features (broker mode)."""

from __future__ import annotations

import dataclasses

import pytest

from console.kafka import ClusterConnection, get_gateway

pytestmark = pytest.mark.contract


def test_describe_cluster(gw):
    info = gw.describe_cluster()
    assert info.cluster_id
    assert info.endpoint_type == "broker"
    assert len(info.brokers) >= 1
    ids = [b.id for b in info.brokers]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert info.controller_id in ids  # under KRaft: some live broker
    for b in info.brokers:
        assert b.host and 0 < b.port < 65536
        assert b.rack is None or isinstance(b.rack, str)


def test_test_connection(gw):
    check = gw.test_connection()
    info = gw.describe_cluster()
    assert check.cluster_id == info.cluster_id
    assert check.broker_count == len(info.brokers)
    assert check.endpoint_type == "broker"
    assert check.elapsed_s < 5


def test_metadata_matches_describe_cluster(gw):
    md = gw.list_topics_metadata()
    info = gw.describe_cluster()
    assert md.cluster_id == info.cluster_id
    assert {b.id for b in md.brokers} == {b.id for b in info.brokers}
    names = [t.name for t in md.topics]
    assert names == sorted(names)
    summary = gw.topic_summary()
    assert summary.topic_count >= 0 and summary.partition_count >= summary.offline


def test_gateway_is_reused_per_connection(conn):
    same = ClusterConnection(**{f.name: getattr(conn, f.name) for f in dataclasses.fields(conn)})
    assert get_gateway(same) is get_gateway(conn)


def test_describe_quorum_via_brokers(gw):
    q = gw.describe_quorum()
    assert q.leader_id >= 0 and q.leader_epoch >= 0 and q.high_watermark >= 0
    voter_ids = [v.id for v in q.voters]
    assert q.leader_id in voter_ids
    broker_ids = {b.id for b in gw.describe_cluster().brokers}
    assert broker_ids <= {o.id for o in q.observers} | set(voter_ids)
    for r in (*q.voters, *q.observers):
        assert r.log_end_offset >= 0 and r.lag >= 0


def test_describe_features(gw):
    features = gw.describe_features()
    mv = features["metadata.version"]
    assert mv.finalized_max is not None and mv.supported_max is not None
    assert mv.supported_min <= mv.finalized_max <= mv.supported_max


def test_the_console_names_the_quorum_leader_as_active_controller(gw):
    """Metadata's controller id is a random live broker under KRaft; the console's active
    controller is DescribeQuorum's leader on every read (ten reads, as ten page reloads)."""
    from console.clusters.probe import active_controller

    leader = gw.describe_quorum().leader_id
    for _ in range(10):
        assert active_controller(gw, gw.describe_cluster()) == (leader, "")
