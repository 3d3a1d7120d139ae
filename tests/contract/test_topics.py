"""CreateTopics / DescribeTopics / DeleteTopics / CreatePartitions / ListOffsets contract."""

from __future__ import annotations

import pytest

from console.kafka import KafkaOperationError, NewPartitions, NewTopic, Ok, TopicMetadata, TopicPartition

from .conftest import describe, eventually, unique

pytestmark = pytest.mark.contract


def _err(result: object) -> str:
    assert isinstance(result, KafkaOperationError), f"expected an error, got {result!r}"
    return result.name


def test_create_describe_delete(gw, topics, broker_ids):
    name = topics.name()
    res = gw.create_topics([NewTopic(name, 3, 2, configs={"retention.ms": "3600000"})])
    assert res == {name: Ok()}
    desc = eventually(
        lambda: gw.describe_topics([name])[name], lambda r: not isinstance(r, KafkaOperationError)
    )
    assert not isinstance(desc, KafkaOperationError)
    assert desc.name == name and not desc.internal
    assert [p.id for p in desc.partitions] == [0, 1, 2]
    for p in desc.partitions:
        assert len(p.replicas) == 2 and len(set(p.replicas)) == 2
        assert set(p.replicas) <= set(broker_ids)
    assert desc.replication_factor == 2
    md = eventually(gw.list_topics_metadata, lambda m: any(t.name == name for t in m.topics))
    assert any(t.name == name and len(t.partitions) == 3 for t in md.topics)
    assert gw.delete_topics([name]) == {name: Ok()}
    gone = eventually(lambda: gw.describe_topics([name])[name], lambda r: isinstance(r, KafkaOperationError))
    assert _err(gone) == "UNKNOWN_TOPIC_OR_PARTITION"


def test_whole_metadata_topic_equals_its_described_partitions_and_counts(gw, topics, broker_ids):
    """``list_topics_metadata``'s packed topic reads back the partitions ``describe_topics`` reports
    (ids, leaders, replicas, ISR, offline replicas), and its health figures are theirs."""
    rf = min(2, len(broker_ids))
    name = topics.create(partitions=4, replication_factor=rf)

    def both():
        described = gw.describe_topics([name])[name]
        listed = gw.list_topics_metadata().topics.by_name.get(name)
        return described, listed

    def settled(pair):
        described, listed = pair
        return (
            not isinstance(described, KafkaOperationError)
            and listed is not None
            and listed.partitions == described.partitions
        )

    described, listed = eventually(both, settled)
    assert [p.id for p in listed.partitions] == [0, 1, 2, 3]
    health = listed.health()
    parts = described.partitions
    assert health.partitions == 4 and health.replication_factor == rf
    assert health.under_replicated == sum(len(p.isr) < len(p.replicas) for p in parts)
    assert health.offline == sum(p.leader < 0 for p in parts)
    assert health == TopicMetadata(name, parts).health()


def test_validate_only_creates_nothing(gw, topics):
    name = topics.name()
    assert gw.create_topics([NewTopic(name, 2, 1)], validate_only=True) == {name: Ok()}
    assert _err(gw.describe_topics([name])[name]) == "UNKNOWN_TOPIC_OR_PARTITION"


def test_validate_only_reports_errors(gw, topics):
    existing = topics.create()
    res = gw.create_topics([NewTopic(existing, 1, 1), NewTopic(topics.name(), 1, 99)], validate_only=True)
    assert [_err(r) for r in res.values()] == ["TOPIC_ALREADY_EXISTS", "INVALID_REPLICATION_FACTOR"]


def test_explicit_replica_assignment(gw, topics, broker_ids):
    a, b = broker_ids[0], broker_ids[1]
    name = topics.create(replica_assignment=((a, b), (b, a)))
    desc = describe(gw, name)
    assert [p.replicas for p in desc.partitions] == [(a, b), (b, a)]
    assert [p.leader for p in desc.partitions] == [a, b]


def test_per_topic_errors_are_independent(gw, topics, broker_ids):
    existing = topics.create()
    good = topics.name()
    specs = [
        NewTopic(good, 1, 1),
        NewTopic(existing, 1, 1),
        NewTopic(topics.name(), 0, 1),
        NewTopic(topics.name(), 1, len(broker_ids) + 1),
        NewTopic(topics.name(), replica_assignment=((broker_ids[0], broker_ids[0]),)),
        NewTopic(topics.name(), 1, 1, configs={"no.such.config": "1"}),
        NewTopic(topics.name(), 1, 1, configs={"retention.ms": "not-a-number"}),
        NewTopic("bad name!", 1, 1),
    ]
    res = gw.create_topics(specs)
    assert list(res) == [s.name for s in specs]
    assert res[good] == Ok()
    names = [_err(res[s.name]) for s in specs[1:]]
    assert names == [
        "TOPIC_ALREADY_EXISTS",
        "INVALID_PARTITIONS",
        "INVALID_REPLICATION_FACTOR",
        "INVALID_REPLICA_ASSIGNMENT",
        "INVALID_CONFIG",
        "INVALID_CONFIG",
        "INVALID_TOPIC_EXCEPTION",
    ]
    for s in specs[1:]:
        assert res[s.name].message and res[s.name].operator_text


def test_invalid_topic_names(gw, topics):
    res = gw.create_topics([NewTopic(".", 1, 1), NewTopic("..", 1, 1), NewTopic("x" * 250, 1, 1)])
    assert {_err(r) for r in res.values()} == {"INVALID_TOPIC_EXCEPTION"}


def test_assignment_to_unknown_broker(gw, topics, broker_ids):
    res = gw.create_topics([NewTopic(topics.name(), replica_assignment=((max(broker_ids) + 100,),))])
    assert _err(next(iter(res.values()))) == "INVALID_REPLICA_ASSIGNMENT"


def test_delete_unknown_topic(gw):
    name = unique("missing")
    assert _err(gw.delete_topics([name])[name]) == "UNKNOWN_TOPIC_OR_PARTITION"


def test_describe_unknown_topic(gw, topics):
    known = topics.create()
    name = unique("missing")
    describe(gw, known)
    res = gw.describe_topics([known, name])
    assert not isinstance(res[known], KafkaOperationError)
    assert _err(res[name]) == "UNKNOWN_TOPIC_OR_PARTITION"


def test_create_partitions(gw, topics, broker_ids):
    name = topics.create(partitions=1)
    assert gw.create_partitions([NewPartitions(name, 3)], validate_only=True) == {name: Ok()}
    assert len(describe(gw, name).partitions) == 1
    assert gw.create_partitions([NewPartitions(name, 3)]) == {name: Ok()}
    desc = eventually(lambda: gw.describe_topics([name])[name], lambda d: len(d.partitions) == 3)
    assert len(desc.partitions) == 3
    b = broker_ids[-1]
    assert gw.create_partitions([NewPartitions(name, 4, ((b,),))]) == {name: Ok()}
    desc = eventually(lambda: gw.describe_topics([name])[name], lambda d: len(d.partitions) == 4)
    assert desc.partitions[3].replicas == (b,)


def test_create_partitions_errors(gw, topics):
    name = topics.create(partitions=2)
    missing = unique("missing")
    res = gw.create_partitions([NewPartitions(name, 1), NewPartitions(missing, 3)])
    assert _err(res[name]) == "INVALID_PARTITIONS"
    assert _err(res[missing]) == "UNKNOWN_TOPIC_OR_PARTITION"


def test_list_offsets_of_empty_topic(gw, topics):
    name = topics.create(partitions=2)
    tps = [TopicPartition(name, 0), TopicPartition(name, 1), TopicPartition(name, 9)]

    def settled(answers) -> bool:  # every broker learns new leaders asynchronously
        return all(not isinstance(answers[tp], KafkaOperationError) for tp in tps[:2])

    latest = eventually(lambda: gw.list_offsets(tps, "latest"), settled)
    earliest = eventually(lambda: gw.list_offsets(tps, "earliest"), settled)
    for tp in tps[:2]:
        assert latest[tp].offset == 0
        assert earliest[tp].offset == 0
    assert _err(latest[tps[2]]) == "UNKNOWN_TOPIC_OR_PARTITION"


def test_summary_counts(gw, topics):
    # Counts are compared with one metadata snapshot: topics other tests delete come and go.
    name = topics.create(partitions=3)
    md = eventually(gw.list_topics_metadata, lambda m: any(t.name == name for t in m.topics))
    assert len(next(t for t in md.topics if t.name == name).partitions) == 3
    summary = gw.topic_summary()
    assert summary.topic_count >= 1 and summary.partition_count >= 3
    assert 0 <= summary.internal_topics <= summary.topic_count
    assert 0 <= summary.offline <= summary.partition_count
    assert 0 <= summary.under_replicated <= summary.partition_count


def test_offsets_by_leader_answers_plainly_and_names_each_failure(gw, topics, broker_ids):
    name = topics.create(partitions=2)
    leader = eventually(
        lambda: {p.id: p.leader for p in gw.describe_topics([name])[name].partitions},
        lambda got: all(v >= 0 for v in got.values()),
    )
    other = next(b for b in broker_ids if b != leader[1])

    def ask():
        by_leader: dict[int, dict[str, list[int]]] = {}
        by_leader.setdefault(leader[0], {}).setdefault(name, []).extend([0, 7])  # 7 does not exist
        by_leader.setdefault(other, {}).setdefault(name, []).append(1)  # not its leader
        return gw.offsets_by_leader(by_leader, ["latest", "earliest"])

    answers = eventually(ask, lambda got: (name, 0) in got[0][0])
    assert answers[1][0] == answers[0][0]  # an empty topic: log start = log end = 0
    assert {tp: e.name for tp, e in answers[1][1].items()} == {tp: e.name for tp, e in answers[0][1].items()}
    offsets, errors = answers[0]
    assert offsets == {(name, 0): 0}
    assert set(errors) == {(name, 7), (name, 1)}
    assert errors[(name, 7)].name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert errors[(name, 1)].name == "NOT_LEADER_OR_FOLLOWER"
    assert f"{name}-1" in errors[(name, 1)].message


def test_offsets_by_row_equal_offsets_by_leader(gw, topics):
    """The telemetry snapshot's ListOffsets (``offsets_by_row``, one array per spec over the whole
    layout) answers what ``offsets_by_leader`` answers for the same partitions."""
    name = topics.create(partitions=3)

    def read():
        layout = gw.partition_layout()
        rows = [layout.row_of(name, p) for p in range(3)]
        if min(rows) < 0 or min(layout.leader[r] for r in rows) < 0:
            return None
        by_row = gw.offsets_by_row(layout, ("latest", "earliest"))
        by_leader: dict[int, dict[str, list[int]]] = {}
        for p, r in enumerate(rows):
            by_leader.setdefault(layout.leader[r], {}).setdefault(name, []).append(p)
        (latest, _), (earliest, _) = gw.offsets_by_leader(by_leader, ("latest", "earliest"))
        return [(by_row[0][r], by_row[1][r]) for r in rows], [
            (latest.get((name, p)), earliest.get((name, p))) for p in range(3)
        ]

    got = eventually(read, lambda pair: pair is not None and pair[0] == pair[1] and None not in pair[1][0])
    assert got[0] == got[1] == [(0, 0)] * 3  # an empty topic: log start = log end = 0
