"""A throttled move as the progress page tells it, on the sandbox and on a real cluster.

A follower is added under a replication throttle to a partition holding a few MB. While it
catches up, Kafka's DescribeLogDirs reports its offset lag as 0, so the console's "~N messages"
comes from the leader's offsets and size: it must be shown, and non-zero. "In sync" must never
be shown for a replica the ISR does not list (a replica level with the leader waits for the
leader's AlterPartition first).
"""

from __future__ import annotations

import re
import time

import pytest
from confluent_kafka import Producer

from console.models import Cluster, Operation
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment import store
from console.reassignment.progress import CAUGHT_UP, IN_SYNC, NOT_STARTED, replica_dicts
from tests.conftest import make_personas, run_now
from tests.contract.conftest import describe

pytestmark = [pytest.mark.contract, pytest.mark.django_db]

MB = 1024 * 1024
RECORD = b"x" * 1000
BEHIND = re.compile(r"^Behind: ~([\d,]+) messages / ")


def _fill(endpoints, topic: str, megabytes: int) -> int:
    producer = Producer(endpoints.client_config(**{"linger.ms": 20, "compression.type": "none"}))
    count = megabytes * MB // len(RECORD)
    for i in range(count):
        while True:
            try:
                producer.produce(topic, RECORD, partition=0)
                break
            except BufferError:
                producer.poll(0.1)
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    return count


def test_a_throttled_move_shows_messages_behind_and_in_sync_only_once_in_the_isr(
    endpoints, gw, topics, broker_ids, broker_rates_restored
):
    assert {1, 2} <= set(broker_ids), "needs brokers 1 and 2"
    cluster = Cluster.objects.create(
        name="contract", bootstrap_servers=endpoints.bootstrap_servers, request_timeout_s=10
    )
    people = make_personas(cluster)
    topic = topics.create(partitions=1, replication_factor=1, replica_assignment=((1,),))
    _fill(endpoints, topic, 24)

    op = reassignment.start_reassignment(
        actor=people["operator"],
        cluster=cluster,
        proposed={(topic, 0): (1, 2)},
        throttle=2 * MB,
        rf_change=True,
    )
    r = Reassignment.objects.get(operation=op)
    estimates, seen = [], []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        run_now(op.pk)
        r.refresh_from_db()
        entry = store.live_entry(r, topic, 0)
        rows = replica_dicts(entry.replicas) if entry else r.partitions.get().replicas
        status = {x["broker"]: x["status"] for x in rows}.get(2, "")
        if status:
            seen.append(status)
        if status == IN_SYNC:  # the ISR only grows during the move: read after, it must list 2
            assert 2 in describe(gw, topic).partitions[0].isr, seen[-5:]
        match = BEHIND.match(status)
        if match:
            estimates.append(int(match.group(1).replace(",", "")))
        if Operation.objects.get(pk=op.pk).finished:
            break
        time.sleep(0.2)
    op.refresh_from_db()
    assert op.state == "succeeded", (op.state, op.error, seen[-5:])
    assert estimates and max(estimates) > 0, f"no '~N messages' while catching up: {seen[:10]}"
    assert all(n <= 24 * MB // len(RECORD) * 1.2 for n in estimates), estimates  # no wild counts
    final = {x["broker"]: x["status"] for x in r.partitions.get().replicas}
    assert final[2] == IN_SYNC and 2 in describe(gw, topic).partitions[0].isr
    assert set(seen) <= {IN_SYNC, CAUGHT_UP, NOT_STARTED} | {s for s in seen if s.startswith("Behind: ")}
