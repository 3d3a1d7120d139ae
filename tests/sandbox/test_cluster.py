"""DescribeCluster endpoint types (KIP-919) and DescribeQuorum through real clients and raw calls."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient
from kafka.protocol.admin import DescribeClusterRequest, DescribeQuorumRequest

from tests.sandbox.conftest import call

pytestmark = []


def _describe(hostport: str, endpoint_type: int, version: int = 1):
    return call(
        hostport,
        DescribeClusterRequest(
            include_cluster_authorized_operations=False,
            endpoint_type=endpoint_type,
            include_fenced_brokers=True,
        ),
        version,
    )


def test_it_answers_describe_cluster_by_endpoint_type(cluster):
    broker = cluster.bootstrap_servers.split(",")[0]
    ctl = cluster.bootstrap_controllers.split(",")[0]
    ok = _describe(broker, 1)
    assert (ok.error_code, ok.endpoint_type) == (0, 1)
    assert [b.broker_id for b in ok.brokers] == [1, 2, 3]
    assert [b.rack for b in ok.brokers] == ["r1", "r2", "r3"]
    bad = _describe(broker, 2)
    assert bad.error_code == 114 and "type BROKER" in bad.error_message
    on_ctl = _describe(ctl, 2, 2)
    assert (on_ctl.error_code, on_ctl.endpoint_type, on_ctl.controller_id) == (0, 2, 101)
    assert [b.broker_id for b in on_ctl.brokers] == [101, 102, 103]
    assert _describe(ctl, 1).error_code == 114
    assert _describe(ctl, 1, 0).error_code == 42


def test_it_reports_fenced_brokers_only_when_asked(cluster):
    cluster.stop_broker(3)
    broker = cluster.bootstrap_servers.split(",")[0]
    resp = _describe(broker, 1, 2)
    assert [(b.broker_id, b.is_fenced) for b in resp.brokers] == [(1, False), (2, False), (3, True)]


def test_it_is_described_by_both_clients(cluster):
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    desc = client.describe_cluster().result(10)
    assert desc.cluster_id == cluster.cluster_id
    assert sorted(n.id for n in desc.nodes) == [1, 2, 3]
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        meta = admin.describe_cluster()
    finally:
        admin.close()
    assert meta["cluster_id"] == cluster.cluster_id
    assert [b["rack"] for b in meta["brokers"]] == ["r1", "r2", "r3"]


def _quorum(hostport: str):
    q = DescribeQuorumRequest
    resp = call(
        hostport,
        q(
            topics=[
                q.TopicData(
                    topic_name="__cluster_metadata", partitions=[q.TopicData.PartitionData(partition_index=0)]
                )
            ]
        ),
        2,
    )
    return resp.topics[0].partitions[0], resp


def test_it_shows_quorum_lag_growing_for_a_stopped_controller(cluster):
    ctl = cluster.bootstrap_controllers.split(",")[0]
    cluster.advance(1)
    part, resp = _quorum(ctl)
    assert part.leader_id == 101
    assert [v.replica_id for v in part.current_voters] == [101, 102, 103]
    assert sorted(o.replica_id for o in part.observers) == [1, 2, 3]
    assert [n.node_id for n in resp.nodes] == [101, 102, 103]
    cluster.stop_controller(103)
    cluster.advance(30)
    part, _ = _quorum(ctl)
    voters = {v.replica_id: v for v in part.current_voters}
    assert part.high_watermark - voters[103].log_end_offset >= 30
    assert voters[101].last_caught_up_timestamp - voters[103].last_caught_up_timestamp >= 30_000


def test_it_moves_quorum_leadership_when_the_active_controller_stops(cluster):
    cluster.stop_controller(101)
    part, _ = _quorum(cluster.bootstrap_controllers.split(",")[1])
    assert part.leader_id == 102
    assert part.leader_epoch == 2


def test_it_serves_configs_on_controllers_as_kafka_does(cluster):
    from kafka.protocol.admin import DescribeConfigsRequest, IncrementalAlterConfigsRequest

    ctl = cluster.bootstrap_controllers.split(",")[0]
    res = DescribeConfigsRequest.DescribeConfigsResource

    def describe(name: str):
        return call(
            ctl,
            DescribeConfigsRequest(
                resources=[res(resource_type=4, resource_name=name, configuration_keys=["process.roles"])],
                include_synonyms=False,
                include_documentation=False,
            ),
            4,
        ).results[0]

    mine = describe("101")
    assert (mine.error_code, [(c.name, c.value) for c in mine.configs]) == (
        0,
        [("process.roles", "controller")],
    )
    other = describe("1")
    assert (other.error_code, other.error_message) == (
        42,
        "Unexpected broker id, expected 101 or empty string, but received 1",
    )
    ar = IncrementalAlterConfigsRequest.AlterConfigsResource
    req = IncrementalAlterConfigsRequest(
        resources=[
            ar(
                resource_type=4,
                resource_name="2",
                configs=[
                    ar.AlterableConfig(
                        name="follower.replication.throttled.rate", config_operation=0, value="1000"
                    )
                ],
            )
        ],
        validate_only=False,
    )
    assert call(ctl, req, 1).responses[0].error_code == 0
    assert cluster.state.broker_configs["2"] == {"follower.replication.throttled.rate": "1000"}


def test_it_answers_writes_on_an_inactive_controller_with_not_controller(cluster):
    from kafka.protocol.admin import (
        AlterPartitionReassignmentsRequest,
        DeleteAclsRequest,
        IncrementalAlterConfigsRequest,
        ListPartitionReassignmentsRequest,
    )

    cluster.create_topic("nc", 1, 1, assignment=[[1]])
    inactive = cluster.bootstrap_controllers.split(",")[1]
    ar = IncrementalAlterConfigsRequest.AlterConfigsResource
    iac = IncrementalAlterConfigsRequest(
        resources=[
            ar(
                resource_type=2,
                resource_name="nc",
                configs=[ar.AlterableConfig(name="retention.ms", config_operation=0, value="5")],
            )
        ],
        validate_only=False,
    )
    resp = call(inactive, iac, 1).responses[0]
    assert (resp.error_code, resp.error_message) == (41, "The active controller appears to be node 101.")
    assert cluster.state.topics["nc"].configs == {}
    t = AlterPartitionReassignmentsRequest.ReassignableTopic
    apr = AlterPartitionReassignmentsRequest(
        topics=[t(name="nc", partitions=[t.ReassignablePartition(partition_index=0, replicas=[2])])]
    )
    out = call(inactive, apr, 0)
    assert out.error_code == 41 and out.responses[0].partitions[0].error_code == 41
    assert cluster.state.topics["nc"].partitions[0].replicas == [1]
    f = DeleteAclsRequest.DeleteAclsFilter
    dacl = DeleteAclsRequest(
        filters=[
            f(
                resource_type_filter=1,
                resource_name_filter=None,
                pattern_type_filter=1,
                principal_filter=None,
                host_filter=None,
                operation=1,
                permission_type=1,
            )
        ]
    )
    assert call(inactive, dacl, 3).filter_results[0].error_code == 41
    assert call(inactive, ListPartitionReassignmentsRequest(topics=None), 0).error_code == 0
    part, resp = _quorum(inactive)
    assert (part.error_code, part.leader_id, resp.nodes) == (6, 0, [])
    assert call(cluster.bootstrap_controllers.split(",")[0], iac, 1).responses[0].error_code == 0
