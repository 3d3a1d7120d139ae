"""Classic group protocol: subscribe()-based consumers join, split partitions, commit and leave."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

pytestmark = []


def _produce(cluster, topic: str, n: int) -> None:
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for i in range(n):
        p.produce(topic, f"m{i}".encode(), partition=i % 4)
    assert p.flush(10) == 0


def _consumer(cluster, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 200,
        }
    )


def test_it_lets_a_subscribed_consumer_read_and_commit(cluster):
    cluster.create_topic("sub", 4, 2)
    _produce(cluster, "sub", 40)
    c = _consumer(cluster, "console")
    c.subscribe(["sub"])
    got, deadline = [], time.monotonic() + 15
    while len(got) < 40 and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and not m.error():
            got.append(m.value())
    c.commit(asynchronous=False)
    group = cluster.state.groups["console"]
    assert len(got) == 40 and group.state == "Stable" and len(group.live) == 1
    assert sum(group.offsets.values()) == 40
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    desc = admin.describe_consumer_groups(["console"])["console"].result(10)
    assert len(desc.members) == 1 and len(desc.members[0].assignment.topic_partitions) == 4
    c.close()
    assert cluster.state.groups["console"].state == "Empty"


def test_it_splits_partitions_between_two_members(cluster):
    cluster.create_topic("split", 4, 1)
    first, second = _consumer(cluster, "pair"), _consumer(cluster, "pair")
    first.subscribe(["split"])
    second.subscribe(["split"])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        first.poll(0.1)
        second.poll(0.1)
        a, b = first.assignment(), second.assignment()
        if len(a) + len(b) == 4 and a and b:
            break
    assert sorted(tp.partition for tp in first.assignment() + second.assignment()) == [0, 1, 2, 3]
    assert len(cluster.state.groups["pair"].live) == 2
    first.close()
    second.close()
