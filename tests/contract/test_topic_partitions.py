"""DescribeTopicPartitions (KIP-966): paged answers equal the topics' Metadata, every page size."""

from __future__ import annotations

import pytest

from console.kafka import KafkaOperationError
from console.kafka.topic_partitions import DescribeTopicPartitionsRequest

from .conftest import eventually

pytestmark = pytest.mark.contract


def _as_metadata(described):
    return tuple((p.id, p.leader, p.replicas, p.isr, p.offline_replicas) for p in described.partitions)


def _metadata(gw, name):
    meta = gw.describe_topics([name])[name]
    return tuple((p.id, p.leader, p.replicas, p.isr, p.offline_replicas) for p in meta.partitions)


@pytest.mark.parametrize("page_limit", [1, 2, 3, 2000])
def test_pages_of_any_size_put_together_equal_the_metadata(gw, topics, page_limit):
    a = topics.create(partitions=5)
    b = topics.create(partitions=2)
    eventually(
        lambda: gw.describe_topics([a, b]),
        lambda m: all(not isinstance(v, KafkaOperationError) for v in m.values()),
    )

    got = gw.describe_topic_partitions([b, a, b], page_limit=page_limit)

    assert list(got) == sorted([a, b])  # by name, each once
    for name in (a, b):
        assert _as_metadata(got[name]) == _metadata(gw, name)
        assert got[name].topic_id == gw.describe_topics([name])[name].topic_id
        assert not got[name].internal
        assert all(p.leader_epoch >= 0 for p in got[name].partitions)
    assert [p.id for p in got[a].partitions] == [0, 1, 2, 3, 4]


def test_every_topic_when_none_is_named(gw, topics):
    name = topics.create(partitions=3)
    everything = eventually(lambda: gw.describe_topic_partitions(None, page_limit=7), lambda m: name in m)
    assert _as_metadata(everything[name]) == _metadata(gw, name)
    assert list(everything) == sorted(everything)
    assert "__consumer_offsets" not in everything or everything["__consumer_offsets"].internal


def test_an_unknown_topic_is_its_error_beside_the_known_ones(gw, topics):
    name = topics.create(partitions=1)
    eventually(lambda: gw.describe_topics([name])[name], lambda m: not isinstance(m, KafkaOperationError))
    got = gw.describe_topic_partitions([name, "ct-no-such-topic-966"])
    assert got["ct-no-such-topic-966"].name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert _as_metadata(got[name]) == _metadata(gw, name)


def test_the_broker_answers_one_page_and_a_cursor_to_the_first_partition_left_out(gw, topics):
    """The wire answer itself, as Kafka's KRaftMetadataCache writes it: a topic cut after the
    limit names itself and the next partition; a limit used up at a topic's end names the next
    topic at 0; a named request must name the cursor's topic (INVALID_REQUEST otherwise)."""
    a = topics.create(partitions=3)
    b = topics.create(partitions=2)
    first, second = sorted([a, b])
    eventually(
        lambda: gw.describe_topics([a, b]),
        lambda m: all(not isinstance(v, KafkaOperationError) for v in m.values()),
    )
    T, C = DescribeTopicPartitionsRequest.TopicRequest, DescribeTopicPartitionsRequest.Cursor
    sizes = {a: 3, b: 2}

    def ask(limit, cursor=None, names=(a, b)):
        return gw._kp.send(
            DescribeTopicPartitionsRequest(
                topics=[T(name=n) for n in names], response_partition_limit=limit, cursor=cursor
            )
        )

    cut = ask(sizes[first] - 1)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in cut.topics] == [
        (first, list(range(sizes[first] - 1)))
    ]
    assert (cut.next_cursor.topic_name, cut.next_cursor.partition_index) == (first, sizes[first] - 1)

    exact = ask(sizes[first])
    assert [t.name for t in exact.topics] == [first]
    assert (exact.next_cursor.topic_name, exact.next_cursor.partition_index) == (second, 0)

    rest = ask(100, C(topic_name=first, partition_index=1))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in rest.topics] == [
        (first, list(range(1, sizes[first]))),
        (second, list(range(sizes[second]))),
    ]
    assert rest.next_cursor is None

    for limit in (0, -1):  # as one (what a real 4.1 broker does)
        one = ask(limit)
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in one.topics] == [(first, [0])]
        assert (one.next_cursor.topic_name, one.next_cursor.partition_index) == (first, 1)

    refused = ask(100, C(topic_name="ct-not-asked-966", partition_index=0))
    assert sorted((t.name, t.error_code) for t in refused.topics) == sorted([(a, 42), (b, 42)])
