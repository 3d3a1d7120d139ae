"""The console's transactions area (KIP-664) on the sandbox and on a real Kafka 4.1, unchanged: a
confluent-kafka transactional producer opens a transaction on two partitions of this test's own topic;
the gateway lists it (by state, producer id and duration: ListTransactions v1), describes it at its
coordinator and shows the partitions' producers with the open transaction's start offset; find-hanging
finds nothing (its coordinator knows it). Then the console's abort by start offset - what
``kafka-transactions.sh abort --start-offset`` does, which Kafka accepts for any open transaction, not
only a hanging one - closes it on one partition: WriteTxnMarkers to the leader, the last stable offset
moves to the high watermark, the producer state shows no open transaction. The producer then aborts its
own transaction (the coordinator's markers close the rest). Only this test's topic and transactional
id are used."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import Producer

from console.clusters.actions import gateway_for
from console.models import AuditEvent, Cluster
from console.transactions import actions, reads

from .conftest import eventually

pytestmark = [pytest.mark.contract, pytest.mark.django_db]
TIMEOUT_MS = 600_000


@pytest.fixture
def cluster(endpoints, django_user_model):
    c = Cluster.objects.create(name="txn-contract", bootstrap_servers=endpoints.bootstrap_servers)
    yield c


@pytest.fixture
def admin(django_user_model):
    return django_user_model.objects.create_superuser(username="txn-admin", password="pw-txn-admin")


def test_the_console_lists_describes_and_aborts_an_open_transaction(
    endpoints: Any, topics: Any, cluster, admin
):
    topic = topics.create(partitions=2, replication_factor=3)
    tid = f"ct-ctxn-{uuid.uuid4().hex[:10]}"
    producer = Producer(
        endpoints.client_config(**{"transactional.id": tid, "transaction.timeout.ms": TIMEOUT_MS})
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    for p in (0, 1):
        for i in range(3):
            producer.produce(topic, f"r{i}".encode(), partition=p)
    producer.flush(20)
    try:
        gw = gateway_for(cluster)
        rows = eventually(
            lambda: [r for r in gw.list_transactions(states=["Ongoing"]) if r[0] == tid],
            lambda r: len(r) == 1,
        )
        (_, coordinator, pid, state), = rows  # fmt: skip
        assert state == "Ongoing"
        assert [r[0] for r in gw.list_transactions(producer_ids=[pid])] == [tid]
        assert tid not in [r[0] for r in gw.list_transactions(states=["Empty"])]
        # running longer than 1 ms: at once on Kafka, after the sandbox's virtual clock's next tick
        assert tid in eventually(
            lambda: [r[0] for r in gw.list_transactions(duration_ms=1)], lambda ids: tid in ids
        )
        assert tid not in [r[0] for r in gw.list_transactions(duration_ms=3_600_000)]
        d = reads.describe(actor=admin, cluster=cluster, transactional_id=tid)
        assert (d.state, d.producer_id, d.coordinator, d.timeout_ms) == (
            "Ongoing",
            pid,
            coordinator,
            TIMEOUT_MS,
        )
        assert d.partitions == ((topic, 0), (topic, 1)) and d.start_time_ms > 0
        assert reads.describe(actor=admin, cluster=cluster, transactional_id=tid + "-never") is None
        producers = reads.producers(actor=admin, cluster=cluster, topic=topic)
        for p in (0, 1):
            (s,) = [s for s in producers[p] if s.producer_id == pid]
            assert (s.producer_epoch, s.txn_start_offset, s.last_sequence) == (d.producer_epoch, 0, 2)
        found = reads.find_hanging(actor=admin, cluster=cluster, topic=topic, max_timeout_min=0)
        assert (found.rows, found.partitions, found.open_count) == ([], 2, 2)
        assert reads.last_stable_offset(cluster, topic, 1) == 0
        result = actions.abort_transaction(
            actor=admin, cluster=cluster, topic=topic, partition=1, start_offset=0, confirmation=f"{topic}-1"
        )
        assert (result.ok, result.confirmed, result.lso_before, result.lso_after) == (True, True, 0, 4), (
            result
        )
        assert result.spec.producer_id == pid
        assert [e.outcome for e in AuditEvent.objects.filter(action="transaction.abort").order_by("pk")] == [
            "requested",
            "success",
        ]
        after = reads.producers(actor=admin, cluster=cluster, topic=topic)
        assert [s.txn_start_offset for s in after[1] if s.producer_id == pid] == [-1]
        assert [s.txn_start_offset for s in after[0] if s.producer_id == pid] == [0]  # only partition 1
    finally:
        producer.abort_transaction(30)
        del producer
    eventually(
        lambda: reads.last_stable_offset(cluster, topic, 0), lambda lso: lso == 4
    )  # the producer's own abort: the coordinator's marker
