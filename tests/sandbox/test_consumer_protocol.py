"""Consumer groups of both kinds with real clients: KIP-848 (``group.protocol=consumer``,
ConsumerGroupHeartbeat / ConsumerGroupDescribe) and classic (JoinGroup / SyncGroup); the group
APIs an operator's console uses on them (ListGroups v5, DescribeGroups, OffsetFetch,
OffsetCommit, OffsetDelete, DeleteGroups) answer as Kafka 4.1 does (tests/sandbox/group_probe.py
runs the same calls against a real Kafka)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from kafka.protocol.admin import DeleteGroupsRequest, DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.consumer import OffsetDeleteRequest, OffsetFetchRequest
from kafka.protocol.metadata import ApiVersionsRequest, FindCoordinatorRequest

from sandbox import SandboxCluster
from sandbox.protocol import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from sandbox.testing import running_sandbox
from tests.sandbox import group_requests
from tests.sandbox.conftest import call

pytestmark = []

PARTITIONS, RECORDS = 4, 40
# heartbeats every 200 ms (Kafka's default is 5 s) keep rebalances quick
FAST = {"group.consumer.heartbeat.interval.ms": "200"}


@pytest.fixture(scope="module")
def kafka() -> Iterator[SandboxCluster]:
    with running_sandbox(brokers=3, controllers=1, speed=0, broker_properties=FAST) as c:
        yield c


@pytest.fixture
def topic(kafka: SandboxCluster) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(name, PARTITIONS, 1)
    p = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for i in range(RECORDS):
        p.produce(name, f"m{i}".encode(), partition=i % PARTITIONS)
    assert p.flush(10) == 0
    return name


def _group() -> str:
    return f"g-{uuid.uuid4().hex[:8]}"


def _consumer(kafka: SandboxCluster, group: str, protocol: str) -> Consumer:
    conf = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "group.id": group,
        "group.protocol": protocol,
        "client.id": f"{protocol}-client",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    if protocol == "classic":
        conf.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 200})
    return Consumer(conf)


def _consume(c: Consumer, n: int = RECORDS, limit: float = 20) -> int:
    got, deadline = 0, time.monotonic() + limit
    while got < n and time.monotonic() < deadline:
        m = c.poll(0.1)
        if m is not None and not m.error():
            got += 1
    return got


def _until(check: Callable[[], bool], consumers: list[Consumer], limit: float = 20) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(0.05)
        if check():
            return True
    return False


def _coordinator(kafka: SandboxCluster, group: str) -> str:
    r = call(
        kafka.bootstrap_servers.split(",")[0], FindCoordinatorRequest(key_type=0, coordinator_keys=[group]), 4
    )
    c = r.coordinators[0]
    return f"{c.host}:{c.port}"


def _cg_describe(kafka: SandboxCluster, group: str) -> object:
    req = ConsumerGroupDescribeRequest(group_ids=[group], include_authorized_operations=False)
    return call(_coordinator(kafka, group), req, 1, response_cls=ConsumerGroupDescribeResponse).groups[0]


def _heartbeat(kafka: SandboxCluster, group: str, topic: str, **fields: object) -> object:
    return call(
        _coordinator(kafka, group),
        group_requests.heartbeat(group, topic, **fields),
        1,
        response_cls=ConsumerGroupHeartbeatResponse,
    )


def _again(kafka: SandboxCluster, group: str, topic: str, member: str, epoch: int, owned: object) -> object:
    """A member's later heartbeat: same rebalance timeout and subscription (-1, None: unchanged),
    reporting the partitions it owns."""
    return _heartbeat(
        kafka,
        group,
        topic,
        member_id=member,
        member_epoch=epoch,
        rebalance_timeout_ms=-1,
        subscribed_topic_names=None,
        topic_partitions=owned,
    )


def _owned(resp: object) -> list[object]:
    tp = ConsumerGroupHeartbeatRequest.TopicPartitions
    return [tp(topic_id=x.topic_id, partitions=list(x.partitions)) for x in resp.assignment.topic_partitions]


def _partitions(resp: object) -> int:
    return sum(len(x.partitions) for x in resp.assignment.topic_partitions) if resp.assignment else -1


def test_it_advertises_the_group_apis_as_kafka_4_1(kafka):
    resp = call(
        kafka.bootstrap_servers.split(",")[0],
        ApiVersionsRequest(client_software_name="t", client_software_version="1"),
        3,
    )
    keys = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert keys[68] == (0, 1) and keys[69] == (0, 1)  # ConsumerGroupHeartbeat, ConsumerGroupDescribe
    assert (
        keys[47] == (0, 0) and keys[16] == (0, 5) and keys[15] == (0, 6)
    )  # OffsetDelete, ListGroups, DescribeGroups


@pytest.mark.parametrize("protocol", ["consumer", "classic"])
def test_a_consumer_joins_consumes_commits_is_listed_and_described_and_leaves(kafka, topic, protocol):
    group = _group()
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    c = _consumer(kafka, group, protocol)
    c.subscribe([topic])
    assert _consume(c) == RECORDS
    assert sorted(tp.partition for tp in c.assignment()) == [0, 1, 2, 3]
    c.commit(asynchronous=False)
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(10)
    assert sorted((tp.partition, tp.offset) for tp in offsets.topic_partitions) == [(i, 10) for i in range(4)]
    kind = ConsumerGroupType.CONSUMER if protocol == "consumer" else ConsumerGroupType.CLASSIC
    listed = {g.group_id: g for g in admin.list_consumer_groups().result(10).valid}
    assert listed[group].type == kind and listed[group].state == ConsumerGroupState.STABLE
    desc = admin.describe_consumer_groups([group])[group].result(10)
    assert desc.type == kind and desc.state == ConsumerGroupState.STABLE
    [member] = desc.members
    assert member.client_id == f"{protocol}-client" and member.host == "/127.0.0.1"
    assert sorted(tp.partition for tp in member.assignment.topic_partitions) == [0, 1, 2, 3]
    c.close()
    after = {g.group_id: g for g in admin.list_consumer_groups().result(10).valid}[group]
    assert after.state == ConsumerGroupState.EMPTY and after.type == kind
    assert admin.describe_consumer_groups([group])[group].result(10).members == []


def test_two_consumer_protocol_members_split_the_partitions_and_rebalance_when_one_leaves(kafka, topic):
    group = _group()
    a = _consumer(kafka, group, "consumer")
    a.subscribe([topic])
    assert _until(lambda: len(a.assignment()) == PARTITIONS, [a])
    b = _consumer(kafka, group, "consumer")
    b.subscribe([topic])
    overlaps: list[set[int]] = []

    def split() -> bool:
        mine, theirs = {tp.partition for tp in a.assignment()}, {tp.partition for tp in b.assignment()}
        if mine & theirs:  # KIP-848: a partition is revoked before it is handed to another member
            overlaps.append(mine & theirs)
        return len(mine) == len(theirs) == 2 and mine | theirs == {0, 1, 2, 3}

    assert _until(split, [a, b]), (a.assignment(), b.assignment())
    assert not overlaps
    assert _until(lambda: _cg_describe(kafka, group).group_state == "Stable", [a, b])
    desc = _cg_describe(kafka, group)
    assert (desc.group_epoch, desc.assignment_epoch, desc.assignor_name) == (2, 2, "uniform")
    assert sorted(sum(len(tp.partitions) for tp in m.assignment.topic_partitions) for m in desc.members) == [
        2,
        2,
    ]
    assert all(m.member_epoch == 2 and m.member_type == 1 for m in desc.members)
    b.close()
    assert _until(lambda: len(a.assignment()) == PARTITIONS, [a])
    assert _until(lambda: _cg_describe(kafka, group).group_state == "Stable", [a])
    desc = _cg_describe(kafka, group)
    assert desc.group_epoch == 3 and len(desc.members) == 1
    a.close()
    assert _cg_describe(kafka, group).group_state == "Empty"


def _offset_delete(kafka: SandboxCluster, group: str, topics: dict[str, list[int]]) -> tuple[int, dict]:
    t = OffsetDeleteRequest.OffsetDeleteRequestTopic
    req = OffsetDeleteRequest(
        group_id=group,
        topics=[
            t(name=n, partitions=[t.OffsetDeleteRequestPartition(partition_index=p) for p in ps])
            for n, ps in topics.items()
        ],
    )
    r = call(_coordinator(kafka, group), req, 0)
    return r.error_code, {(x.name, p.partition_index): p.error_code for x in r.topics for p in x.partitions}


def _delete_group(kafka: SandboxCluster, group: str) -> int:
    return (
        call(_coordinator(kafka, group), DeleteGroupsRequest(groups_names=[group]), 2).results[0].error_code
    )


def _admin_commit(kafka: SandboxCluster, group: str, topic: str, **member: object) -> int:
    version = int(member.pop("version", 9))  # type: ignore[call-overload]
    req = group_requests.offset_commit(group, topic, 0, 3, **member)
    return call(_coordinator(kafka, group), req, version).topics[0].partitions[0].error_code


@pytest.mark.parametrize("protocol", ["consumer", "classic"])
def test_offset_delete_delete_groups_and_outside_commits_are_refused_while_the_group_has_members(
    kafka, topic, protocol
):
    other = f"o-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(other, 1, 1)
    group = _group()
    c = _consumer(kafka, group, protocol)
    c.subscribe([topic])
    assert _consume(c) == RECORDS
    c.commit(asynchronous=False)
    assert _admin_commit(kafka, group, other) == 25  # an outsider's commit: UNKNOWN_MEMBER_ID
    code, parts = _offset_delete(kafka, group, {topic: [0, 1], other: [0], "missing-topic": [0]})
    assert code == 0
    assert parts == {
        (topic, 0): 86,
        (topic, 1): 86,
        (other, 0): 0,
        ("missing-topic", 0): 3,
    }  # GROUP_SUBSCRIBED_TO_TOPIC
    assert _delete_group(kafka, group) == 68  # NON_EMPTY_GROUP
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    req = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 0)])
    try:  # the admin client's reset is refused: librdkafka reports it on the partition
        out = admin.alter_consumer_group_offsets([req])[group].result(10)
        assert "UNKNOWN_MEMBER_ID" in str(out.topic_partitions[0].error)
    except KafkaException as exc:
        assert "UNKNOWN_MEMBER_ID" in str(exc)
    c.close()
    assert _admin_commit(kafka, group, topic) == 0  # nobody left: the reset is accepted
    assert _offset_delete(kafka, group, {topic: [0, 1]}) == (0, {(topic, 0): 0, (topic, 1): 0})
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(10)
    assert sorted((tp.partition, tp.offset) for tp in offsets.topic_partitions) == [(2, 10), (3, 10)]
    assert _delete_group(kafka, group) == 0
    assert _delete_group(kafka, group) == 69  # GROUP_ID_NOT_FOUND
    assert _offset_delete(kafka, group, {topic: [0]}) == (69, {})


def test_a_classic_group_with_members_that_is_not_a_consumer_refuses_offset_delete_as_a_whole(kafka, topic):
    # e.g. a Connect worker group: ClassicGroup.validateOffsetDelete says NON_EMPTY_GROUP
    group = _group()
    kafka.add_group(group, {"c1": [(topic, 0)]}, {(topic, 0): 1})
    kafka.state.groups[group].protocol_type = "connect"
    assert _offset_delete(kafka, group, {topic: [0]}) == (68, {})
    kafka.state.groups[group].protocol_type = "consumer"
    assert _offset_delete(kafka, group, {topic: [0, 1]}) == (0, {(topic, 0): 86, (topic, 1): 86})


def test_list_groups_v5_filters_by_type_and_state_and_describe_groups_does_not_describe_consumer_groups(
    kafka, topic
):
    new, old = _group(), _group()
    a, c = _consumer(kafka, new, "consumer"), _consumer(kafka, old, "classic")
    a.subscribe([topic])
    c.subscribe([topic])
    assert _until(lambda: len(a.assignment()) == PARTITIONS and len(c.assignment()) == PARTITIONS, [a, c])
    assert _until(lambda: _cg_describe(kafka, new).group_state == "Stable", [a, c])

    def listed(states: list[str], types: list[str]) -> list[tuple[str, str, str, str]]:
        out = []
        for b in kafka.bootstrap_servers.split(","):
            for g in call(b, ListGroupsRequest(states_filter=states, types_filter=types), 5).groups:
                if g.group_id in (new, old):
                    out.append((g.group_id, g.protocol_type, g.group_state, g.group_type))
        return sorted(out)

    both = sorted([(new, "consumer", "Stable", "consumer"), (old, "consumer", "Stable", "classic")])
    assert listed([], []) == both
    assert listed([], ["CONSUMER"]) == [(new, "consumer", "Stable", "consumer")]
    assert listed([], ["classic"]) == [(old, "consumer", "Stable", "classic")]
    assert listed(["STABLE "], []) == both and listed(["empty"], []) == [] and listed([], ["share"]) == []
    co = _coordinator(kafka, new)
    v6 = call(co, DescribeGroupsRequest(groups=[new], include_authorized_operations=False), 6).groups[0]
    assert (v6.error_code, v6.error_message, v6.group_state) == (
        69,
        f"Group {new} is not a classic group.",
        "Dead",
    )
    v5 = call(co, DescribeGroupsRequest(groups=[new], include_authorized_operations=False), 5).groups[0]
    assert (v5.error_code, v5.group_state, v5.members) == (0, "Dead", [])
    classic = _cg_describe(kafka, old)
    assert (classic.error_code, classic.error_message) == (69, f"Group {old} is not a consumer group.")
    a.close()
    c.close()
    assert listed(["empty"], []) == sorted(
        [(new, "consumer", "Empty", "consumer"), (old, "consumer", "Empty", "classic")]
    )


def test_heartbeats_check_the_request_the_member_and_its_epoch(kafka, topic):
    group = _group()
    me, stranger = str(uuid.uuid4()), str(uuid.uuid4())
    bad = _heartbeat(kafka, group, topic, member_id="")
    assert (bad.error_code, bad.error_message) == (42, "MemberId can't be empty.")
    bad = _heartbeat(kafka, group, topic, member_id=me, rebalance_timeout_ms=-1)
    assert (bad.error_code, bad.error_message) == (
        42,
        "RebalanceTimeoutMs must be provided in first request.",
    )
    bad = _heartbeat(kafka, group, topic, member_id=me, server_assignor="sticky")
    assert bad.error_code == 112  # UNSUPPORTED_ASSIGNOR
    bad = _heartbeat(kafka, group, topic, member_id=me, member_epoch=3)
    assert (bad.error_code, bad.error_message) == (69, f"Consumer group {group} not found.")
    joined = _heartbeat(kafka, group, topic, member_id=me)
    assert (joined.error_code, joined.member_id, joined.member_epoch, _partitions(joined)) == (
        0,
        me,
        1,
        PARTITIONS,
    )
    assert joined.heartbeat_interval_ms == 200
    unknown = _heartbeat(kafka, group, topic, member_id=stranger, member_epoch=1)
    assert (unknown.error_code, unknown.error_message) == (
        25,
        f"Member {stranger} is not a member of group {group}.",
    )
    assert (
        _heartbeat(kafka, group, topic, member_id=me, member_epoch=9).error_code == 110
    )  # FENCED_MEMBER_EPOCH
    same = _again(kafka, group, topic, me, 1, None)
    assert (same.error_code, same.member_epoch, same.assignment) == (
        0,
        1,
        None,
    )  # nothing changed: no assignment
    # the member's commits and fetches carry its epoch
    assert _admin_commit(kafka, group, topic, generation_id_or_member_epoch=1, member_id=me) == 0
    assert (
        _admin_commit(kafka, group, topic, generation_id_or_member_epoch=5, member_id=me) == 113
    )  # STALE_MEMBER_EPOCH
    assert _admin_commit(kafka, group, topic, generation_id_or_member_epoch=1, member_id=me, version=8) == 35
    fg = OffsetFetchRequest.OffsetFetchRequestGroup
    fetched = call(
        _coordinator(kafka, group),
        OffsetFetchRequest(
            groups=[fg(group_id=group, member_id=me, member_epoch=2, topics=None)], require_stable=False
        ),
        9,
    )
    assert fetched.groups[0].error_code == 113
    left = _heartbeat(kafka, group, topic, member_id=me, member_epoch=-1)
    assert (left.error_code, left.member_epoch, left.heartbeat_interval_ms) == (0, -1, 0)
    assert _heartbeat(kafka, group, topic, member_id=me, member_epoch=-1).error_code == 25
    desc = _cg_describe(kafka, group)
    assert (desc.group_state, desc.group_epoch, desc.assignment_epoch, desc.members) == ("Empty", 2, 1, [])


def test_partitions_move_only_after_their_owner_revokes_them(kafka, topic):
    group = _group()
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    first = _heartbeat(kafka, group, topic, member_id=a)
    assert _partitions(first) == 4
    second = _heartbeat(kafka, group, topic, member_id=b)
    assert (second.member_epoch, _partitions(second)) == (2, 0)  # its target partitions are still a's
    desc = _cg_describe(kafka, group)
    assert desc.group_state == "Reconciling"
    # a hears about the new epoch: it keeps two partitions and must give up the other two
    told = _again(kafka, group, topic, a, 1, _owned(first))
    assert (told.member_epoch, _partitions(told)) == (1, 2)
    again = _again(kafka, group, topic, b, 2, [])
    assert _partitions(again) == -1  # still nothing free: no new assignment
    done = _again(kafka, group, topic, a, 1, _owned(told))
    assert (done.member_epoch, done.assignment) == (2, None)  # revoked: a moves to epoch 2
    got = _again(kafka, group, topic, b, 2, [])
    assert (got.member_epoch, _partitions(got)) == (2, 2)
    _again(kafka, group, topic, b, 2, _owned(got))
    assert _cg_describe(kafka, group).group_state == "Stable"


def test_members_that_stop_heartbeating_or_do_not_revoke_in_time_are_fenced(kafka, topic):
    group = _group()
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    first = _heartbeat(kafka, group, topic, member_id=a, rebalance_timeout_ms=1000)
    _heartbeat(kafka, group, topic, member_id=b)
    told = _again(kafka, group, topic, a, 1, _owned(first))
    assert _partitions(told) == 2
    members = kafka.state.groups[group].consumers
    assert members[a].state == "unrevoked_partitions" and members[a].revoke_deadline is not None
    members[a].revoke_deadline -= 2  # its rebalance timeout (1 s) passed without the revocation
    desc = _cg_describe(kafka, group)
    assert [m.member_id for m in desc.members] == [b] and desc.group_epoch == 3
    got = _again(kafka, group, topic, b, 2, [])
    assert (got.member_epoch, _partitions(got)) == (3, 4)
    members[b].last_seen -= 46  # group.consumer.session.timeout.ms (45 s) without a heartbeat
    desc = _cg_describe(kafka, group)
    assert (desc.group_state, desc.members, desc.group_epoch) == ("Empty", [], 4)


def test_an_empty_group_made_by_an_offset_reset_becomes_a_consumer_group_and_keeps_its_offsets(kafka, topic):
    group = _group()
    assert _admin_commit(kafka, group, topic) == 0
    listed = [
        (g.protocol_type, g.group_state, g.group_type)
        for b in kafka.bootstrap_servers.split(",")
        for g in call(b, ListGroupsRequest(states_filter=[], types_filter=[]), 5).groups
        if g.group_id == group
    ]
    assert listed == [("", "Empty", "classic")]  # a "simple" group: no protocol type
    c = _consumer(kafka, group, "consumer")
    c.subscribe([topic])
    assert _consume(c, RECORDS - 3) == RECORDS - 3  # partition 0 starts at the committed offset 3
    assert kafka.state.groups[group].type == "consumer"
    c.close()


def test_synthetic_consumer_groups_are_listed_described_and_survive_a_restart(tmp_path):
    path = str(tmp_path / "state.json")
    with running_sandbox(brokers=1, controllers=0, speed=0, state_file=path) as kafka:
        kafka.create_topic("flow", 2, 1)
        kafka.produce_synthetic("flow", 100 * 1024)
        kafka.add_group(
            "new",
            {"c1": [("flow", 0)], "c2": [("flow", 1)]},
            {("flow", 0): 0},
            consume_ratio=1.0,
            protocol="consumer",
        )
        kafka.add_group("old", {"c1": [("flow", 0)]}, {("flow", 0): 0})
        kafka.advance(0.1)
        kafka.advance(10)
        assert kafka.state.groups["new"].offsets[("flow", 0)] > 0  # consumption follows the clock
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        listed = {g.group_id: (g.type, g.state) for g in admin.list_consumer_groups().result(10).valid}
        assert listed == {
            "new": (ConsumerGroupType.CONSUMER, ConsumerGroupState.STABLE),
            "old": (ConsumerGroupType.CLASSIC, ConsumerGroupState.STABLE),
        }
        desc = _cg_describe(kafka, "new")
        assert (desc.group_state, desc.group_epoch, desc.assignment_epoch) == ("Stable", 1, 1)
        assert sorted(
            (m.client_id, [tp.partitions for tp in m.assignment.topic_partitions]) for m in desc.members
        ) == [
            ("c1", [[0]]),
            ("c2", [[1]]),
        ]
        kafka.state.groups["new"].consumers[desc.members[0].member_id].last_seen -= 10**6
        assert len(_cg_describe(kafka, "new").members) == 2  # synthetic members never time out
    with running_sandbox(brokers=1, controllers=0, speed=0, state_file=path) as kafka:
        desc = _cg_describe(kafka, "new")
        assert (desc.group_state, len(desc.members)) == ("Stable", 2)


def test_an_empty_group_changes_kind_when_a_member_of_the_other_protocol_joins_and_keeps_its_offsets(
    kafka, topic
):
    group = _group()
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    for protocol, expected in (("consumer", 20), ("classic", 20), ("consumer", 0)):
        c = _consumer(kafka, group, protocol)
        try:
            c.subscribe([topic])
            got = _consume(c, expected, limit=15) if expected else _consume(c, 1, limit=2)
            assert got == expected, protocol
            if got:
                c.commit(asynchronous=False)
        finally:
            c.close()
        kind = ConsumerGroupType.CONSUMER if protocol == "consumer" else ConsumerGroupType.CLASSIC
        assert [g.type for g in admin.list_consumer_groups().result(10).valid if g.group_id == group] == [
            kind
        ]
