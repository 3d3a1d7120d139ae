"""The batched group reads the topic page's groups section relies on, against the sandbox or a real
Kafka: one OffsetFetch (v8+, KIP-709) carries many groups, and answers a group asked for no topic
with exactly what it committed, as the form naming the topic's partitions answers (less every
partition it did not commit); one FindCoordinator (v4+, KIP-699) names the coordinator of many
groups, the broker whose ListGroups lists them. Groups are made by admin commits (empty groups),
named uniquely and deleted at the end, so the file runs again on a kept cluster.
"""

from __future__ import annotations

import pytest

from console.kafka import GroupDescription, KafkaOperationError, TopicPartition
from console.kafka import groups as kafka_groups

from .conftest import eventually, unique

pytestmark = pytest.mark.contract

PARTITIONS = 4


@pytest.fixture
def committed(gw, topics):
    """A topic of 4 partitions, another topic, and three empty groups: one committed on two of the
    topic's partitions (and the other topic), one on one partition, one on the other topic only.
    Returns (topic, {group: {partition: offset} on the topic}, {group: offsets committed in all})."""
    topic, other = topics.create(partitions=PARTITIONS), topics.create(partitions=1)
    commits = {
        unique("ct-two"): {
            TopicPartition(topic, 0): 5,
            TopicPartition(topic, 1): 7,
            TopicPartition(other, 0): 3,
        },
        unique("ct-one"): {TopicPartition(topic, 3): 9},
        unique("ct-other"): {TopicPartition(other, 0): 1},
    }
    try:
        for group, offsets in commits.items():
            result = gw.alter_consumer_group_offsets(group, offsets)
            assert all(not isinstance(r, KafkaOperationError) for r in result.values()), result
        on_topic = {
            g: {tp.partition: o for tp, o in offs.items() if tp.topic == topic} for g, offs in commits.items()
        }
        yield topic, on_topic, {g: len(offs) for g, offs in commits.items()}
    finally:
        gw.delete_consumer_groups(list(commits))


def _listed(gw, groups) -> list:
    listings = eventually(
        lambda: [g for g in gw.list_consumer_groups() if g.group_id in groups],
        lambda got: len(got) == len(groups),
    )
    assert sorted(g.group_id for g in listings) == sorted(groups)
    return listings


def test_one_offset_fetch_answers_for_many_groups_in_either_form(gw, committed, monkeypatch):
    topic, expected, counts = committed
    listings = _listed(gw, expected)

    named = gw.topic_committed_offsets(topic, range(PARTITIONS), listings)
    monkeypatch.setattr(kafka_groups, "TOPIC_OFFSETS_BUDGET", 0)  # ask each group for everything it committed
    everything = gw.topic_committed_offsets(topic, range(PARTITIONS), listings)

    assert named == everything == expected
    whole = gw.list_consumer_group_offsets(list(expected), listings=listings)  # no topic named
    assert {g: len(offs) for g, offs in whole.items()} == counts


def test_one_find_coordinator_names_the_broker_that_lists_each_group(gw, committed):
    _, expected, _ = committed
    listings = {g.group_id: g.coordinator for g in _listed(gw, expected)}

    described = gw.describe_consumer_groups(list(expected))  # no listings: one batched FindCoordinator

    assert all(isinstance(d, GroupDescription) for d in described.values()), described
    assert {g: d.coordinator for g, d in described.items()} == listings
