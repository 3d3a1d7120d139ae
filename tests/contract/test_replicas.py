"""Reassignment lifecycle (KIP-455), log dirs (KIP-113) and leader elections (KIP-460)."""

from __future__ import annotations

import pytest

from console.kafka import ConfigResource, KafkaOperationError, Ok, TopicPartition

from .conftest import describe, eventually, unique

pytestmark = pytest.mark.contract


def _replicas(gw, topic, partition=0):
    return describe(gw, topic).partitions[partition].replicas


def test_reassignment_lifecycle(gw, topics, broker_ids):
    a, b, c = broker_ids[:3]
    name = topics.create(replica_assignment=((a, b),))
    tp = TopicPartition(name, 0)
    assert gw.alter_partition_reassignments({tp: (b, c)}) == {tp: Ok()}
    # in progress (listed with adding/removing) or already completed (not listed)
    listed = gw.list_partition_reassignments([tp])
    if tp in listed:
        r = listed[tp]
        assert set(r.replicas) >= {b, c}
        assert c in r.adding or not r.adding
    final = eventually(lambda: _replicas(gw, name), lambda reps: reps == (b, c), timeout=30)
    assert final == (b, c)
    assert tp not in eventually(lambda: gw.list_partition_reassignments([tp]), lambda r: tp not in r)
    # nothing left to cancel
    assert gw.alter_partition_reassignments({tp: None})[tp].name == "NO_REASSIGNMENT_IN_PROGRESS"


def test_list_all_reassignments(gw):
    out = gw.list_partition_reassignments()
    assert isinstance(out, dict)


def test_reassignment_errors_per_partition(gw, topics, broker_ids):
    name = topics.create(partitions=2)
    good = TopicPartition(name, 0)
    target = (broker_ids[1],) if _replicas(gw, name)[0] != broker_ids[1] else (broker_ids[0],)
    missing_partition = TopicPartition(name, 42)
    missing_topic = TopicPartition(unique("missing"), 0)
    unknown_broker = TopicPartition(name, 1)
    out = gw.alter_partition_reassignments(
        {
            good: target,
            missing_partition: target,
            missing_topic: target,
            unknown_broker: (max(broker_ids) + 100,),
        }
    )
    assert out[good] == Ok()
    assert out[missing_partition].name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert out[missing_topic].name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert out[unknown_broker].name == "INVALID_REPLICA_ASSIGNMENT"
    eventually(lambda: _replicas(gw, name), lambda reps: reps == target, timeout=30)


def test_duplicate_and_empty_replicas_rejected(gw, topics, broker_ids):
    name = topics.create(partitions=2)
    dup = TopicPartition(name, 0)
    empty = TopicPartition(name, 1)
    out = gw.alter_partition_reassignments({dup: (broker_ids[0], broker_ids[0]), empty: ()})
    assert out[dup].name == "INVALID_REPLICA_ASSIGNMENT"
    assert out[empty].name == "INVALID_REPLICA_ASSIGNMENT"


def test_cancel_without_reassignment(gw, topics):
    name = topics.create()
    tp = TopicPartition(name, 0)
    assert gw.alter_partition_reassignments({tp: None})[tp].name == "NO_REASSIGNMENT_IN_PROGRESS"


def test_log_dirs_report_replicas(gw, topics, broker_ids):
    a, b = broker_ids[:2]
    name = topics.create(replica_assignment=((a, b),))
    tp = TopicPartition(name, 0)

    def settled(o) -> bool:  # each replica's broker reports it (a new topic reaches brokers one by one)
        return all(
            not isinstance(o[x], KafkaOperationError)
            and any(tp in d.replicas and d.replicas[tp].offset_lag >= 0 for d in o[x])
            for x in (a, b)
        )

    out = eventually(lambda: gw.describe_log_dirs([a, b, broker_ids[-1]]), settled)
    assert set(out) == {a, b, broker_ids[-1]}
    for broker in (a, b):
        dirs = out[broker]
        assert not isinstance(dirs, KafkaOperationError), dirs
        assert dirs and all(d.path and d.error is None for d in dirs)
        hosting = [d for d in dirs if tp in d.replicas]
        assert len(hosting) == 1
        info = hosting[0].replicas[tp]
        assert info.size >= 0 and info.offset_lag >= 0 and not info.is_future
    if broker_ids[-1] not in (a, b):
        assert all(tp not in d.replicas for d in out[broker_ids[-1]])


def test_log_dirs_filtered_and_unknown_broker(gw, topics, broker_ids):
    name = topics.create(replica_assignment=((broker_ids[0],),))
    tp = TopicPartition(name, 0)
    out = eventually(
        lambda: gw.describe_log_dirs([broker_ids[0], 987654], partitions=[tp]),
        lambda o: any(tp in d.replicas for d in o[broker_ids[0]]),
    )
    dirs = out[broker_ids[0]]
    assert {k for d in dirs for k in d.replicas} == {tp}
    assert isinstance(out[987654], KafkaOperationError)


def test_log_dirs_asked_per_broker_name_only_that_brokers_partitions(gw, topics, broker_ids):
    a, b = broker_ids[:2]
    name = topics.create(replica_assignment=((a, b), (a, b)))
    p0, p1 = TopicPartition(name, 0), TopicPartition(name, 1)
    out = eventually(
        lambda: gw.describe_log_dirs(partitions={a: [p0], b: [p0, p1], 987654: [p1]}),
        # each broker creates its replicas when it learns the new topic, not all at once
        lambda o: any(p0 in d.replicas for d in o[a]) and any(p1 in d.replicas for d in o[b]),
    )
    assert list(out) == [a, b, 987654]
    assert {k for d in out[a] for k in d.replicas} == {p0}
    assert {k for d in out[b] for k in d.replicas} == {p0, p1}
    assert isinstance(out[987654], KafkaOperationError)


def test_throttle_configs_are_described_by_key(gw, topics, broker_ids):
    name = topics.create(replica_assignment=((broker_ids[0],),))
    res, broker = ConfigResource("TOPIC", name), ConfigResource("BROKER", str(broker_ids[0]))
    keys = [
        "leader.replication.throttled.replicas",
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.rate",
    ]
    out = eventually(
        lambda: gw.describe_configs([res, broker], include_documentation=False, keys=keys),
        lambda o: not any(isinstance(v, KafkaOperationError) for v in o.values()),
    )
    assert set(out[res]) == set(keys[:2])
    assert set(out[broker]) <= {keys[2]}


def test_preferred_election(gw, topics, broker_ids):
    a, b = broker_ids[:2]
    name = topics.create(replica_assignment=((a, b),))
    tp = TopicPartition(name, 0)
    assert gw.elect_leaders("PREFERRED", [tp])[tp].name == "ELECTION_NOT_NEEDED"
    # reorder the replicas: the leader stays a, the preferred leader becomes b
    assert gw.alter_partition_reassignments({tp: (b, a)}) == {tp: Ok()}
    eventually(lambda: _replicas(gw, name), lambda reps: reps == (b, a), timeout=30)

    def elect():
        return gw.elect_leaders("PREFERRED", [tp])[tp]

    result = eventually(elect, lambda r: r == Ok() or r.name == "ELECTION_NOT_NEEDED", timeout=30)
    assert result == Ok() or result.name == "ELECTION_NOT_NEEDED"
    leader = eventually(lambda: describe(gw, name).partitions[0].leader, lambda x: x == b)
    assert leader == b


def test_election_errors(gw, topics):
    name = topics.create()
    missing = TopicPartition(name, 9)
    out = gw.elect_leaders("PREFERRED", [missing])
    assert out[missing].name == "UNKNOWN_TOPIC_OR_PARTITION"
    with pytest.raises(KafkaOperationError) as exc:
        gw.elect_leaders("SIDEWAYS", [missing])
    assert exc.value.name == "INVALID_REQUEST"


def test_unclean_election_not_needed_when_leader_alive(gw, topics):
    name = topics.create()
    tp = TopicPartition(name, 0)
    assert gw.elect_leaders("UNCLEAN", [tp])[tp].name == "ELECTION_NOT_NEEDED"
