"""Synthetic consumer groups: listing, description, offsets, commits outside a generation, deletion."""

from __future__ import annotations

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

pytestmark = []


def test_it_lists_describes_and_fetches_offsets_of_synthetic_groups(cluster):
    cluster.create_topic("o", 2, 1)
    cluster.add_group("billing", {"c1": [("o", 0)], "c2": [("o", 1)]}, {("o", 0): 3, ("o", 1): 4})
    cluster.add_group("idle", {}, {("o", 0): 1})
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    listed = {g.group_id: g.state.name for g in admin.list_consumer_groups().result(10).valid}
    assert listed == {"billing": "STABLE", "idle": "EMPTY"}
    desc = admin.describe_consumer_groups(["billing"])["billing"].result(10)
    assert sorted(m.client_id for m in desc.members) == ["c1", "c2"]
    assert sorted(tp.partition for m in desc.members for tp in m.assignment.topic_partitions) == [0, 1]
    offs = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("billing")])["billing"].result(10)
    assert sorted((tp.partition, tp.offset) for tp in offs.topic_partitions) == [(0, 3), (1, 4)]


def test_it_commits_offsets_for_empty_groups_and_deletes_them(cluster):
    cluster.create_topic("o", 1, 1)
    cluster.add_group("busy", {"c1": [("o", 0)]}, {})
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    req = ConsumerGroupTopicPartitions("new-group", [TopicPartition("o", 0, 42)])
    admin.alter_consumer_group_offsets([req])["new-group"].result(10)
    assert cluster.state.groups["new-group"].offsets == {("o", 0): 42}
    busy = ConsumerGroupTopicPartitions("busy", [TopicPartition("o", 0, 1)])
    res = admin.alter_consumer_group_offsets([busy])["busy"]
    try:
        out = res.result(10)
        assert out.topic_partitions[0].error is not None
    except Exception as exc:  # librdkafka reports the partition error as a failed future
        assert "UNKNOWN_MEMBER_ID" in str(exc)
    admin.delete_consumer_groups(["new-group"])["new-group"].result(10)
    assert "new-group" not in cluster.state.groups


def test_it_moves_synthetic_committed_offsets_with_the_consume_ratio(cluster):
    cluster.create_topic("flow", 1, 1)
    cluster.produce_synthetic("flow", 100 * 1024)  # 100 records per virtual second
    cluster.add_group("steady", {"c": [("flow", 0)]}, {("flow", 0): 0}, consume_ratio=1.0)
    cluster.add_group("slow", {"c": [("flow", 0)]}, {("flow", 0): 0}, consume_ratio=0.5)
    cluster.add_group("stopped", {}, {("flow", 0): 0})
    cluster.advance(0.1)
    cluster.advance(10)
    end = cluster.state.topics["flow"].partitions[0].end_offset
    lag = {g: end - cluster.state.groups[g].offsets[("flow", 0)] for g in ("steady", "slow", "stopped")}
    assert lag["steady"] <= 10
    assert 400 <= lag["slow"] <= 600
    assert lag["stopped"] == end
