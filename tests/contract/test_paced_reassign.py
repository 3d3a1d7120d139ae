"""A paced move (at most one partition in flight per broker) on the sandbox and on a real cluster:
Kafka never moves more than N partitions per broker at once, the throttled-replicas entries of
finished partitions leave the topic's configs while others still move, pause stops new
submissions and resume goes on, and at the end no throttle is left on any broker or topic.

``PACED_MB_PER_PARTITION`` (default 2) sizes the partitions: a larger one makes the move last
long enough to watch with Kafka's own tools (kafka-topics --describe, kafka-configs --describe)."""

from __future__ import annotations

import os
import time
from collections import Counter

import pytest
from confluent_kafka import Producer

from console.kafka import ConfigResource, KafkaOperationError, NewTopic, TopicPartition
from console.models import Cluster, OperationState
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment import queue, throttles
from console.reassignment.pacing import Pacing
from tests.conftest import make_personas, run_now
from tests.contract.conftest import eventually, unique

pytestmark = [pytest.mark.contract, pytest.mark.django_db]

MB = 1024 * 1024
RECORD = b"x" * 1000
PARTITIONS = 6


def _fill(endpoints, topic: str, megabytes: int) -> None:
    producer = Producer(endpoints.client_config(**{"linger.ms": 20, "compression.type": "none"}))
    for partition in range(PARTITIONS):
        for i in range(megabytes * MB // len(RECORD)):
            while True:
                try:
                    producer.produce(topic, RECORD, partition=partition)
                    break
                except BufferError:
                    producer.poll(0.1)
            if i % 1000 == 0:
                producer.poll(0)
    assert producer.flush(120) == 0


def _moving_per_broker(gw, topic: str) -> tuple[list[int], Counter]:
    listed = gw.list_partition_reassignments([TopicPartition(topic, p) for p in range(PARTITIONS)])
    per_broker: Counter = Counter()
    for r in listed.values():
        per_broker.update(set(r.adding) | set(r.removing))
    return sorted(tp.partition for tp in listed), per_broker


def _topic_throttles(gw, topic: str) -> dict[str, str]:
    res = ConfigResource("TOPIC", topic)
    entries = gw.describe_configs([res])[res]
    return {
        k: entries[k].value for k in throttles.REPLICA_CONFIGS if entries[k].source == "DYNAMIC_TOPIC_CONFIG"
    }


def _broker_throttles(gw, brokers) -> dict:
    res = [ConfigResource("BROKER", str(b)) for b in brokers]
    out = {}
    for r, entries in gw.describe_configs(res).items():
        for k in throttles.RATE_CONFIGS:
            if k in entries and entries[k].source == "DYNAMIC_BROKER_CONFIG":
                out[(r.name, k)] = entries[k].value
    return out


def test_a_paced_move_keeps_to_n_per_broker_gives_throttles_back_and_pauses(
    endpoints, gw, topics, broker_ids, broker_rates_restored
):
    assert {1, 2, 3} <= set(broker_ids), "needs brokers 1, 2 and 3"
    cluster = Cluster.objects.create(
        name="contract", bootstrap_servers=endpoints.bootstrap_servers, request_timeout_s=10
    )
    people = make_personas(cluster)
    topic = unique("ct-paced")
    topics.names.append(topic)
    spec = NewTopic(topic, PARTITIONS, 2, tuple((1, 2) for _ in range(PARTITIONS)), {})
    assert not isinstance(gw.create_topics([spec])[topic], KafkaOperationError)
    eventually(
        lambda: gw.describe_topics([topic])[topic],
        lambda r: not isinstance(r, KafkaOperationError) and all(p.leader >= 0 for p in r.partitions),
    )
    _fill(endpoints, topic, int(os.environ.get("PACED_MB_PER_PARTITION", "2")))

    # every partition adds 3 and removes 2: with N=1 one partition at a time
    op = reassignment.start_reassignment(
        actor=people["operator"],
        cluster=cluster,
        proposed={(topic, p): (1, 3) for p in range(PARTITIONS)},
        throttle=MB,
        pacing=Pacing(max_moves=1, leader=2 * MB, follower=MB),
    )
    r = Reassignment.objects.get(operation=op)
    most: Counter = Counter()
    given_back = False
    paused_at = resumed = None
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        run_now(op.pk)
        op.refresh_from_db()
        if op.finished:
            break
        moving, per_broker = _moving_per_broker(gw, topic)
        for b, n in per_broker.items():
            most[b] = max(most[b], n)
        assert all(n <= 1 for n in per_broker.values()), (moving, per_broker)
        done = list(r.partitions.filter(state="done").values_list("partition", flat=True))
        if done and moving:
            # a finished partition's entries have left the topic's lists while another moves
            value = _topic_throttles(gw, topic)
            entries = set(value.get(throttles.FOLLOWER_REPLICAS, "").split(","))
            assert not {f"{p}:3" for p in done} & entries, (done, value)
            assert {f"{p}:3" for p in moving} <= entries, (moving, value)
            given_back = True
        if done and paused_at is None:
            queue.pause_reassignment(actor=people["operator"], reassignment=r)
            paused_at = time.monotonic()
            queued_then = r.partitions.filter(state="pending").count()
        elif paused_at is not None and resumed is None:
            # paused: what was in flight finishes; nothing new starts
            assert r.partitions.filter(state="pending").count() == queued_then
            if not moving and time.monotonic() - paused_at > 3:
                queue.resume_reassignment(actor=people["operator"], reassignment=r)
                resumed = time.monotonic()
        time.sleep(0.5)
    op.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED, op.error
    assert resumed is not None and given_back
    assert max(most.values()) == 1, most
    assert _topic_throttles(gw, topic) == {}
    assert _broker_throttles(gw, broker_ids) == {}
    assert [list(p.replicas) for p in gw.describe_topics([topic])[topic].partitions] == [[1, 3]] * PARTITIONS
