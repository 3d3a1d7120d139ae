"""Share groups (KIP-932) through the gateway, the same on the sandbox and on a real Kafka 4.1 with
``share.version`` 1: a member joins by ShareGroupHeartbeat; ListGroups (types filter "share") lists the
group Stable (and the consumer-group list does not); ShareGroupDescribe gives the member, its client id
and host and its assignment; DescribeShareGroupOffsets answers -1 or a start offset per partition and
nothing (no error) for an unknown group; DeleteGroups and DeleteShareGroupOffsets refuse the group while
the member is there (NON_EMPTY_GROUP); AlterShareGroupOffsets answers success and moves nothing (4.1);
once the member left the group is Empty, its offsets of an unknown topic are UNKNOWN_TOPIC_OR_PARTITION,
and the group can be deleted (then GROUP_ID_NOT_FOUND).

share.version is enabled if it is not (on a real cluster it is left enabled; the sandbox gets its
default, 0, back)."""

from __future__ import annotations

import pytest

from console.kafka import KafkaOperationError, TopicPartition
from console.kafka import share_groups as share
from tests.share_members import ShareMembers

from .conftest import eventually, unique

pytestmark = [pytest.mark.contract]


@pytest.fixture
def share_on(gw, endpoints):
    before = gw.describe_features().get("share.version")
    level = (before.finalized_max or 0) if before else 0
    if level < 1:
        errors = gw.update_features({"share.version": 1}, "upgrade", validate_only=False)
        assert not any(errors.values()), errors
        eventually(lambda: gw.describe_features()["share.version"].finalized_max == 1)
    yield
    if level < 1 and not endpoints.real:
        gw.update_features({"share.version": 0}, "safe-downgrade", validate_only=False)


@pytest.fixture
def members(endpoints):
    m = ShareMembers(endpoints.bootstrap_servers)
    yield m
    m.close()


def _listed(gw, group):
    return next((g for g in share.list_groups(gw) if g.group_id == group), None)


def test_a_share_group_lists_describes_and_refuses_changes_while_a_member_is_there(
    gw, share_on, members, topics
):
    topic, group = topics.create(partitions=2), unique("sg")
    member = members.join(group, [topic])
    for i in range(3):
        gw.produce_record(topic, partition=0, key=None, value=f"r{i}".encode())
    listed = eventually(lambda: _listed(gw, group))
    assert listed is not None and listed.state == "Stable"
    assert group not in {g.group_id for g in gw.list_consumer_groups()}
    d = eventually(
        lambda: share.describe(gw, [group])[group],
        lambda d: not isinstance(d, KafkaOperationError) and d.members and d.members[0].assignment,
    )
    (m,) = d.members
    assert (d.state, d.assignor, m.member_id, m.subscribed) == ("Stable", "simple", member, (topic,))
    assert set(m.assignment) == {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    assert d.coordinator == listed.coordinator and m.client_host
    starts = share.offsets(gw, [group])[group]
    assert isinstance(starts, dict) and set(starts) <= {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    assert all(v == -1 or 0 <= v <= 3 for v in starts.values()), starts
    nobody = unique("sg-none")
    missing = share.describe(gw, [nobody])[nobody]
    assert isinstance(missing, KafkaOperationError) and missing.name == "GROUP_ID_NOT_FOUND"
    assert share.offsets(gw, [nobody])[nobody] == {}
    busy = share.delete_groups(gw, [group])[group]
    assert isinstance(busy, KafkaOperationError) and busy.name == "NON_EMPTY_GROUP"
    busy = share.delete_offsets(gw, group, [topic])[topic]
    assert isinstance(busy, KafkaOperationError) and busy.name == "NON_EMPTY_GROUP"
    # Kafka 4.1 answers AlterShareGroupOffsets with success and applies nothing
    answered = share.alter_offsets(gw, group, {TopicPartition(topic, 0): 1})
    assert answered == {TopicPartition(topic, 0): answered[TopicPartition(topic, 0)]}
    assert not isinstance(answered[TopicPartition(topic, 0)], KafkaOperationError)
    assert share.offsets(gw, [group])[group] == starts
    unknown = share.alter_offsets(gw, group, {TopicPartition(unique("nt"), 0): 1})
    assert [e.name for e in unknown.values()] == ["UNKNOWN_TOPIC_OR_PARTITION"]

    members.leave(group, member)
    d = eventually(lambda: share.describe(gw, [group])[group], lambda d: d.state == "Empty")
    assert (d.state, d.members) == ("Empty", ())
    nt = unique("nt")
    gone = share.delete_offsets(gw, group, [nt])[nt]
    assert isinstance(gone, KafkaOperationError) and gone.name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert share.delete_groups(gw, [group])[group].__class__.__name__ == "Ok"
    after = share.describe(gw, [group])[group]
    assert isinstance(after, KafkaOperationError) and after.name == "GROUP_ID_NOT_FOUND"
    assert _listed(gw, group) is None
