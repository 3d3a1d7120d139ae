"""Throttled reassignment progress on the virtual clock, completion, cancel and elections."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from kafka import KafkaAdminClient, TopicPartition
from kafka.errors import InvalidReplicationAssignmentError, NoReassignmentInProgressError

pytestmark = []
MB = 1024 * 1024


@pytest.fixture
def admins(cluster):
    conf = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    kp = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    yield conf, kp
    kp.close()


def _set(conf: AdminClient, kind: str, name: str, **cfg: str) -> None:
    res = ConfigResource(
        kind,
        name,
        incremental_configs=[
            ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.SET)
            for k, v in cfg.items()
        ],
    )
    conf.incremental_alter_configs([res])[res].result(10)


def _sizes(kp: KafkaAdminClient, topic: str) -> dict[int, int]:
    out = {}
    for entry in kp.describe_log_dirs():
        for d in entry["log_dirs"]:
            for t in d["topics"]:
                if t["name"] == topic:
                    out[entry["broker"]] = t["partitions"][0]["partition_size"]
    return out


def test_it_copies_a_moving_replica_at_the_throttled_rate_then_finishes(cluster, admins):
    conf, kp = admins
    cluster.create_topic("move", 1, 1, assignment=[[1]])
    cluster.produce_synthetic("move", 10 * MB)
    cluster.advance(10)  # 100 MiB on broker 1
    cluster.produce_synthetic("move", 0)
    _set(
        conf,
        "topic",
        "move",
        leader_replication_throttled_replicas="0:1",
        follower_replication_throttled_replicas="0:2",
    )
    for b in ("1", "2"):
        _set(
            conf,
            "broker",
            b,
            leader_replication_throttled_rate=str(10 * MB),
            follower_replication_throttled_rate=str(10 * MB),
        )
    kp.alter_partition_reassignments({TopicPartition("move", 0): [2]})
    ongoing = kp.list_partition_reassignments()
    assert ongoing[TopicPartition("move", 0)] == {
        "replicas": [2, 1],
        "adding_replicas": [2],
        "removing_replicas": [1],
    }
    cluster.advance(3)
    sizes = _sizes(kp, "move")
    assert sizes[1] == 100 * MB
    assert sizes[2] == pytest.approx(30 * MB, rel=0.01)
    cluster.advance(8)
    assert kp.list_partition_reassignments() == {}
    part = conf.list_topics(timeout=5).topics["move"].partitions[0]
    assert (part.replicas, part.isrs, part.leader) == ([2], [2], 2)
    assert _sizes(kp, "move") == {2: 100 * MB}


def test_it_copies_unthrottled_replicas_at_broker_bandwidth(cluster, admins):
    _, kp = admins
    cluster.state.bandwidth_bytes_per_s = 20 * MB
    cluster.create_topic("fast", 1, 1, assignment=[[1]])
    cluster.produce_synthetic("fast", 40 * MB)
    cluster.advance(1)
    cluster.produce_synthetic("fast", 0)
    kp.alter_partition_reassignments({TopicPartition("fast", 0): [1, 3]})
    cluster.advance(1)
    assert _sizes(kp, "fast")[3] == pytest.approx(20 * MB, rel=0.01)
    cluster.advance(1.5)
    assert cluster.state.topics["fast"].partitions[0].replicas == [1, 3]


def test_a_restarted_broker_spends_its_bandwidth_on_the_replicas_that_have_bytes_to_copy(cluster, admins):
    """Kafka's fetchers ask every lagging partition in one request and a partition with nothing to
    copy answers empty: a restarted broker's empty or level replicas take none of its bandwidth.
    (The sandbox split it evenly over every lagging replica: with 1,000 empty partitions beside
    one moving partition, that one got a thousandth of the broker's bandwidth.)"""
    _, kp = admins
    cluster.state.bandwidth_bytes_per_s = 20 * MB
    cluster.create_topic("empties", 1000, 2, assignment=[[2, 3]] * 1000)
    cluster.create_topic("full", 1, 1, assignment=[[1]])
    cluster.produce_synthetic("full", 40 * MB)
    cluster.advance(1)
    cluster.produce_synthetic("full", 0)
    cluster.stop_broker(3)
    cluster.start_broker(3)  # its 1,000 replicas (empty) catch up, as the moving one will
    kp.alter_partition_reassignments({TopicPartition("full", 0): [1, 3]})
    assert len(cluster.state.catching_up) == 1001
    cluster.advance(1)
    assert _sizes(kp, "full")[3] == pytest.approx(20 * MB, rel=0.01)
    cluster.advance(1.5)
    assert cluster.state.topics["full"].partitions[0].replicas == [1, 3]
    assert all(p.isr == [2, 3] for p in cluster.state.topics["empties"].partitions)


def test_replicas_sharing_a_broker_get_equal_shares_and_a_short_one_leaves_its_rest_to_the_others(
    cluster, admins
):
    _, kp = admins
    cluster.state.bandwidth_bytes_per_s = 30 * MB
    cluster.create_topic("big", 2, 1, assignment=[[1], [1]])
    cluster.create_topic("small", 1, 1, assignment=[[1]])
    cluster.produce_synthetic("big", 200 * MB)  # 100 MiB a partition
    cluster.produce_synthetic("small", 5 * MB)
    cluster.advance(1)
    cluster.produce_synthetic("big", 0)
    cluster.produce_synthetic("small", 0)
    kp.alter_partition_reassignments(
        {
            TopicPartition("big", 0): [1, 3],
            TopicPartition("big", 1): [1, 3],
            TopicPartition("small", 0): [1, 3],
        }
    )
    cluster.advance(1)  # 30 MiB: small takes its 5, the two big ones 12.5 each
    big = cluster.state.topics["big"].partitions
    assert [p.sizes[3] for p in big] == [pytest.approx(12.5 * MB, rel=0.01)] * 2
    assert cluster.state.topics["small"].partitions[0].sizes[3] == pytest.approx(5 * MB, rel=0.01)


def test_it_cancels_a_reassignment_with_null_replicas(cluster, admins):
    _, kp = admins
    cluster.create_topic("c", 1, 1, assignment=[[1]])
    cluster.produce_synthetic("c", 100 * MB)
    cluster.advance(1)
    kp.alter_partition_reassignments({TopicPartition("c", 0): [3]})
    kp.alter_partition_reassignments({TopicPartition("c", 0): None})
    p = cluster.state.topics["c"].partitions[0]
    assert (p.replicas, p.adding, p.removing, p.leader) == ([1], [], [], 1)
    again = kp.alter_partition_reassignments({TopicPartition("c", 0): None})
    assert again[TopicPartition("c", 0)] is NoReassignmentInProgressError
    bad = kp.alter_partition_reassignments({TopicPartition("c", 0): [1, 9]})
    assert bad[TopicPartition("c", 0)] is InvalidReplicationAssignmentError


def test_it_restores_on_cancel_the_order_kafka_restores(cluster, admins):
    """Kafka's controller (PartitionReassignmentReplicas) lists a reassigning partition's replicas as
    the target followed by the removing brokers in ascending order; a cancel keeps that list minus
    the adding brokers (PartitionReassignmentRevert). So the original brokers come back, but not
    always in their original order, and the preferred leader can change."""
    _, kp = admins
    cluster.create_topic("order", 3, 2, assignment=[[1, 2], [2, 3], [3, 1]])
    cluster.produce_synthetic("order", 100 * MB)
    cluster.advance(1)
    kp.alter_partition_reassignments(
        {
            TopicPartition("order", 0): [2, 3],
            TopicPartition("order", 1): [1, 3],
            TopicPartition("order", 2): [3, 2],
        }
    )
    parts = cluster.state.topics["order"].partitions
    assert [p.replicas for p in parts] == [[2, 3, 1], [1, 3, 2], [3, 2, 1]]
    kp.alter_partition_reassignments({TopicPartition("order", i): None for i in range(3)})
    assert [p.replicas for p in parts] == [[2, 1], [3, 2], [3, 1]]  # p0 and p1: same brokers, other order
    # Several brokers removed: Kafka lists them in ascending order, not the original one.
    cluster.create_topic("order2", 1, 2, assignment=[[2, 1]])
    cluster.produce_synthetic("order2", 100 * MB)
    cluster.advance(1)
    from sandbox.handlers.reassign import cancel, reassign

    p = cluster.state.topics["order2"].partitions[0]
    with cluster.state.lock:
        reassign(cluster.state, "order2", p, [3])
        assert (p.replicas, p.adding, p.removing) == ([3, 1, 2], [3], [1, 2])
        cancel(cluster.state, p)
    assert p.replicas == [1, 2]


def test_it_moves_leadership_to_the_new_preferred_replica_when_the_leader_is_removed(cluster, admins):
    _, kp = admins
    cluster.create_topic("lead", 1, 2, assignment=[[1, 2]])
    kp.alter_partition_reassignments({TopicPartition("lead", 0): [3, 2]})
    cluster.advance(0.1)  # level with the (empty) leader, but not yet in the ISR: not finished
    p = cluster.state.topics["lead"].partitions[0]
    assert p.adding == [3] and 3 not in p.isr
    cluster.advance(cluster.state.isr_join_delay_s)  # the AlterPartition round trip
    assert 3 in p.isr or not p.adding
    assert (p.replicas, p.leader) == ([3, 2], 3)


def test_it_elects_the_preferred_leader_and_reports_not_needed(cluster, admins):
    conf, kp = admins
    cluster.create_topic("e", 2, 2, assignment=[[1, 2], [2, 1]])
    cluster.stop_broker(1)
    cluster.start_broker(1)
    cluster.advance(0.1 + cluster.state.isr_join_delay_s)  # caught up, then back in the ISR
    p = cluster.state.topics["e"].partitions[0]
    assert p.leader == 2 and p.isr == [2, 1]
    from confluent_kafka import ElectionType
    from confluent_kafka import TopicPartition as CTP

    res = conf.elect_leaders(ElectionType.PREFERRED, [CTP("e", 0), CTP("e", 1)]).result(10)
    assert res[CTP("e", 0)] is None
    assert res[CTP("e", 1)].code() == 84
    assert p.leader == 1


def test_it_reports_preferred_leader_not_available_when_the_preferred_replica_is_down(cluster, admins):
    conf, _ = admins
    cluster.create_topic("p", 1, 2, assignment=[[1, 2]])
    cluster.stop_broker(1)
    from confluent_kafka import ElectionType
    from confluent_kafka import TopicPartition as CTP

    res = conf.elect_leaders(ElectionType.PREFERRED, [CTP("p", 0)]).result(10)
    assert res[CTP("p", 0)].code() == 80


def test_it_rebalances_leaders_back_to_preferred_replicas_every_check_interval(cluster):
    cluster.create_topic("ab", 2, 2, assignment=[[1, 2], [1, 2]])
    cluster.advance(0.1)
    cluster.stop_broker(1)
    cluster.start_broker(1)
    cluster.advance(1)
    parts = cluster.state.topics["ab"].partitions
    assert [p.leader for p in parts] == [2, 2]
    cluster.advance(300)
    assert [p.leader for p in parts] == [1, 1]


def test_it_deletes_old_segments_beyond_retention(cluster):
    cluster.create_topic(
        "ret",
        1,
        2,
        assignment=[[1, 2]],
        configs={"retention.bytes": str(20 * MB), "segment.bytes": str(4 * MB)},
    )
    cluster.produce_synthetic("ret", 2 * MB)
    for _ in range(30):
        cluster.advance(1)
    p = cluster.state.topics["ret"].partitions[0]
    assert 20 * MB <= p.sizes[1] <= 24 * MB and p.sizes[2] == p.sizes[1]
    assert p.log_start_offset > 0
    cluster.create_topic("compact", 1, 1, configs={"cleanup.policy": "compact", "retention.bytes": "1"})
    cluster.produce_synthetic("compact", MB)
    cluster.advance(10)
    assert cluster.state.topics["compact"].partitions[0].log_start_offset == 0
