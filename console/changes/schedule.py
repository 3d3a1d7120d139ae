"""Scheduled changes: an approved held change runs at a chosen time, never before, and never in a
freeze window.

- ``schedule_change``: the author (while it waits for approval) or an approver (while it waits for
  approval or to run) sets the time. Refused when the time falls in a freeze window, or outside
  every maintenance window on a cluster that allows changes only inside one.
- ``after_approval``: what the last approval does: run now, or wait - for its scheduled time, or,
  approved while a freeze (or the maintenance-only rule) forbids running, for the next moment one
  may run (scheduled then by the system, shown in the queue and the calendar).
- ``run_due``: the tick (``tasks.windows.tick`` on the poll queue, every WINDOWS_TICK_S): each
  scheduled change whose time has come is taken with a conditional UPDATE (waiting -> queued, so of
  two workers only one goes on), checked against the windows at that moment and either queued on
  the ``request.execute`` worker (which checks drift and expiry once more: ``actions.execute``) or
  refused with the reason on its timeline and in the audit trail.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console import access
from console.audit.refusals import refused_as
from console.changes import audit_names as names
from console.changes import gate
from console.changes import kinds as held_kinds
from console.changes.kinds import ChangeInvalid
from console.changes.notify import announce, notify_requester
from console.changes.queue import queue_run, record_event, record_step
from console.models.requests import ChangeRequest, RequestState
from console.models.windows import ScheduledChange, ScheduleState
from console.notify import events as notify_events
from console.windows import guard

SYSTEM = "system"


def horizon() -> timedelta:
    return timedelta(days=float(settings.SCHEDULE_HORIZON_DAYS))


def waiting(req: ChangeRequest) -> ScheduledChange | None:
    """The change's schedule while it waits for its time (None: it has none)."""
    return ScheduledChange.objects.filter(request=req, state=ScheduleState.WAITING).first()


def scheduled_at(req: ChangeRequest) -> datetime | None:
    found = waiting(req)
    return found.run_at if found is not None else None


def of(req: ChangeRequest) -> ScheduledChange | None:
    """The change's schedule in any state, as read with it (``select_related("schedule")`` keeps a
    list of changes at one query), or None when it never had one."""
    try:
        return req.schedule
    except ScheduledChange.DoesNotExist:
        return None


def was_scheduled(req: ChangeRequest) -> bool:
    """Whether the change is running because its scheduled time came (its schedule was queued)."""
    return ScheduledChange.objects.filter(request=req, state=ScheduleState.QUEUED).exists()


def check_frozen(req: ChangeRequest) -> None:
    """Right before a request or held change runs on the worker: ChangeWindowClosed while a freeze is
    in force on its cluster (recorded as the run's failure, with the window and its end)."""
    guard.check_frozen(req.cluster)


def _may_schedule(actor, req: ChangeRequest) -> None:
    if req.requested_by_id == getattr(actor, "pk", None) and req.state == RequestState.PENDING:
        access.require(actor, req.cluster, gate.PERMISSIONS[held_kinds.get(req.kind).gate_of(req.payload)])
        return
    access.require(actor, req.cluster, access.APPROVE)


@refused_as(names.SCHEDULE, ChangeInvalid, targets=lambda k: [f"request:{k['request'].pk}"])
def schedule_change(
    *, actor, request: ChangeRequest, run_at: datetime, source_ip: str | None = None
) -> ScheduledChange:
    """Set (or move) the time a held change (or a self-service request) runs: not before ``run_at``."""
    req = request
    _may_schedule(actor, req)
    if req.state not in (RequestState.PENDING, RequestState.APPROVED) or (
        req.state == RequestState.APPROVED and waiting(req) is None
    ):
        raise ChangeInvalid(
            [f"change #{req.pk} is {req.get_state_display().lower()}: it cannot be scheduled"]
        )
    if timezone.is_naive(run_at):
        raise ChangeInvalid(["the time must carry its time zone"])
    run_at = run_at.astimezone(UTC)
    now = timezone.now()
    if run_at <= now:
        raise ChangeInvalid(["the time is in the past: approve it to run it now"])
    if run_at > now + horizon():
        raise ChangeInvalid([f"the time is more than {settings.SCHEDULE_HORIZON_DAYS} days ahead"])
    closed = guard.refusal(req.cluster, run_at)
    if closed is not None:
        raise closed
    with transaction.atomic():
        row, _ = ScheduledChange.objects.select_for_update().update_or_create(
            request=req,
            defaults={
                "run_at": run_at,
                "state": ScheduleState.WAITING,
                "scheduled_by_name": actor.get_username(),
                "taken_by": "",
                "note": "",
            },
        )
        record_event(
            req,
            actor=actor,
            action=names.SCHEDULE,
            outcome="success",
            params={"kind": req.kind, "run_at": run_at.isoformat()},
            step="scheduled",
            text=f"runs at {run_at:%Y-%m-%d %H:%M} UTC, not before",
            source_ip=source_ip,
            on_behalf_of=req.requested_by_name if req.requested_by_id != actor.pk else "",
        )
    return row


@refused_as(names.SCHEDULE_CANCEL, ChangeInvalid, targets=lambda k: [f"request:{k['request'].pk}"])
def cancel_schedule(*, actor, request: ChangeRequest, source_ip: str | None = None) -> ChangeRequest:
    """Take a held change off its schedule: waiting for approval, it then runs when approved; approved
    and waiting for its time, it is cancelled (it never runs). Its author or an approver; of this and
    the tick, one conditional UPDATE wins."""
    req = request
    if req.requested_by_id == getattr(actor, "pk", None):
        access.require(actor, req.cluster, gate.PERMISSIONS[held_kinds.get(req.kind).gate_of(req.payload)])
    else:
        access.require(actor, req.cluster, access.APPROVE)
    with transaction.atomic():
        taken = ScheduledChange.objects.filter(request=req, state=ScheduleState.WAITING).update(
            state=ScheduleState.CANCELLED, note=f"cancelled by {actor.get_username()}"
        )
        if not taken:
            raise ChangeInvalid([f"change #{req.pk} is not waiting for a scheduled time"])
        cancelled = ChangeRequest.objects.filter(pk=req.pk, state=RequestState.APPROVED).update(
            state=RequestState.CANCELLED, finished_at=timezone.now()
        )
        record_event(
            req,
            actor=actor,
            action=names.SCHEDULE_CANCEL,
            outcome="success",
            params={"kind": req.kind, "cancelled": bool(cancelled)},
            step="cancelled" if cancelled else "unscheduled",
            text="the approved change will not run" if cancelled else "it runs when approved",
            source_ip=source_ip,
        )
    req.refresh_from_db()
    return req


def after_approval(req: ChangeRequest) -> datetime | None:
    """Before the last approval is written: None when the change may run now; else when it will
    (its schedule, or the next moment the windows allow). ChangeInvalid when no moment within the
    horizon allows it."""
    when = scheduled_at(req)
    if when is not None:
        return when
    now = timezone.now()
    if guard.refusal(req.cluster, now) is None:
        return None
    when = guard.next_allowed(req.cluster, now, float(settings.SCHEDULE_HORIZON_DAYS))
    if when is None:
        raise ChangeInvalid(
            [
                f"it may not run now ({guard.refusal(req.cluster, now)}) and the windows allow no time "
                f"within {settings.SCHEDULE_HORIZON_DAYS} days: schedule it once they do"
            ]
        )
    return when


def wait_for(req: ChangeRequest, when: datetime, actor) -> None:
    """Inside the approval's transaction: the approved change waits for ``when`` (its own schedule,
    or one the system sets because the windows forbid running now)."""
    if waiting(req) is None:
        ScheduledChange.objects.update_or_create(
            request=req,
            defaults={
                "run_at": when,
                "state": ScheduleState.WAITING,
                "scheduled_by_name": SYSTEM,
                "note": "",
            },
        )
        record_step(
            req, SYSTEM, "scheduled", f"the windows forbid running now: runs at {when:%Y-%m-%d %H:%M} UTC"
        )
    text = f"Approved by {actor.get_username()}; it runs at {when:%Y-%m-%d %H:%M} UTC, not before."
    notify_requester(req, f"Your change #{req.pk}: {text}")
    announce(req, notify_events.REQUEST_APPROVED, text)


def due(now: datetime | None = None) -> list[int]:
    """The scheduled changes whose time has come (approved, waiting)."""
    return list(
        ScheduledChange.objects.filter(
            state=ScheduleState.WAITING,
            run_at__lte=now or timezone.now(),
            request__state=RequestState.APPROVED,
        ).values_list("pk", flat=True)
    )


def start(schedule_id: int, *, worker: str) -> str | None:
    """Take one due scheduled change (a conditional UPDATE: one worker wins) and queue its run, or
    refuse it when a window forbids running now; what happened ("queued"/"refused"), None if taken
    by another worker or not due."""
    now = timezone.now()
    with transaction.atomic():
        taken = ScheduledChange.objects.filter(
            pk=schedule_id,
            state=ScheduleState.WAITING,
            run_at__lte=now,
            request__state=RequestState.APPROVED,
        ).update(state=ScheduleState.QUEUED, taken_by=worker[:128])
        if not taken:
            return None
        row = ScheduledChange.objects.select_related("request__cluster", "request__requested_by").get(
            pk=schedule_id
        )
        req = row.request
        closed = guard.refusal(req.cluster, now)
        if closed is not None:
            _refuse(row, req, str(closed))
            return "refused"
        record_step(
            req, SYSTEM, "due", f"its time {row.run_at:%Y-%m-%d %H:%M} UTC has come (tick on {worker})"
        )
        queue_run(req, actor=req.requested_by or access.system_actor())
    return "queued"


def _refuse(row: ScheduledChange, req: ChangeRequest, why: str) -> None:
    """Inside the tick's transaction: the run is refused at its time, the reason kept (not skipped)."""
    ScheduledChange.objects.filter(pk=row.pk).update(state=ScheduleState.REFUSED, note=why)
    message = f"not run at its time: {why}"
    ChangeRequest.objects.filter(pk=req.pk).update(
        state=RequestState.FAILED, result={"ok": False, "message": message}, finished_at=timezone.now()
    )
    record_event(
        req,
        actor=access.system_actor(),
        action=names.SCHEDULE_REFUSED,
        outcome="refused",
        params={"kind": req.kind, "run_at": row.run_at.isoformat(), "reason": why},
        step="refused",
        text=message,
        by=SYSTEM,
    )
    notify_requester(req, f"Your change #{req.pk} did not run: {why}")
    announce(req, notify_events.CHANGE_NOT_RUN, f"Not run at {row.run_at:%Y-%m-%d %H:%M} UTC: {why}")


def run_due(*, worker: str) -> dict[int, str]:
    """The tick: every due scheduled change started (or refused) once; {schedule id: what happened}."""
    done = {}
    for schedule_id in due():
        outcome = start(schedule_id, worker=worker)
        if outcome is not None:
            done[schedule_id] = outcome
    return done
