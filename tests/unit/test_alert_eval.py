"""The alert evaluator on a sandbox of its own (3 brokers, 1 controller, clock stopped): a stopped
broker fires broker-down and under-replicated alerts that reach a real webhook receiver and resolve
after the restart; an unreachable cluster is an alert, not an exception; a group left behind fires
the lag alerts by offsets and by time; throttles left behind; the per-cluster bound."""

from __future__ import annotations

import json
import time

import pytest
from confluent_kafka import Producer

from console.alerts import evaluate, measure
from console.kafka import ConfigChange, ConfigResource, TopicPartition, close_all
from console.models import AuditEvent, Cluster
from console.models.alerts import Alert, AlertState
from console.notify import actions as notify_actions
from console.notify import events, worker
from sandbox.testing import running_sandbox
from tests.conftest import make_personas
from tests.unit.test_notify import Receiver

MINUTE_MS = 60_000
KEYS = ("broker_down|broker 3", "under_replicated|", "offline_partitions|", "under_min_isr|")
ALERT_EVENTS = [events.ALERT_FIRING, events.ALERT_RESOLVED, events.ALERT_ESCALATED]


@pytest.fixture(scope="module")
def own():
    """Topics: al.rep [1,2,3] x2 (RF 3), al.strict [1,2,3] (min ISR 3), al.solo [3] (only on broker
    3), al.lag [1] [2] (for groups). Three controllers (the quorum's leader can move)."""
    with running_sandbox(brokers=3, controllers=3, speed=0) as c:
        c.create_topic("al.rep", assignment=[[1, 2, 3], [2, 3, 1]])
        c.create_topic("al.strict", assignment=[[1, 2, 3]], configs={"min.insync.replicas": "3"})
        c.create_topic("al.solo", assignment=[[3]])
        c.create_topic("al.lag", assignment=[[1], [2]])
        yield c
    close_all()


@pytest.fixture
def cluster(db, own, settings):
    settings.NOTIFY_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.NOTIFY_TIMEOUT_S = 5
    measure.MEMORY.clear()
    yield Cluster.objects.create(
        name="alerting", bootstrap_servers=own.bootstrap_servers, request_timeout_s=5
    )
    measure.MEMORY.clear()


def _open(cluster) -> dict[tuple[str, str], Alert]:
    return {
        (a.rule, a.subject): a
        for a in Alert.objects.filter(cluster=cluster, state__in=["firing", "acknowledged"])
    }


def _bodies(rx) -> list[tuple[str, str]]:
    return [
        (b["event"], b["details"]["rule"] + "|" + b["details"]["subject"]) for b in map(_json, rx.received)
    ]


def _json(got) -> dict:
    return json.loads(got["body"])


def test_it_fires_broker_down_and_under_replicated_on_a_webhook_and_resolves_them_after_the_restart(
    own, cluster, django_capture_on_commit_callbacks
):
    people = make_personas(cluster)
    with Receiver() as rx:
        notify_actions.create_channel(
            actor=people["admin"],
            cluster=cluster,
            name="pager",
            kind="webhook",
            events=ALERT_EVENTS,
            url=rx.url,
        )
        healthy = evaluate.evaluate_cluster(cluster)
        assert (healthy.fired, healthy.resolved) == ([], [])

        own.stop_broker(3)
        try:
            with django_capture_on_commit_callbacks(execute=True):
                down = evaluate.evaluate_cluster(cluster)
            alerts = _open(cluster)
            assert set(alerts) == {
                ("broker_down", "broker 3"),
                ("under_replicated", ""),
                ("offline_partitions", ""),
                ("under_min_isr", ""),
            }
            assert sorted(down.fired) == sorted(a.pk for a in alerts.values())
            under = alerts[("under_replicated", "")]
            assert (under.state, under.value, under.threshold, under.severity) == (
                "firing",
                3.0,
                0.0,
                "warning",
            )
            assert under.summary == "3 partition(s) under-replicated"
            strict = alerts[("under_min_isr", "")]
            assert (strict.value, strict.severity) == (1.0, "critical")
            broker = alerts[("broker_down", "broker 3")]
            assert (broker.value, broker.severity, broker.details["broker"]) == (1.0, "critical", 3)
            assert broker.details["state"] in ("fenced", "unreachable", "missing")
            assert alerts[("offline_partitions", "")].value == 1.0

            again = evaluate.evaluate_cluster(cluster)  # seen again: updated, not fired twice
            assert again.fired == [] and sorted(again.updated) == sorted(down.fired)
            assert worker.deliver_due(worker="test")
        finally:
            own.start_broker(3)
            own.advance(5)  # its replicas catch up and rejoin the ISR

        with django_capture_on_commit_callbacks(execute=True):
            up = evaluate.evaluate_cluster(cluster)
        assert _open(cluster) == {} and sorted(up.resolved) == sorted(down.fired)
        for alert in Alert.objects.filter(pk__in=down.fired):
            assert alert.state == AlertState.RESOLVED and alert.resolved_at is not None
        worker.deliver_due(worker="test")

    assert sorted(_bodies(rx)) == sorted(
        [(events.ALERT_FIRING, k) for k in KEYS] + [(events.ALERT_RESOLVED, k) for k in KEYS]
    )
    fired = next(
        _json(b)
        for b in rx.received
        if _json(b)["event"] == events.ALERT_FIRING and "broker 3" in _json(b)["title"]
    )
    assert fired["cluster"] == "alerting" and fired["details"]["severity"] == "critical"
    assert fired["title"] == "[critical] Broker down or fenced (broker 3) firing on alerting"
    audited = AuditEvent.objects.filter(action__startswith="alert.").order_by("pk")
    assert [(e.action, e.actor_name, e.outcome) for e in audited] == [
        ("alert.fire", "console-system", "success")
    ] * 4 + [("alert.resolve", "console-system", "success")] * 4


def test_it_alerts_an_unreachable_cluster_instead_of_raising(db, settings):
    cluster = Cluster.objects.create(name="nowhere", bootstrap_servers="127.0.0.1:1", request_timeout_s=2)
    changes = evaluate.evaluate_cluster(cluster, timeout_s=15)
    (alert,) = Alert.objects.filter(cluster=cluster)
    assert changes.fired == [alert.pk]
    assert (alert.rule, alert.subject, alert.state, alert.severity) == (
        "cluster_unreachable",
        "",
        "firing",
        "critical",
    )
    assert alert.summary.startswith("nowhere cannot be reached: ")


def test_it_bounds_a_cluster_that_does_not_answer_in_time(own, cluster):
    own.inject_fault("Metadata", delay_s=3.0)
    try:
        started = time.monotonic()
        evaluate.evaluate_cluster(cluster, timeout_s=0.5)
        took = time.monotonic() - started
    finally:
        own.clear_faults()
    (alert,) = _open(cluster).values()
    assert alert.rule == "cluster_unreachable" and "no answer within 0.5 s" in alert.summary
    assert took < 2.0


def _produce(own, topic: str, partition: int, stamps_ms: list[int]) -> None:
    producer = Producer({"bootstrap.servers": own.bootstrap_servers})
    for i, stamp in enumerate(stamps_ms):
        producer.produce(topic, f"r{i}".encode(), partition=partition, timestamp=stamp)
    assert producer.flush(10) == 0


def test_it_fires_the_lag_alerts_of_a_group_ten_minutes_behind_by_offsets_and_by_time(own, cluster):
    now_ms = int(time.time() * 1000)
    _produce(own, "al.lag", 0, [now_ms - 11 * MINUTE_MS, now_ms - 10 * MINUTE_MS, now_ms - MINUTE_MS])
    _produce(own, "al.lag", 1, [now_ms - 2 * MINUTE_MS])
    own.add_group("al.behind", offsets={("al.lag", 0): 1, ("al.lag", 1): 0})  # 10 min and 2 min old
    own.add_group("al.current", offsets={("al.lag", 0): 3, ("al.lag", 1): 1})
    gw_times = evaluate.clusters.gateway_for(cluster).record_times(
        {TopicPartition("al.lag", 0): 1}, {TopicPartition("al.lag", 0): 1}
    )
    assert gw_times == {TopicPartition("al.lag", 0): now_ms - 10 * MINUTE_MS}
    from console.models.alerts import AlertRuleSetting

    AlertRuleSetting.objects.create(cluster=cluster, rule="group_lag", threshold=2)
    evaluate.evaluate_cluster(cluster)
    alerts = _open(cluster)
    time_lag = alerts[("group_time_lag", "group al.behind")]
    assert 600 <= time_lag.value < 660 and time_lag.threshold == 300.0
    assert time_lag.details == {
        "group": "al.behind", "topic": "al.lag", "partition": 0, "seconds": time_lag.value, "offset": 1,
    }  # fmt: skip
    assert time_lag.summary.startswith("group al.behind's position is 10 min old (at al.lag-0)")
    lag = alerts[("group_lag", "group al.behind")]
    assert (lag.value, lag.threshold) == (3.0, 2.0)
    assert ("group_time_lag", "group al.current") not in alerts and (
        "group_lag",
        "group al.current",
    ) not in alerts


def test_it_fires_for_throttles_left_with_no_reassignment_running(own, cluster, settings):
    settings.ALERTS_CONFIGS_MAX_AGE_S = 0  # the topics' configs are read again every round
    gw = evaluate.clusters.gateway_for(cluster)
    topic = ConfigResource("TOPIC", "al.rep")
    broker = ConfigResource("BROKER", "1")
    gw.incremental_alter_configs(
        {
            topic: [ConfigChange("leader.replication.throttled.replicas", "SET", "0:1")],
            broker: [ConfigChange("leader.replication.throttled.rate", "SET", "1048576")],
        }
    )
    try:
        evaluate.evaluate_cluster(cluster)
        left = _open(cluster)[("throttles_left", "")]
        assert (left.value, left.details) == (2.0, {"topics": ["al.rep"], "broker_rates": 1})
        assert left.summary == "2 throttle setting(s) with no reassignment running (topics al.rep)"
    finally:
        gw.incremental_alter_configs(
            {
                topic: [ConfigChange("leader.replication.throttled.replicas", "DELETE")],
                broker: [ConfigChange("leader.replication.throttled.rate", "DELETE")],
            }
        )
    evaluate.evaluate_cluster(cluster)
    assert Alert.objects.get(cluster=cluster, rule="throttles_left").state == "resolved"


def test_it_fires_when_the_active_controller_changes_and_measures_the_voters_lag(own, cluster):
    evaluate.evaluate_cluster(cluster)  # the quorum's epoch as it is now
    active = own.state.active_controller
    own.stop_controller(active)
    try:
        evaluate.evaluate_cluster(cluster)
    finally:
        own.start_controller(active)
    change = _open(cluster)[("controller_change", "")]
    assert change.value == 1.0 and change.details["leader"] not in (active, None)
    assert change.summary.startswith("the active controller changed 1 time(s) in the last 10 min")
    measured = measure.measure(cluster, evaluate.clusters.gateway_for(cluster))
    assert set(measured["quorum_lag"]) == {f"voter {c}" for c in own.state.controllers}


def test_the_evaluator_keeps_its_gateway_open_across_rounds_and_closes_a_removed_clusters(own, cluster):
    from console.kafka import KafkaGateway, get_gateway

    pool = evaluate.Evaluator(2)
    first, threads = pool.reader(cluster)
    assert isinstance(first, KafkaGateway) and pool.reader(cluster) == (first, threads)
    assert first is not get_gateway(first.conn)  # apart from the registry's capped LRU
    evaluate.evaluate_cluster(cluster, reader_of=pool.reader)
    assert first.is_open and pool.reader(cluster) == (first, threads)  # the next round reuses them
    for _ in range(3):  # the same threads serve every round: never more than READS
        evaluate.evaluate_cluster(cluster, reader_of=pool.reader)
    assert 0 < len(threads._threads) <= measure.READS and pool.reader(cluster)[1] is threads
    cluster.request_timeout_s = 6
    cluster.save()
    changed, _ = pool.reader(cluster)  # a changed connection: a new gateway, the old one closed
    assert changed is not first and not first.is_open and changed.conn.request_timeout_s == 6
    evaluate.evaluate_cluster(cluster, reader_of=pool.reader)
    assert changed.is_open
    pool.keep_only(set())  # the cluster was removed
    assert not changed.is_open and pool.reader(cluster)[0] is not changed
    pool.keep_only(set())
