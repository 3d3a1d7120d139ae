"""Moves between the log dirs of one broker (KIP-113), the same on the sandbox and on a real Kafka 4.1
whose brokers have two log dirs each: DescribeLogDirs per dir (absolute paths, total and usable bytes),
AlterReplicaLogDirs' answers per replica (LOG_DIR_NOT_FOUND, REPLICA_NOT_AVAILABLE,
UNKNOWN_TOPIC_OR_PARTITION; the dir the replica is in: accepted, nothing moves), a throttled move whose
future replica shows in the target dir while it copies and replaces the replica once caught up (the
records intact), and the console's ``logdir.move`` Operation through its worker with the throttle
(``replica.alter.log.dirs.io.max.bytes.per.second``) set and taken back to exactly what it was.

On the sandbox these run on a sandbox of their own with two dirs per broker (the session's has one).
Against a real cluster (``KAFKA_BOOTSTRAP_SERVERS``) they are skipped, saying so, when a broker has only
one log dir: nothing can move between dirs there.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from console.kafka import ConfigChange, ConfigResource, KafkaOperationError, TopicPartition
from console.kafka.connection import ClusterConnection
from console.kafka.gateway import KafkaGateway

from .conftest import TopicFactory, eventually

pytestmark = pytest.mark.contract
IO_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
VALUE = b"x" * 100_000


@pytest.fixture(scope="module")
def jbod_servers(request) -> Iterator[str]:
    """The real cluster, or a sandbox of this module with two log dirs per broker."""
    servers = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "").strip()
    if servers:
        yield servers
        return
    from sandbox.testing import running_sandbox

    with running_sandbox(brokers=3, controllers=1, log_dirs=2, speed=1) as sb:
        yield sb.bootstrap_servers


@pytest.fixture(scope="module")
def jgw(jbod_servers) -> Iterator[KafkaGateway]:
    from .conftest import _security

    gw = KafkaGateway(
        ClusterConnection(
            bootstrap_servers=jbod_servers, request_timeout_s=15, connect_timeout_s=5, **_security()
        )
    )
    brokers = [b.id for b in gw.describe_cluster().brokers]
    counts = {b: len(gw.broker_log_dirs(b)) for b in brokers}
    if min(counts.values()) < 2:
        pytest.skip(
            f"a broker has one log dir only ({counts}): nothing can move between dirs on this cluster"
        )
    yield gw
    gw.close()


@pytest.fixture
def jtopics(jgw) -> Iterator[TopicFactory]:
    factory = TopicFactory(jgw)
    yield factory
    factory.cleanup()


def _dirs(gw, broker, tp=None):
    return {d.path: d for d in gw.broker_log_dirs(broker, [tp] if tp else None)}


def _home(gw, broker, tp) -> str:
    """The dir holding the broker's replica (waiting for a new topic's replica to be created)."""

    def held():
        return [
            p for p, d in _dirs(gw, broker, tp).items() if tp in d.replicas and not d.replicas[tp].is_future
        ]

    (path,) = eventually(held, lambda found: len(found) == 1)
    return path


def _rate(gw, res) -> str | None:
    """The broker's own value of the throttle (Kafka leaves an unset quota config out of the answer)."""
    entry = gw.describe_configs([res], include_documentation=False, keys=[IO_RATE])[res].get(IO_RATE)
    return entry.value if entry is not None and entry.source == "DYNAMIC_BROKER_CONFIG" else None


def _fill(gw, topic, mb: int) -> None:
    for _ in range(mb * 10):
        gw.produce_record(topic, partition=0, key=None, value=VALUE)


def test_each_broker_reports_its_dirs_with_sizes(jgw):
    for b in [x.id for x in jgw.describe_cluster().brokers]:
        dirs = jgw.broker_log_dirs(b)
        assert len(dirs) >= 2
        for d in dirs:
            assert d.path.startswith("/") and d.error is None
            assert d.total_bytes and d.usable_bytes is not None and d.usable_bytes <= d.total_bytes


def test_alter_replica_log_dirs_answers_per_replica(jgw, jtopics):
    topic = jtopics.create(partitions=1, replication_factor=2)
    meta = eventually(lambda: jgw.describe_topics([topic])[topic])
    broker, other = meta.partitions[0].replicas
    outsider = next(b.id for b in jgw.describe_cluster().brokers if b.id not in (broker, other))
    tp = TopicPartition(topic, 0)
    home = _home(jgw, broker, tp)
    elsewhere = next(p for p in _dirs(jgw, broker) if p != home)
    got = jgw.alter_replica_log_dirs(
        broker,
        {tp: "/no/such/dir", TopicPartition(topic, 5): elsewhere, TopicPartition(topic + "-x", 0): elsewhere},
    )
    names = {k: v.name for k, v in got.items()}
    assert names == {
        tp: "LOG_DIR_NOT_FOUND",
        TopicPartition(topic, 5): "UNKNOWN_TOPIC_OR_PARTITION",
        TopicPartition(topic + "-x", 0): "UNKNOWN_TOPIC_OR_PARTITION",
    }
    outsider_dir = next(iter(_dirs(jgw, outsider)))
    assert jgw.alter_replica_log_dirs(outsider, {tp: outsider_dir})[tp].name == "REPLICA_NOT_AVAILABLE"
    assert not isinstance(jgw.alter_replica_log_dirs(broker, {tp: home})[tp], KafkaOperationError)
    time.sleep(1)
    assert _home(jgw, broker, tp) == home
    assert not any(r.is_future for d in _dirs(jgw, broker, tp).values() for r in d.replicas.values())


def test_a_throttled_move_copies_into_a_future_replica_then_swaps(jgw, jtopics):
    topic = jtopics.create(partitions=1, replication_factor=1)
    _fill(jgw, topic, 3)
    before = jgw.partition_bounds(topic)
    broker = eventually(lambda: jgw.describe_topics([topic])[topic]).partitions[0].leader
    tp = TopicPartition(topic, 0)
    home = _home(jgw, broker, tp)
    target = next(p for p in _dirs(jgw, broker) if p != home)
    res = ConfigResource("BROKER", str(broker))
    assert not isinstance(
        jgw.incremental_alter_configs({res: [ConfigChange(IO_RATE, "SET", str(512 * 1024))]})[res],
        KafkaOperationError,
    )
    try:
        assert not isinstance(jgw.alter_replica_log_dirs(broker, {tp: target})[tp], KafkaOperationError)
        fut = eventually(lambda: _dirs(jgw, broker, tp)[target].replicas.get(tp), timeout=10, interval=0.1)
        assert fut is not None and fut.is_future
        cur = _dirs(jgw, broker, tp)[home].replicas[tp]
        assert not cur.is_future and cur.size >= 3_000_000
    finally:
        assert not isinstance(
            jgw.incremental_alter_configs({res: [ConfigChange(IO_RATE, "DELETE")]})[res], KafkaOperationError
        )
    done = eventually(
        lambda: _dirs(jgw, broker, tp),
        lambda d: (
            tp in d[target].replicas and not d[target].replicas[tp].is_future and tp not in d[home].replicas
        ),
        timeout=60,
        interval=0.5,
    )
    assert done[target].replicas[tp].size >= 3_000_000
    assert jgw.partition_bounds(topic) == before  # the records are all there


@pytest.mark.django_db
def test_the_console_moves_a_replica_and_takes_the_throttle_back(
    jgw, jtopics, jbod_servers, django_user_model
):
    from console.logdirs import actions, core
    from console.models import AuditEvent, Cluster, OperationState
    from tests.conftest import run_until_finished

    topic = jtopics.create(partitions=1, replication_factor=1)
    _fill(jgw, topic, 2)
    broker = eventually(lambda: jgw.describe_topics([topic])[topic]).partitions[0].leader
    tp = TopicPartition(topic, 0)
    home = _home(jgw, broker, tp)
    target = next(p for p in _dirs(jgw, broker) if p != home)
    res = ConfigResource("BROKER", str(broker))
    own = "987654321"  # an override of the broker's own: taken back to exactly this
    assert not isinstance(
        jgw.incremental_alter_configs({res: [ConfigChange(IO_RATE, "SET", own)]})[res], KafkaOperationError
    )
    assert eventually(lambda: _rate(jgw, res), lambda v: v == own) == own  # the broker applied it
    cluster = Cluster.objects.create(name="jbod-contract", bootstrap_servers=jbod_servers)
    admin = django_user_model.objects.create_superuser(username="ld-admin", password="pw-ld-admin")
    try:
        op = actions.move_replicas(
            actor=admin, cluster=cluster, moves=[core.Move(topic, 0, broker, target)], throttle=1 << 20
        )
        op = run_until_finished(op, runs=120, pause_s=0.5)
        assert op.state == OperationState.SUCCEEDED, op.error
        assert _home(jgw, broker, tp) == target
        assert eventually(lambda: _rate(jgw, res), lambda v: v == own) == own
        actions_seen = set(AuditEvent.objects.filter(cluster_id=cluster.pk).values_list("action", flat=True))
        assert {
            "logdir.move.requested",
            "logdir.throttle.set",
            "logdir.throttle.restore",
            "logdir.move.succeeded",
        } <= actions_seen
    finally:
        jgw.incremental_alter_configs({res: [ConfigChange(IO_RATE, "DELETE")]})
        from console.clusters.actions import gateway_for

        gateway_for(cluster).close()  # its clients would go on reconnecting once this module's sandbox stops
