"""Transactions on the sandbox through the area: the list (paged, filtered), one transactional id, a
partition's producers, a hanging transaction found as ``find-hanging`` finds it (and an open one of a
live producer not), the abort by start offset with its audit trail and the last stable offset before
and after, the permission, and bad input refused with nothing sent."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from console.clusters.actions import gateway_for
from console.models import AuditEvent
from console.transactions import actions, reads
from console.transactions.reads import TxnInvalid
from tests.unit.txn_world import make_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(kafka_cluster, sandbox):
    yield from make_world(kafka_cluster, sandbox)


def test_the_list_describe_and_producers_show_the_open_transaction(personas, kafka_cluster, world):
    viewer, tid, topic = personas["viewer"], world["tid"], world["topic"]
    listed = reads.list_page(actor=viewer, cluster=kafka_cluster, states=["Ongoing"])
    row = next(r for r in listed.rows if r.transactional_id == tid)
    assert row.state == "Ongoing" and listed.total == len(listed.rows) >= 1
    d = reads.describe(actor=viewer, cluster=kafka_cluster, transactional_id=tid)
    assert (d.state, d.producer_id, d.partitions, d.timeout_ms) == (
        "Ongoing",
        row.producer_id,
        ((topic, 0),),
        600_000,
    )
    assert d.coordinator == row.coordinator and d.start_time_ms > 0
    assert reads.describe(actor=viewer, cluster=kafka_cluster, transactional_id=tid + "-never") is None
    assert not any(
        r.transactional_id == tid
        for r in reads.list_page(actor=viewer, cluster=kafka_cluster, states=["Empty"]).rows
    )
    by_pid = reads.list_page(actor=viewer, cluster=kafka_cluster, producer_ids=[row.producer_id])
    assert [r.transactional_id for r in by_pid.rows] == [tid]
    got = reads.producers(actor=viewer, cluster=kafka_cluster, topic=topic)
    (mine,) = [s for s in got[0] if s.producer_id == row.producer_id]
    assert mine.txn_start_offset == 0
    (hung,) = got[1]
    assert (hung.producer_id, hung.txn_start_offset, hung.coordinator_epoch) == (
        world["hung"]["producer_id"],
        1,
        -1,
    )


def test_find_hanging_finds_the_lost_transaction_only(personas, kafka_cluster, world):
    topic, viewer = world["topic"], personas["viewer"]
    found = reads.find_hanging(actor=viewer, cluster=kafka_cluster, topic=topic, max_timeout_min=0)
    assert [(t.partition, t.producer_id, t.start_offset) for t in found.rows] == [
        (1, world["hung"]["producer_id"], 1)
    ]  # the live producer's transaction (as young as it is) is known to its coordinator: not hanging
    assert (found.partitions, found.open_count) == (2, 2)
    assert found.rows[0].duration_min(found.now_ms) >= 19
    assert reads.find_hanging(actor=viewer, cluster=kafka_cluster, topic=topic, max_timeout_min=30).rows == []
    leader = gateway_for(kafka_cluster).describe_topics([topic])[topic].partitions[1].replicas[0]
    on_broker = reads.find_hanging(actor=viewer, cluster=kafka_cluster, broker_id=leader)
    assert (topic, 1, world["hung"]["producer_id"]) in [
        (t.topic, t.partition, t.producer_id) for t in on_broker.rows
    ]
    with pytest.raises(TxnInvalid, match="topic or a broker id"):
        reads.find_hanging(actor=viewer, cluster=kafka_cluster)


def test_an_admin_aborts_the_hanging_transaction_with_the_audit_trail(personas, kafka_cluster, world):
    topic, hung = world["topic"], world["hung"]
    assert reads.last_stable_offset(kafka_cluster, topic, 1) == 1
    result = actions.abort_transaction(
        actor=personas["admin"], cluster=kafka_cluster, topic=topic, partition=1, start_offset=1,
        confirmation=f"{topic}-1",
    )  # fmt: skip
    assert (result.ok, result.confirmed, result.lso_before, result.lso_after) == (True, True, 1, 4)
    assert (result.spec.producer_id, result.spec.coordinator_epoch) == (hung["producer_id"], 0)
    assert reads.find_hanging(actor=personas["viewer"], cluster=kafka_cluster, topic=topic).rows == []
    events = list(AuditEvent.objects.filter(action="transaction.abort").order_by("pk"))
    assert [(e.outcome, e.actor_name, e.targets) for e in events] == [
        ("requested", "admin", [f"partition:{topic}-1"]),
        ("success", "admin", [f"partition:{topic}-1"]),
    ]
    assert events[1].before == {"last_stable_offset": 1, "open_transactions": f"{hung['producer_id']}/0@1"}
    assert events[1].after == {"last_stable_offset": 4, "open_transactions": "none open"}
    assert events[0].params["producer_id"] == hung["producer_id"]


def test_an_operator_may_not_abort_and_nothing_is_sent(personas, kafka_cluster, world):
    topic = world["topic"]
    with pytest.raises(PermissionDenied):
        actions.abort_transaction(
            actor=personas["operator"], cluster=kafka_cluster, topic=topic, partition=1, start_offset=1,
            confirmation=f"{topic}-1",
        )  # fmt: skip
    assert reads.last_stable_offset(kafka_cluster, topic, 1) == 1
    assert AuditEvent.objects.filter(action="transaction.abort", outcome="refused").count() == 1


@pytest.mark.parametrize(
    "partition,start,confirm,said",
    [
        (1, 2, "{t}-1", "Could not find any open transactions starting at offset 2 on partition {t}-1"),
        (1, 1, "{t}-0", "Type the topic-partition"),
        ("x", 1, "{t}-x", "partition must be a whole number"),
        (1, -5, "{t}-1", "start offset must be from 0"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    personas, kafka_cluster, world, partition, start, confirm, said
):
    topic = world["topic"]
    with pytest.raises(TxnInvalid) as exc:
        actions.abort_transaction(
            actor=personas["admin"], cluster=kafka_cluster, topic=topic, partition=partition, start_offset=start,
            confirmation=confirm.format(t=topic),
        )  # fmt: skip
    assert said.format(t=topic) in str(exc.value)
    assert reads.last_stable_offset(kafka_cluster, topic, 1) == 1
    assert not AuditEvent.objects.filter(action="transaction.abort", outcome="requested").exists()


def test_the_reconciler_re_reads_an_abort_whose_outcome_was_lost(personas, kafka_cluster, world):
    """An abort owed its outcome (the write failed) is settled from the partition as Kafka shows it:
    its open transactions and last stable offset now."""
    from console.audit import outcomes
    from console.models import OwedOutcome

    topic, hung = world["topic"], world["hung"]
    outcomes.requested(
        actor=personas["admin"], action="transaction.abort", cluster=kafka_cluster,
        targets=[f"partition:{topic}-1"], params={"topic": topic, "partition": 1, "start_offset": 1},
    )  # fmt: skip
    assert outcomes.reconcile(grace_s=0) == 1
    (event,) = AuditEvent.objects.filter(action="transaction.abort", outcome="reconciled")
    assert event.after == {"last_stable_offset": 1, "open_transactions": f"{hung['producer_id']}/0@1"}
    assert not OwedOutcome.objects.exists()
