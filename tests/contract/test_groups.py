"""Consumer groups against the sandbox or a real Kafka, with real consumers (confluent-kafka,
``group.protocol=classic`` and ``group.protocol=consumer``, KIP-848): the gateway lists and describes
them, reads their offsets, and Kafka refuses to reset or delete an active group; the groups area
resets each mode once they left, and deletes their offsets and the group. Topics and groups are
named uniquely and removed at the end, so the file runs again on a kept cluster.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CTopicPartition

from console.groups import actions, delete, reads
from console.groups.core import ResetSpec
from console.kafka import GroupDescription, KafkaOperationError, TopicPartition
from console.models import Cluster
from console.topics import cache as metadata_cache
from tests.conftest import make_personas

from .conftest import eventually

pytestmark = pytest.mark.contract

PROTOCOLS = ("classic", "consumer")
PARTITIONS, PER_PARTITION = 3, 10
COMMITS = {0: 4, 1: 7, 2: 10}  # what the consumer commits, per partition
HOUR_MS = 3_600_000


def test_it_reads_back_offsets_committed_for_an_inactive_group(gw, topics):
    topic = topics.create(partitions=2)
    group = f"contract-group-{uuid.uuid4().hex[:8]}"
    tps = {TopicPartition(topic, 0): 0, TopicPartition(topic, 1): 0}  # offset 0 is valid on empty logs
    result = gw.alter_consumer_group_offsets(group, tps)
    try:
        assert all(not isinstance(r, KafkaOperationError) for r in result.values()), result
        listed = {g.group_id: g for g in gw.list_consumer_groups()}
        assert group in listed
        offsets = gw.list_consumer_group_offsets([group, "no-such-group-" + uuid.uuid4().hex[:6]])
        assert offsets[group] == tps
        missing = [v for k, v in offsets.items() if k != group]
        assert len(missing) == 1 and missing[0].name == "GROUP_ID_NOT_FOUND"
    finally:
        gw.delete_consumer_groups([group])


# -- real consumers -------------------------------------------------------------------------------


@pytest.fixture
def produced(gw, topics, endpoints) -> tuple[str, int]:
    """A topic with PER_PARTITION records per partition: the first half stamped two hours ago, the
    second half one hour ago (two flushes, so two batches). Returns (topic, the second half's time)."""
    topic = topics.create(partitions=PARTITIONS)
    producer = Producer(endpoints.client_config())
    now = int(time.time() * 1000)
    for stamp in (now - 2 * HOUR_MS, now - HOUR_MS):
        for p in range(PARTITIONS):
            for i in range(PER_PARTITION // 2):
                producer.produce(topic, f"{p}-{i}".encode(), partition=p, timestamp=stamp)
        assert producer.flush(30) == 0
    ends = eventually(
        lambda: gw.list_offsets([TopicPartition(topic, p) for p in range(PARTITIONS)], "latest"),
        lambda got: all(
            not isinstance(v, KafkaOperationError) and v.offset == PER_PARTITION for v in got.values()
        ),
    )
    assert {tp.partition: v.offset for tp, v in ends.items()} == dict.fromkeys(
        range(PARTITIONS), PER_PARTITION
    )
    return topic, now - HOUR_MS


class Member:
    """A confluent-kafka consumer in ``group`` with the given protocol that read everything and
    committed COMMITS; closed (it leaves the group) by ``leave``."""

    def __init__(self, endpoints, group: str, topic: str, protocol: str) -> None:
        self.client_id = f"contract-{protocol}-{uuid.uuid4().hex[:4]}"
        config = endpoints.client_config(
            **{
                "group.id": group,
                "group.protocol": protocol,
                "client.id": self.client_id,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        self.consumer = Consumer(config)
        self.consumer.subscribe([topic])
        seen, deadline = 0, time.monotonic() + 60
        while seen < PARTITIONS * PER_PARTITION and time.monotonic() < deadline:
            message = self.consumer.poll(0.5)
            if message is not None and not message.error():
                seen += 1
        assert seen == PARTITIONS * PER_PARTITION, f"the {protocol} consumer read {seen} records"
        self.consumer.commit(
            offsets=[CTopicPartition(topic, p, o) for p, o in COMMITS.items()], asynchronous=False
        )
        self.open = True

    def leave(self) -> None:
        if self.open:
            self.consumer.close()
            self.open = False


@pytest.fixture
def member(gw, endpoints, produced) -> Iterator:
    """Start a member of a new group with a protocol: ``member(protocol) -> (Member, group, topic)``."""
    made: list[tuple[Member, str]] = []

    def start(protocol: str) -> tuple[Member, str, str]:
        group = f"contract-{protocol}-{uuid.uuid4().hex[:8]}"
        m = Member(endpoints, group, produced[0], protocol)
        made.append((m, group))
        return m, group, produced[0]

    yield start
    for m, group in made:
        m.leave()
        eventually(
            lambda g=group: gw.delete_consumer_groups([g])[g],
            lambda r: not isinstance(r, KafkaOperationError) or r.name == "GROUP_ID_NOT_FOUND",
        )


def _described(gw, group: str, check) -> GroupDescription:
    got = eventually(
        lambda: gw.describe_consumer_groups([group])[group],
        lambda d: isinstance(d, GroupDescription) and check(d),
    )
    assert isinstance(got, GroupDescription), got
    return got


def _committed(gw, group: str, topic: str) -> dict[int, int]:
    got = gw.list_consumer_group_offsets([group])[group]
    assert not isinstance(got, KafkaOperationError), got
    return {tp.partition: o for tp, o in got.items() if tp.topic == topic}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_live_group_is_listed_described_and_its_offsets_read(gw, member, protocol):
    m, group, topic = member(protocol)
    listed = eventually(lambda: {g.group_id: g for g in gw.list_consumer_groups()}.get(group))
    assert listed is not None and listed.group_type == protocol and listed.state == "Stable"
    everything = {TopicPartition(topic, p) for p in range(PARTITIONS)}
    desc = _described(gw, group, lambda d: {tp for mm in d.members for tp in mm.assignment} == everything)
    assert (desc.group_type, desc.state, len(desc.members)) == (protocol, "Stable", 1)
    [only] = desc.members
    assert only.client_id == m.client_id and only.host and set(only.assignment) == everything
    with_listing = gw.describe_consumer_groups([group], [listed])[group]
    assert isinstance(with_listing, GroupDescription) and with_listing.group_type == protocol
    assert _committed(gw, group, topic) == COMMITS
    one_topic = gw.list_consumer_group_offsets(None, topics={topic: list(range(PARTITIONS))})
    assert {tp.partition: o for tp, o in one_topic[group].items()} == COMMITS


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_kafka_refuses_to_reset_or_delete_an_active_group(gw, member, protocol):
    _, group, topic = member(protocol)
    tp = TopicPartition(topic, 0)
    _described(gw, group, lambda d: len(d.members) == 1)
    commit = gw.alter_consumer_group_offsets(group, {tp: 0})
    assert isinstance(commit[tp], KafkaOperationError) and commit[tp].name == "UNKNOWN_MEMBER_ID", commit
    deleted = gw.delete_consumer_groups([group])[group]
    assert isinstance(deleted, KafkaOperationError) and deleted.name == "NON_EMPTY_GROUP", deleted
    removed = gw.delete_consumer_group_offsets(group, [tp])[tp]
    assert isinstance(removed, KafkaOperationError) and removed.name == "GROUP_SUBSCRIBED_TO_TOPIC", removed
    assert _committed(gw, group, topic) == COMMITS


# -- the groups area on the same cluster ----------------------------------------------------------


@pytest.fixture
def operator(db, endpoints):
    cluster = Cluster.objects.create(
        name="contract-groups", bootstrap_servers=endpoints.bootstrap_servers, request_timeout_s=15
    )
    metadata_cache.clear()
    yield make_personas(cluster)["operator"], cluster
    metadata_cache.clear()


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_area_refuses_a_reset_while_the_consumer_runs_and_names_it(gw, member, operator, protocol):
    actor, cluster = operator
    m, group, _ = member(protocol)
    _described(gw, group, lambda d: len(d.members) == 1)
    with pytest.raises(actions.GroupNotEmpty, match=m.client_id):
        actions.reset_offsets(
            actor=actor, cluster=cluster, group_id=group, spec=ResetSpec("to-earliest"), confirmation=group
        )
    with pytest.raises(actions.GroupNotEmpty, match=m.client_id):
        delete.delete_group(actor=actor, cluster=cluster, group_id=group, confirmation=group)


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_reset_mode_once_the_consumer_left(gw, member, operator, produced, protocol):
    actor, cluster = operator
    m, group, topic = member(protocol)
    m.leave()
    _described(gw, group, lambda d: not d.members)
    by_file = {(topic, 0): 9, (topic, 2): 1}
    cases = [
        (ResetSpec("to-earliest"), {0: 0, 1: 0, 2: 0}),
        (ResetSpec("to-latest", "topic", topic), {0: 10, 1: 10, 2: 10}),
        (ResetSpec("to-offset", "partitions", topic, (1,), value=3), {0: 10, 1: 3, 2: 10}),
        (ResetSpec("shift-by", value=-4), {0: 6, 1: 0, 2: 6}),  # 1: 3-4 is clamped to the log start
        (ResetSpec("to-offset", "topic", topic, value=99), {0: 10, 1: 10, 2: 10}),  # clamped to the end
        (ResetSpec("to-datetime", "topic", topic, value=produced[1]), {0: 5, 1: 5, 2: 5}),
        (ResetSpec("from-file", file_offsets=by_file), {0: 9, 1: 5, 2: 1}),
    ]
    for spec, expected in cases:
        preview = actions.preview_reset(actor=actor, cluster=cluster, group_id=group, spec=spec)
        assert preview.blocked == ""
        planned = {r.partition: r.new for r in preview.plan.rows}
        assert planned == {p: o for p, o in expected.items() if p in planned}, spec.describe()
        result = actions.reset_offsets(
            actor=actor, cluster=cluster, group_id=group, spec=spec, confirmation=group
        )
        assert result.all_ok, (spec.describe(), result.failed)
        assert _committed(gw, group, topic) == expected, spec.describe()
    detail = reads.group_detail(actor=actor, cluster=cluster, group_id=group)
    assert detail.total_lag == 1 + 5 + 9 and detail.group.group_type == protocol


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_offsets_and_then_the_group_are_deleted_once_the_consumer_left(gw, member, operator, protocol):
    actor, cluster = operator
    m, group, topic = member(protocol)
    m.leave()
    _described(gw, group, lambda d: not d.members)
    result = delete.delete_offsets(
        actor=actor, cluster=cluster, group_id=group, topic=topic, confirmation=group
    )
    assert [(o.partition, o.ok) for o in result.outcomes] == [(0, True), (1, True), (2, True)]
    assert _committed(gw, group, topic) == {}
    done = delete.delete_group(actor=actor, cluster=cluster, group_id=group, confirmation=group)
    assert (done.ok, done.status) == (True, "deleted")
    assert group not in {g.group_id for g in gw.list_consumer_groups()}
    gone = gw.describe_consumer_groups([group])[group]
    assert isinstance(gone, KafkaOperationError) and gone.name == "GROUP_ID_NOT_FOUND"
