"""Any-broker reads go to a connected broker with the fewest requests in flight: a DescribeCluster
asked while a whole-cluster Metadata answer (46 MB at 1M partitions) is in flight on broker 1's
connection goes to another broker, not behind it (Kafka answers a connection's requests in order)."""

from __future__ import annotations

import time
from collections import deque
from types import SimpleNamespace

from console.kafka.kp_failover import FailoverMixin


def client(conns: dict, suspects: dict | None = None, brokers=(1, 2, 3, 4)):
    cluster = SimpleNamespace(
        brokers=lambda: [SimpleNamespace(node_id=b) for b in brokers],
        bootstrap_brokers=lambda: [],
    )
    return SimpleNamespace(_manager=SimpleNamespace(_conns=conns, cluster=cluster), _suspects=suspects or {})


def conn(connected: bool, in_flight: int = 0):
    return SimpleNamespace(connected=connected, in_flight_requests=deque(range(in_flight)))


def test_an_idle_connected_broker_comes_before_a_busy_one():
    kp = client({1: conn(True, 1), 2: conn(True, 0), 3: conn(False), 4: conn(True, 2)})
    assert FailoverMixin._ranked_brokers(kp) == [2, 1, 4, 3]


def test_connected_still_beats_idle_and_suspects_still_come_last():
    kp = client({1: conn(True, 3), 2: conn(False), 4: conn(True, 0)}, suspects={4: time.monotonic()})
    assert FailoverMixin._ranked_brokers(kp) == [1, 2, 3, 4]
