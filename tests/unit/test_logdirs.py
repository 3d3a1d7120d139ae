"""Moves between the log dirs of one broker on a sandbox with two dirs per broker: the sandbox's
AlterReplicaLogDirs and DescribeLogDirs as Kafka 4.1 answers them, the ``logdir.move`` Operation
(progress rises, the replica ends in its target dir, the throttle is taken back exactly), the
refusals, audit and change control."""

from __future__ import annotations

import pytest

from console.kafka import KafkaOperationError, TopicPartition
from console.logdirs import actions, core, reads
from console.logdirs.reads import LogDirInvalid
from console.models import AuditEvent, Cluster, OperationState
from sandbox.testing import running_sandbox, set_log_dir_offline
from tests.conftest import hold, make_personas, run_now

IO_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
MB = 1 << 20


@pytest.fixture(scope="module")
def jbod():
    """A sandbox whose brokers have two log dirs each (its clock moved by the tests)."""
    from console.kafka import close_all

    with running_sandbox(brokers=3, controllers=1, log_dirs=2, speed=0) as sb:
        yield sb
        close_all()


@pytest.fixture
def jcluster(db, jbod):
    return Cluster.objects.create(name="jbod", bootstrap_servers=jbod.bootstrap_servers, request_timeout_s=5)


@pytest.fixture
def people(jcluster):
    return make_personas(jcluster)


_n = [0]


def _topic(jbod, size: float = 40 * MB, partitions: int = 1) -> str:
    _n[0] += 1
    name = f"ld-{_n[0]}"
    jbod.create_topic(name, partitions=partitions, replication_factor=2, assignment=[[1, 2]] * partitions)
    with jbod.state.lock:
        for p in jbod.state.topics[name].partitions:
            for b in p.replicas:
                p.sizes[b] = size
    return name


def _where(jbod, topic: str, partition: int, broker: int) -> str:
    from sandbox.logdirs import dir_of

    return dir_of(jbod.state.brokers[broker], jbod.state.partition(topic, partition))


def _other(jbod, topic: str, broker: int = 1) -> str:
    cur = _where(jbod, topic, 0, broker)
    return next(d for d in jbod.state.brokers[broker].log_dirs if d != cur)


# -- the sandbox, as Kafka 4.1 answers ----------------------------------------------------------------


def test_sandbox_alter_and_describe_log_dirs(jbod, jcluster):
    from console.clusters.actions import gateway_for

    topic = _topic(jbod)
    gw = gateway_for(jcluster)
    target = _other(jbod, topic)
    tp = TopicPartition(topic, 0)
    got = gw.alter_replica_log_dirs(
        1, {tp: "/nope", TopicPartition(topic, 7): target, TopicPartition(topic + "x", 0): target}
    )
    assert got[tp].name == "LOG_DIR_NOT_FOUND"
    assert got[TopicPartition(topic, 7)].name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert (
        gw.alter_replica_log_dirs(3, {tp: jbod.state.brokers[3].log_dirs[0]})[tp].name
        == "REPLICA_NOT_AVAILABLE"
    )
    assert not isinstance(gw.alter_replica_log_dirs(1, {tp: target})[tp], KafkaOperationError)
    jbod.set_broker_config("1", IO_RATE, str(10 * MB))
    try:
        jbod.advance(1)
        dirs = {d.path: d for d in gw.broker_log_dirs(1, [tp])}
        fut = dirs[target].replicas[tp]
        assert fut.is_future and fut.size == 10 * MB
        assert not dirs[_where(jbod, topic, 0, 1)].replicas[tp].is_future
        jbod.advance(4)
        dirs = {d.path: d for d in gw.broker_log_dirs(1, [tp])}
        assert dirs[target].replicas[tp] == (40 * MB, 0, False)  # swapped in, no future left
        assert all(tp not in d.replicas for p, d in dirs.items() if p != target)
    finally:
        jbod.set_broker_config("1", IO_RATE, None)


def test_sandbox_offline_dir(jbod, jcluster):
    from console.clusters.actions import gateway_for

    topic = _topic(jbod)
    target = _other(jbod, topic, broker=2)
    set_log_dir_offline(jbod, 2, target)
    try:
        gw = gateway_for(jcluster)
        tp = TopicPartition(topic, 0)
        assert gw.alter_replica_log_dirs(2, {tp: target})[tp].name == "KAFKA_STORAGE_ERROR"
        offline = [d for d in gw.broker_log_dirs(2) if d.path == target][0]
        assert offline.error.name == "KAFKA_STORAGE_ERROR" and not offline.replicas
    finally:
        set_log_dir_offline(jbod, 2, target, offline=False)


# -- the move through the worker -----------------------------------------------------------------------


def _drive(jbod, op, seconds: float = 1.0, runs: int = 30):
    seen = []
    for _ in range(runs):
        run_now(op.pk)
        op.refresh_from_db()
        seen.append(op.progress)
        if op.finished:
            break
        jbod.advance(seconds)
    return op, seen


def test_move_through_worker_with_throttle_restored(jbod, jcluster, people):
    topic = _topic(jbod)
    target = _other(jbod, topic)
    jbod.set_broker_config("1", IO_RATE, "123456789")  # an override of the operator's own: restored as it was
    try:
        move = core.Move(topic, 0, 1, target)
        op = actions.move_replicas(actor=people["operator"], cluster=jcluster, moves=[move], throttle=8 * MB)
        op, seen = _drive(jbod, op)
        assert op.state == OperationState.SUCCEEDED, op.error
        assert _where(jbod, topic, 0, 1) == target
        rising = [p for p in seen if 0 < p < 1]
        assert len(rising) >= 3 and rising == sorted(rising)  # 40 MiB at 8 MiB/s: several polls
        assert jbod.state.broker_configs["1"][IO_RATE] == "123456789"
        names = list(AuditEvent.objects.filter(cluster_id=jcluster.pk).values_list("action", "outcome"))
        assert ("logdir.move.requested", "requested") in names
        assert ("logdir.throttle.set", "success") in names
        assert ("logdir.throttle.restore", "success") in names
        assert ("logdir.move.succeeded", "success") in names
    finally:
        jbod.set_broker_config("1", IO_RATE, None)


def test_throttle_without_previous_value_is_removed(jbod, jcluster, people):
    topic = _topic(jbod, size=4 * MB)
    op = actions.move_replicas(
        actor=people["operator"],
        cluster=jcluster,
        moves=[core.Move(topic, 0, 2, _other(jbod, topic, 2))],
        throttle=4096 * 1024,
    )
    op, _ = _drive(jbod, op)
    assert op.state == OperationState.SUCCEEDED
    assert IO_RATE not in jbod.state.broker_configs.get("2", {})


def test_cancel_leaves_the_replica_where_it_was(jbod, jcluster, people):
    topic = _topic(jbod)
    home = _where(jbod, topic, 0, 1)
    jbod.set_broker_config("1", IO_RATE, str(MB))
    try:
        op = actions.move_replicas(
            actor=people["operator"], cluster=jcluster, moves=[core.Move(topic, 0, 1, _other(jbod, topic))]
        )
        run_now(op.pk)
        jbod.advance(2)
        run_now(op.pk)
        assert jbod.state.partition(topic, 0).futures
        assert actions.cancel(actor=people["operator"], op=op)
        op, _ = _drive(jbod, op)
        assert op.state == OperationState.CANCELLED
        assert _where(jbod, topic, 0, 1) == home and not jbod.state.partition(topic, 0).futures
    finally:
        jbod.set_broker_config("1", IO_RATE, None)


# -- refusals: nothing sent ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case, expect",
    [
        ("unknown_dir", "has no log dir /nope"),
        ("not_on_broker", "holds no replica"),
        ("already_there", "is already in"),
        ("offline", "is offline"),
    ],
)
def test_refused_before_kafka(jbod, jcluster, people, case, expect):
    topic = _topic(jbod)
    home, other = _where(jbod, topic, 0, 1), _other(jbod, topic)
    move = {
        "unknown_dir": core.Move(topic, 0, 1, "/nope"),
        "not_on_broker": core.Move(topic, 0, 3, jbod.state.brokers[3].log_dirs[0]),
        "already_there": core.Move(topic, 0, 1, home),
        "offline": core.Move(topic, 0, 1, other),
    }[case]
    if case == "offline":
        set_log_dir_offline(jbod, 1, other)
    try:
        with pytest.raises(LogDirInvalid, match=expect):
            actions.move_replicas(actor=people["operator"], cluster=jcluster, moves=[move])
    finally:
        set_log_dir_offline(jbod, 1, other, offline=False)
    assert not jbod.state.partition(topic, 0).futures
    assert AuditEvent.objects.filter(action="logdir.move", outcome="refused").exists()


def test_viewer_refused(jbod, jcluster, people):
    from django.core.exceptions import PermissionDenied

    topic = _topic(jbod)
    with pytest.raises(PermissionDenied):
        actions.move_replicas(
            actor=people["viewer"], cluster=jcluster, moves=[core.Move(topic, 0, 1, _other(jbod, topic))]
        )
    with pytest.raises(PermissionDenied):
        reads.dry_run(actor=people["viewer"], cluster=jcluster, moves=[])


def test_second_move_on_a_busy_broker_refused(jbod, jcluster, people):
    topic = _topic(jbod, partitions=2)
    actions.move_replicas(
        actor=people["operator"], cluster=jcluster, moves=[core.Move(topic, 0, 1, _other(jbod, topic))]
    )
    with pytest.raises(LogDirInvalid, match="already moving"):
        actions.move_replicas(
            actor=people["operator"], cluster=jcluster, moves=[core.Move(topic, 1, 1, "/x")]
        )


def test_held_by_policy(jbod, jcluster, people):
    from console.changes.gate import ApprovalRequired as ChangeHeld

    topic = _topic(jbod)
    hold(jcluster, people["admin"], ["logdir.move"])
    with pytest.raises(ChangeHeld):
        actions.move_replicas(
            actor=people["operator"], cluster=jcluster, moves=[core.Move(topic, 0, 1, _other(jbod, topic))]
        )
    assert not jbod.state.partition(topic, 0).futures
