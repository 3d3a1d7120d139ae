"""Scheduled changes (console/changes/schedule.py) on the sandbox with a clock the test moves: a held
config change scheduled at T runs at T (on the first tick at or after it) and never before, after the
last drift check; a time inside a freeze (or outside the maintenance windows of a cluster that asks
for them) is refused; a freeze that begins after scheduling refuses the run at T with the reason
kept; two workers never queue it twice; the beat-less tick task does the same."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from console import operations
from console.changes import actions as changes
from console.changes import gate, schedule
from console.configs import actions as configs
from console.kafka import ConfigChange
from console.models import AuditEvent, Operation
from console.models.requests import RequestState
from console.models.windows import ScheduledChange, ScheduleState
from console.windows import actions as windows
from console.windows.guard import ChangeWindowClosed
from tasks import windows as window_tasks
from tests.conftest import hold
from tests.unit.test_changes import held_config, retention

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


class Clock:
    """django.utils.timezone.now, moved by the test (every console module reads the time through it)."""

    def __init__(self, start: datetime):
        self.at = start

    def __call__(self) -> datetime:
        return self.at

    def move(self, **delta) -> datetime:
        self.at += timedelta(**delta)
        return self.at


@pytest.fixture
def clock(monkeypatch):
    moved = Clock(datetime.now(UTC).replace(microsecond=0))
    monkeypatch.setattr(timezone, "now", moved)
    return moved


@pytest.fixture
def change(personas, kafka_cluster, topic, operator2):
    """A held config change (retention.ms 1000 -> 7200000) waiting for approval."""
    hold(kafka_cluster, personas["admin"], ["config"])
    return held_config(personas, kafka_cluster, topic)


def approved_at(change, operator2, at: datetime, actor):
    schedule.schedule_change(actor=actor, request=change, run_at=at)
    changes.approve_change(actor=operator2, request=change)
    change.refresh_from_db()
    return change


def run_its_operation(change):
    change.refresh_from_db()
    operations.run(change.operation_id, worker="test")
    change.refresh_from_db()
    return change


def test_it_runs_a_scheduled_change_at_its_time_and_not_before(
    personas, kafka_cluster, topic, change, operator2, clock
):
    t = clock.at + timedelta(hours=2)
    change = approved_at(change, operator2, t, personas["operator"])  # the author chose the time
    assert (change.state, change.operation_id) == (RequestState.APPROVED, None)
    clock.move(hours=1, minutes=59, seconds=59)
    assert schedule.run_due(worker="w1") == {}  # one second early: nothing
    change.refresh_from_db()
    assert change.operation_id is None and retention(kafka_cluster, topic) == "1000"
    clock.move(seconds=1)
    taken = schedule.run_due(worker="w1")
    assert list(taken.values()) == ["queued"]
    change = run_its_operation(change)
    assert change.state == RequestState.SUCCEEDED, change.result
    assert retention(kafka_cluster, topic) == "7200000"
    steps = [e.step for e in change.events.order_by("id")]
    assert steps == ["submitted", "scheduled", "approved", "due", "queued", "running", "succeeded"]
    row = ScheduledChange.objects.get(request=change)
    assert (row.state, row.run_at, row.taken_by) == (ScheduleState.QUEUED, t, "w1")
    applied = AuditEvent.objects.get(action="config.alter", outcome="success")
    assert applied.actor_name == "operator" and applied.request_id == f"change-{change.pk}"
    assert applied.created_at >= t


def test_two_workers_never_queue_it_twice(personas, change, operator2, clock):
    t = clock.at + timedelta(minutes=10)
    approved_at(change, operator2, t, operator2)  # an approver chose the time
    clock.move(minutes=10, seconds=5)
    (schedule_id,) = schedule.due()
    assert schedule.start(schedule_id, worker="w1") == "queued"
    assert schedule.start(schedule_id, worker="w2") is None
    assert schedule.run_due(worker="w3") == {}
    assert Operation.objects.filter(kind="request.execute").count() == 1


def test_it_refuses_a_time_inside_a_freeze_window(personas, kafka_cluster, change, clock):
    freeze = windows.add_window(
        actor=personas["admin"], cluster=kafka_cluster, kind="freeze", reason="year end",
        starts_at=clock.at + timedelta(days=1), ends_at=clock.at + timedelta(days=2),
    )  # fmt: skip
    with pytest.raises(ChangeWindowClosed, match=rf"frozen by window #{freeze.pk} \(year end\) until"):
        schedule.schedule_change(
            actor=personas["operator"], request=change, run_at=clock.at + timedelta(days=1, hours=3)
        )
    assert not ScheduledChange.objects.exists()
    refused = AuditEvent.objects.get(action="change.schedule", outcome="refused")
    assert "year end" in refused.params["reason"]
    ok = schedule.schedule_change(
        actor=personas["operator"], request=change, run_at=clock.at + timedelta(days=2)
    )
    assert ok.state == ScheduleState.WAITING  # the freeze's end is open: allowed from then


def test_maintenance_only_clusters_take_times_inside_a_maintenance_window_only(
    personas, kafka_cluster, change, clock
):
    windows.set_maintenance_only(actor=personas["admin"], cluster=kafka_cluster, maintenance_only=True)
    tomorrow = (clock.at + timedelta(days=1)).astimezone(UTC)
    windows.add_window(
        actor=personas["admin"], cluster=kafka_cluster, kind="maintenance", reason="nightly",
        weekday=tomorrow.weekday(), start_time=time(2, 0), duration_min=60, time_zone="UTC",
    )  # fmt: skip
    inside = datetime.combine(tomorrow.date(), time(2, 30), tzinfo=UTC)
    with pytest.raises(ChangeWindowClosed, match="only inside a maintenance window"):
        schedule.schedule_change(
            actor=personas["operator"], request=change, run_at=inside + timedelta(hours=1)
        )
    assert (
        schedule.schedule_change(actor=personas["operator"], request=change, run_at=inside).run_at == inside
    )
    assert AuditEvent.objects.get(action="window.settings.update").after == {"maintenance_only": True}


def test_a_freeze_set_after_scheduling_refuses_the_run_at_its_time_with_the_reason(
    personas, kafka_cluster, topic, change, operator2, clock
):
    t = clock.at + timedelta(hours=1)
    change = approved_at(change, operator2, t, personas["operator"])
    freeze = windows.add_window(
        actor=personas["admin"], cluster=kafka_cluster, kind="freeze", reason="incident 9",
        starts_at=t - timedelta(minutes=5), ends_at=t + timedelta(hours=3),
    )  # fmt: skip
    clock.move(hours=1)
    assert list(schedule.run_due(worker="w1").values()) == ["refused"]
    change.refresh_from_db()
    assert change.state == RequestState.FAILED and change.operation_id is None
    assert change.result["message"].startswith(
        f"not run at its time: Cluster 'sandbox' is frozen by window #{freeze.pk}"
    )
    row = ScheduledChange.objects.get(request=change)
    assert row.state == ScheduleState.REFUSED and "incident 9" in row.note
    event = AuditEvent.objects.get(action="change.schedule.refused")
    assert event.outcome == "refused" and "incident 9" in event.params["reason"]
    assert change.events.order_by("-id").first().step == "refused"
    assert retention(kafka_cluster, topic) == "1000"


def test_a_scheduled_change_drifted_meanwhile_goes_back_to_review(
    personas, kafka_cluster, topic, change, operator2, clock
):
    t = clock.at + timedelta(hours=1)
    change = approved_at(change, operator2, t, personas["operator"])
    with gate.passed("config"):  # someone changes the topic after the review
        configs.alter_configs(
            actor=personas["admin"], cluster=kafka_cluster, resource=configs.topic_resource(topic),
            changes=[ConfigChange("retention.ms", "SET", "3000")],
        )  # fmt: skip
    clock.move(hours=1, minutes=1)
    schedule.run_due(worker="w1")
    change = run_its_operation(change)
    assert change.state == RequestState.PENDING  # the last drift check sent it back
    assert retention(kafka_cluster, topic) == "3000"


def test_a_scheduled_change_keeps_the_approvals_it_had_when_approved(
    personas, kafka_cluster, topic, change, operator2, clock, settings
):
    settings.APPROVAL_TTL_H = 1
    t = clock.at + timedelta(hours=5)  # later than the approvals' time to live
    change = approved_at(change, operator2, t, personas["operator"])
    clock.move(hours=5)
    schedule.run_due(worker="w1")
    assert run_its_operation(change).state == RequestState.SUCCEEDED
    assert retention(kafka_cluster, topic) == "7200000"


def test_the_tick_task_runs_what_is_due(personas, kafka_cluster, topic, change, operator2, clock):
    t = clock.at + timedelta(minutes=30)
    change = approved_at(change, operator2, t, personas["operator"])
    assert window_tasks.tick() == {}
    clock.move(minutes=30)
    assert list(window_tasks.tick().values()) == ["queued"]
    assert run_its_operation(change).state == RequestState.SUCCEEDED


def test_it_refuses_a_past_time_an_unheld_request_and_a_stranger(personas, kafka_cluster, change, clock):
    with pytest.raises(changes.ChangeInvalid, match="in the past"):
        schedule.schedule_change(
            actor=personas["operator"], request=change, run_at=clock.at - timedelta(minutes=1)
        )
    with pytest.raises(PermissionDenied):
        schedule.schedule_change(
            actor=personas["viewer"], request=change, run_at=clock.at + timedelta(hours=1)
        )


def test_an_approved_change_taken_off_its_schedule_is_cancelled_and_never_runs(
    personas, kafka_cluster, topic, change, operator2, clock
):
    t = clock.at + timedelta(hours=1)
    change = approved_at(change, operator2, t, personas["operator"])
    with pytest.raises(PermissionDenied):
        schedule.cancel_schedule(actor=personas["viewer"], request=change)
    change = schedule.cancel_schedule(actor=personas["operator"], request=change)
    assert change.state == RequestState.CANCELLED
    assert ScheduledChange.objects.get(request=change).state == ScheduleState.CANCELLED
    clock.move(hours=2)
    assert schedule.run_due(worker="w1") == {}
    assert (
        retention(kafka_cluster, topic) == "1000"
        and change.events.order_by("-id").first().step == "cancelled"
    )
    with pytest.raises(changes.ChangeInvalid, match="not waiting for a scheduled time"):
        schedule.cancel_schedule(actor=operator2, request=change)
    assert (
        AuditEvent.objects.get(action="change.schedule.cancel", outcome="success").params["cancelled"] is True
    )


def test_a_change_queued_by_the_tick_can_no_longer_be_taken_off(personas, change, operator2, clock):
    t = clock.at + timedelta(minutes=5)
    change = approved_at(change, operator2, t, personas["operator"])
    clock.move(minutes=5)
    assert list(schedule.run_due(worker="w1").values()) == ["queued"]
    with pytest.raises(changes.ChangeInvalid, match="not waiting"):
        schedule.cancel_schedule(actor=operator2, request=change)


def test_the_calendar_leaves_out_a_scheduled_change_rejected_before_its_time(
    personas, kafka_cluster, change, operator2, clock
):
    from console.requests import actions as requests
    from console.windows import reads as window_reads

    schedule.schedule_change(actor=personas["operator"], request=change, run_at=clock.at + timedelta(hours=3))
    listed = window_reads.calendar(actor=personas["viewer"], cluster=kafka_cluster, days=2)
    assert [c["request"] for d in listed for c in d.changes] == [change.pk]
    requests.decide(actor=operator2, request=change, approve=False, comment="not this week")
    listed = window_reads.calendar(actor=personas["viewer"], cluster=kafka_cluster, days=2)
    assert [c["request"] for d in listed for c in d.changes] == []


def test_a_throttled_move_scheduled_for_two_in_the_morning_starts_then(
    personas, kafka_cluster, frozen, operator2, clock
):
    from console.models.reassignment import Reassignment
    from console.reassignment import actions as reassignment
    from console.reassignment import held as reassignment_held
    from tests.unit.matrix_world import kafka_restored
    from tests.unit.reassign_world import MB, make_topic

    with kafka_restored(frozen):  # the move's topic and throttles leave the shared sandbox
        hold(kafka_cluster, personas["admin"], ["reassignment"])
        topic = make_topic(frozen, [[1, 2]], mb_per_partition=1)
        preview = reassignment.preview_plan(kafka_cluster, {(topic, 0): (1, 3)}, throttle=MB)
        prepared = reassignment_held.prepare_reassignment(
            personas["operator"], kafka_cluster, preview, throttle=MB, elect_preferred=False, rf_change=False
        )
        req = changes.submit_change(actor=personas["operator"], cluster=kafka_cluster, prepared=prepared)
        two = (clock.at + timedelta(days=1)).replace(hour=2, minute=0, second=0)
        req = approved_at(req, operator2, two, personas["operator"])
        clock.at = two - timedelta(seconds=1)
        assert schedule.run_due(worker="w1") == {} and not Reassignment.objects.exists()
        clock.at = two
        assert list(schedule.run_due(worker="w1").values()) == ["queued"]
        assert run_its_operation(req).state == RequestState.SUCCEEDED, req.result
        moved = Reassignment.objects.get(cluster=kafka_cluster)
        assert moved.throttle_bytes_per_s == MB
        assert list(moved.partitions.values_list("topic", "partition", "target")) == [(topic, 0, [1, 3])]
