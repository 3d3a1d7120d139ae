"""The alert evaluator against the sandbox or a real Kafka: a healthy cluster raises no partition,
broker or reachability alert, and a consumer group whose position is ten minutes old (records
produced with old timestamps, its offset committed behind them) fires the time-lag alert with the age
Kafka's own record timestamps give. Topics and groups are named ``alrt.`` + a uuid and removed."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Producer

from console.alerts import evaluate, measure
from console.kafka import KafkaOperationError, NewTopic, TopicPartition
from console.models import Cluster
from console.models.alerts import Alert, AlertRuleSetting

from .conftest import eventually

pytestmark = [pytest.mark.contract, pytest.mark.django_db]

MINUTE_MS = 60_000
HEALTH_RULES = {"cluster_unreachable", "broker_down", "under_replicated", "offline_partitions"}


@pytest.fixture
def cluster(endpoints):
    measure.MEMORY.clear()
    yield Cluster.objects.create(name="alerts-contract", bootstrap_servers=endpoints.bootstrap_servers)
    measure.MEMORY.clear()


@pytest.fixture
def lag_topic(gw):
    name = f"alrt.lag-{uuid.uuid4().hex[:10]}"
    assert not isinstance(gw.create_topics([NewTopic(name, 1, 1, None, {})])[name], KafkaOperationError)
    eventually(
        lambda: gw.describe_topics([name])[name],
        lambda r: not isinstance(r, KafkaOperationError) and all(p.leader >= 0 for p in r.partitions),
    )
    yield name
    gw.delete_topics([name])


def _open(cluster) -> dict[tuple[str, str], Alert]:
    return {
        (a.rule, a.subject): a
        for a in Alert.objects.filter(cluster=cluster, state__in=["firing", "acknowledged"])
    }


def test_a_healthy_cluster_raises_no_partition_broker_or_reachability_alert(cluster):
    changes = evaluate.evaluate_cluster(cluster)
    assert {rule for rule, _ in _open(cluster)} & HEALTH_RULES == set(), changes


def test_a_group_ten_minutes_behind_fires_the_time_lag_alert(gw, endpoints, cluster, lag_topic):
    now_ms = int(time.time() * 1000)
    producer = Producer(endpoints.client_config())
    for i, age_min in enumerate((11, 10, 1)):
        producer.produce(lag_topic, f"r{i}".encode(), partition=0, timestamp=now_ms - age_min * MINUTE_MS)
    assert producer.flush(30) == 0
    group = f"alrt.behind-{uuid.uuid4().hex[:10]}"
    tp = TopicPartition(lag_topic, 0)
    assert not isinstance(gw.alter_consumer_group_offsets(group, {tp: 1})[tp], KafkaOperationError)
    try:
        eventually(lambda: gw.list_consumer_group_offsets([group]).get(group), lambda got: got == {tp: 1})
        AlertRuleSetting.objects.create(cluster=cluster, rule="group_lag", threshold=1)
        evaluate.evaluate_cluster(cluster)
        alerts = _open(cluster)
        by_time = alerts[("group_time_lag", f"group {group}")]
        assert 600 <= by_time.value < 720, by_time.summary
        assert by_time.details["topic"] == lag_topic and by_time.details["offset"] == 1
        assert by_time.summary.startswith(f"group {group}'s position is 1") and "min old" in by_time.summary
        by_offsets = alerts[("group_lag", f"group {group}")]
        assert by_offsets.value == 2.0
    finally:
        gw.delete_consumer_groups([group])


def test_under_min_isr_counts_a_later_partition_with_fewer_replicas_than_the_minimum(gw):
    """Partition 0 on three brokers, partition 1 moved onto one (fully in sync), min ISR 2: partition
    1 is under its minimum although the topic's "replication factor" (partition 0's) is 3. Kafka
    creates no topic with mixed replica counts: a reassignment makes one."""
    brokers = sorted(gw.partition_health().brokers)[:3]
    if len(brokers) < 3:
        pytest.skip("needs three brokers")
    name = f"alrt3.mixed-{uuid.uuid4().hex[:10]}"
    spec = NewTopic(
        name, replica_assignment=(tuple(brokers), tuple(brokers)), configs={"min.insync.replicas": "2"}
    )
    assert not isinstance(gw.create_topics([spec])[name], KafkaOperationError)
    try:
        moved = TopicPartition(name, 1)
        eventually(
            lambda: gw.alter_partition_reassignments({moved: (brokers[1],)})[moved],
            lambda r: not isinstance(r, KafkaOperationError),
        )

        def settled(t) -> bool:  # partition 1 on one broker, its ISR that broker
            return not isinstance(t, KafkaOperationError) and [
                (list(p.replicas), list(p.isr)) for p in sorted(t.partitions, key=lambda p: p.id)
            ][1] == ([brokers[1]], [brokers[1]])

        eventually(lambda: gw.describe_topics([name])[name], settled)
        health = gw.partition_health()
        assert health.whole.topics[name].replication_factor == 3
        assert health.under_min_isr({name: 2}, default=0) == 1  # only this topic counted (others: 0)
        assert health.under_min_isr({name: 1}, default=0) == 0
    finally:
        gw.delete_topics([name])
