"""Where a poll's ISR comes from: a Metadata request of the moving topics, sent with the log dirs
and decoded in C (``metadata_read.py``), never the whole cluster's. It must give Kafka's leaders,
ISRs and errors, and so the replica states: "In sync" only while Kafka lists the replica in the ISR."""

from __future__ import annotations

import itertools
import time
from types import SimpleNamespace

import pytest

from console.clusters.actions import gateway_for
from console.kafka import (
    ConfigChange,
    ConfigResource,
    KafkaOperationError,
    TopicPartition,
)
from console.kafka import poll_reads as poll_reads_module
from console.kafka import reassign_reads as reassign_reads_module
from console.kafka import replicas as replicas_module
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment import store
from console.reassignment.progress import CAUGHT_UP, IN_SYNC, flatten_logs, replica_dicts
from tests.conftest import run_now

pytestmark = pytest.mark.django_db

MB = 1024 * 1024
_names = itertools.count()


def _topic(sandbox, assignment) -> str:
    name = f"isr-source-t{next(_names)}-{time.monotonic_ns()}"
    sandbox.create_topic(
        name, partitions=len(assignment), replication_factor=len(assignment[0]), assignment=assignment
    )
    sandbox.produce_synthetic(name, 2 * MB * len(assignment))  # bytes per second, for a second
    sandbox.advance(1)
    sandbox.produce_synthetic(name, 0)
    return name


def _set_isr(sandbox, topic: str, partition: int, isr: list[int]) -> None:
    state = sandbox.state
    with state.lock:
        state.topics[topic].partitions[partition].isr = list(isr)
        state.touch(topic)


def _comparable(isr):
    if isinstance(isr, KafkaOperationError):
        return ("error", isr.name)
    return {t: v if isinstance(v, dict) else ("error", v.name) for t, v in isr.items()}


def test_the_named_read_answers_the_leaders_and_isrs_kafka_lists(kafka_cluster, frozen):
    gw = gateway_for(kafka_cluster)
    a = _topic(frozen, [[1, 2], [2, 3], [3, 1]])
    b = _topic(frozen, [[2, 3, 1]])
    _set_isr(frozen, a, 1, [2])  # a follower out of the ISR
    _set_isr(frozen, b, 0, [2, 1])  # an ISR not in replica order
    names = sorted([a, b, "isr-source-no-such-topic"])
    every = {a: {0: (1, (1, 2)), 1: (2, (2,)), 2: (3, (3, 1))}, b: {0: (2, (2, 1))}}
    for only, want in (
        (None, every),
        ({a: {0, 1}, b: {0, 7}}, {a: {0: every[a][0], 1: every[a][1]}, b: every[b]}),
        ({a: set()}, {a: {}, b: {}}),
    ):
        got = _comparable(gw.partition_isr(names, only))
        assert got == {**want, "isr-source-no-such-topic": ("error", "UNKNOWN_TOPIC_OR_PARTITION")}


def test_log_dirs_and_isr_answer_the_held_replicas_and_the_isr(kafka_cluster, frozen):
    gw = gateway_for(kafka_cluster)
    a = _topic(frozen, [[1, 2], [2, 3]])
    _set_isr(frozen, a, 0, [1])
    by_broker = {1: [TopicPartition(a, 0)], 2: [TopicPartition(a, 0), TopicPartition(a, 1)]}
    # the replicas held: what progress.flatten_logs made of describe_log_dirs' answer
    general = {
        b: None if v is None else {tuple(tp): (info[0], info[1]) for tp, info in v.items()}
        for b, v in flatten_logs(gw.describe_log_dirs(partitions=by_broker)).items()
    }
    assert general[1] and general[2]
    held, isr = gw.log_dirs_and_isr(by_broker, [a], {a: {0, 1}})
    assert held == general
    assert _comparable(isr) == {a: {0: (1, (1,)), 1: (2, (2, 3))}}


def _wire_dir(name: str, replicas: list[tuple[str, int, int, int, bool]]):
    by_topic: dict = {}
    for topic, p, size, lag, future in replicas:
        by_topic.setdefault(topic, []).append(
            SimpleNamespace(partition_index=p, partition_size=size, offset_lag=lag, is_future_key=future)
        )
    return SimpleNamespace(
        log_dir=name,
        error_code=0,
        topics=[SimpleNamespace(name=t, partitions=ps) for t, ps in by_topic.items()],
        total_bytes=-1,
        usable_bytes=-1,
    )


def test_the_held_replicas_merge_dirs_and_leave_future_replicas_out():
    """Two log dirs, a replica moving between them (its future copy in the second dir)."""
    results = [
        _wire_dir("/a", [("t", 0, 100, 0, False), ("t", 1, 50, 0, False)]),
        _wire_dir("/b", [("t", 0, 40, 60, True), ("u", 0, 7, 0, False)]),
    ]
    expected = {("t", 0): (100, 0), ("t", 1): (50, 0), ("u", 0): (7, 0)}
    # (the poll's own reading of the bytes: tests/unit/test_log_dirs_read.py)
    flat = flatten_logs({1: tuple(replicas_module._log_dir(d) for d in results)})[1]
    assert {tuple(tp): (v[0], v[1]) for tp, v in flat.items()} == expected


def test_a_poll_never_reads_the_whole_cluster(kafka_cluster, frozen, monkeypatch):
    """However much of the cluster moves, the ISR comes from the moving topics' Metadata."""
    gw = gateway_for(kafka_cluster)
    big = _topic(frozen, [[1, 2]] * 6)
    whole_reads = []
    real = type(gw)._whole_metadata

    def spy(self):
        whole_reads.append(1)
        return real(self)

    monkeypatch.setattr(type(gw), "_whole_metadata", spy)
    by_broker = {1: [TopicPartition(big, p) for p in range(6)]}
    for _ in range(3):
        held, isr = gw.log_dirs_and_isr(by_broker, [big])
        assert set(isr[big]) == set(range(6)) and len(held[1]) == 6
    assert whole_reads == []


def test_in_sync_only_while_the_isr_lists_the_replica(personas, kafka_cluster, frozen, monkeypatch):
    read = {"named": 0}
    real_named = reassign_reads_module.isr_answer

    def spy_named(*args):
        read["named"] += 1
        return real_named(*args)

    monkeypatch.setattr(reassign_reads_module, "isr_answer", spy_named)
    topic = _topic(frozen, [[1, 2]])
    op = reassignment.start_reassignment(
        actor=personas["operator"],
        cluster=kafka_cluster,
        proposed={(topic, 0): (1, 2, 3)},
        throttle=MB,
        rf_change=True,
    )
    r = Reassignment.objects.get(operation=op)
    run_now(op.pk)  # throttle, submit

    def states() -> dict[int, str]:
        run_now(op.pk)
        r.refresh_from_db()
        entry = store.live_entry(r, topic, 0)
        assert entry is not None, "the partition is no longer moving"
        return {x["broker"]: x["status"] for x in replica_dicts(entry.replicas)}

    _set_isr(frozen, topic, 0, [1])  # broker 2 is level with the leader but not in the ISR
    first = states()
    assert first[1] == IN_SYNC and first[2] == CAUGHT_UP and first[3] != IN_SYNC
    _set_isr(frozen, topic, 0, [1, 2])
    second = states()
    assert second[1] == IN_SYNC and second[2] == IN_SYNC and second[3] != IN_SYNC
    assert read["named"] >= 2
    # the move finishes and its throttles are taken back (later tests start without any)
    for _ in range(10):
        frozen.advance(10)
        run_now(op.pk)
        op.refresh_from_db()
        if op.finished:
            break
    r.refresh_from_db()
    assert op.state == "succeeded", (op.state, op.error)


def test_poll_reads_list_the_reassignments_in_the_same_flight(kafka_cluster, frozen):
    """``poll_reads`` = ``reassigning`` + ``log_dirs_and_isr``, in one flight."""
    gw = gateway_for(kafka_cluster)
    topic = _topic(frozen, [[1], [2]])
    moving, still = TopicPartition(topic, 0), TopicPartition(topic, 1)
    gw.alter_partition_reassignments({moving: (1, 3)})
    # a throttle of 1 byte/s on the new follower keeps the move going while the test reads
    gw.incremental_alter_configs(
        {
            ConfigResource("TOPIC", topic): [
                ConfigChange("follower.replication.throttled.replicas", "SET", "0:3")
            ],
            ConfigResource("BROKER", "3"): [ConfigChange("follower.replication.throttled.rate", "SET", "1")],
        }
    )
    try:
        frozen.advance(1)
        by_broker = {1: [moving], 2: [still], 3: [moving]}
        listed, held, isr = gw.poll_reads([moving, still], by_broker, [topic], {topic: {0, 1}})
        assert listed == {(topic, 0)} == set(gw.list_partition_reassignments([moving, still]))
        alone_held, alone_isr = gw.log_dirs_and_isr(by_broker, [topic], {topic: {0, 1}})
        assert (held, _comparable(isr)) == (alone_held, _comparable(alone_isr))
        assert isr[topic][0] == (1, (1,))  # the adding replica is not in the ISR
        assert gw.poll_reads([], by_broker, [])[0] == set() == gw.reassigning([])
    finally:
        gw.alter_partition_reassignments({moving: None})
        gw.incremental_alter_configs(
            {
                ConfigResource("TOPIC", topic): [
                    ConfigChange("follower.replication.throttled.replicas", "DELETE")
                ],
                ConfigResource("BROKER", "3"): [
                    ConfigChange("follower.replication.throttled.rate", "DELETE")
                ],
            }
        )


def test_a_failed_listing_is_raised_as_reassigning_raises_it():
    err = KafkaOperationError(7, "REQUEST_TIMED_OUT", "no answer")
    with pytest.raises(KafkaOperationError) as raised:
        poll_reads_module._reassigning(err)
    assert raised.value is err
    answer = SimpleNamespace(error_code=41, error_message="not the controller", topics=[])
    with pytest.raises(KafkaOperationError) as raised:
        poll_reads_module._reassigning(answer)
    assert raised.value.name == "NOT_CONTROLLER"
