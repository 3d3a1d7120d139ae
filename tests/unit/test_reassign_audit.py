"""What the audit trail keeps of a reassignment: the plan, throttle changes, the cancel, the end."""

from __future__ import annotations

import pytest

from console.models import AuditEvent
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment import janitor as reassign_janitor
from console.reassignment import store, throttles
from console.topics.reads import recent_events
from tests.conftest import run_now, run_until_finished
from tests.unit.test_reassign_run import MB, make_topic

pytestmark = pytest.mark.django_db


def _events(op) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(operation_id=op.pk).order_by("id"))


def test_the_start_records_each_partitions_move_and_the_plans_digest(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2], [2, 3]], mb_per_partition=1)
    op = reassignment.start_reassignment(
        actor=personas["operator"],
        cluster=kafka_cluster,
        proposed={(topic, 0): (1, 3), (topic, 1): (3, 1)},
        throttle=None,
    )
    started = AuditEvent.objects.get(action="reassignment.execute.requested", operation_id=op.pk)
    assert started.params["moves"] == [[topic, 0, [1, 2], [1, 3]], [topic, 1, [2, 3], [3, 1]]]
    r = Reassignment.objects.get(operation=op)
    kept = r.partitions.values_list("topic", "partition", "original", "target")
    assert started.params["plan_sha256"] == store.plan_digest(kept)
    assert started.params["plan_sha256"] != store.plan_digest([(topic, 0, [1, 2], [1, 2])])


def test_throttle_change_and_cancel_are_recorded_with_before_after_and_cancelled(
    personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1, 2]], mb_per_partition=20)
    op = reassignment.start_reassignment(
        actor=personas["operator"], cluster=kafka_cluster, proposed={(topic, 0): (1, 3)}, throttle=1 * MB
    )
    run_now(op.pk)
    r = Reassignment.objects.get(operation=op)
    throttles.change_throttle(actor=personas["operator"], reassignment=r, rate=2 * MB)
    changed = AuditEvent.objects.get(action="reassignment.throttle.changed", operation_id=op.pk)
    assert (changed.before, changed.after) == ({"rate": MB}, {"rate": 2 * MB})
    r.refresh_from_db()
    reassignment.cancel_reassignment(actor=personas["operator"], reassignment=r)
    run_until_finished(op, 10)
    assert op.state == "cancelled"
    outcomes = {e.action: e.outcome for e in _events(op)}
    assert outcomes["reassignment.cancel"] == "requested"
    assert outcomes["reassignment.execute.cancelled"] == "cancelled"
    # every event of the move is in the topic's recent changes, though most name brokers or configs
    listed = {e.pk for e in recent_events(kafka_cluster, topic, limit=50)}
    assert {e.pk for e in _events(op)} <= listed
    assert {"reassignment.throttle.set", "reassignment.throttle.remove", "reassignment.throttle.changed"} <= {
        e.action for e in _events(op)
    }


def test_a_move_finished_while_the_console_was_down_is_measured_and_its_throttles_removed_once(
    personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1]], mb_per_partition=30)
    op = reassignment.start_reassignment(  # once done, broker 1 no longer hosts the partition
        actor=personas["operator"], cluster=kafka_cluster, proposed={(topic, 0): (3,)}, throttle=2 * MB
    )
    run_now(op.pk)  # throttles set, submitted
    run_now(op.pk)
    frozen.advance(120)  # the console is down while Kafka finishes the move
    reassign_janitor.sweep_throttles()  # the janitor runs meanwhile: not its throttles to take
    run_until_finished(op, 10)
    reassign_janitor.sweep_throttles()
    assert op.state == "succeeded", op.error
    r = Reassignment.objects.get(operation=op)
    row = r.partitions.get()
    assert row.bytes_total >= 30 * MB and row.bytes_done == row.bytes_total  # the new replica's log
    assert op.result["bytes_moved"] >= 30 * MB
    removals = AuditEvent.objects.filter(action="reassignment.throttle.remove", operation_id=op.pk)
    assert removals.count() == 1
