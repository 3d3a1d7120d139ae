"""A paced move's queue as the doors show it, and pausing / resuming its submissions.

The queue is the move's pending partition rows (in the rows' order: topic, then partition); the
worker's move step submits from it as partitions finish (``worker.submit_next``). Pause stops new
submissions, the partitions in flight finish; resume goes on. Both live in the database
(``Reassignment.paused``), so a restarted worker keeps to them. Audited like a cancel: the
request ("requested") before the change, its outcome after; refused (and audited as refused)
for a move that is not paced, has finished or is being cancelled.
"""

from __future__ import annotations

from django.db import transaction

from console import access
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.models.reassignment import PartitionState, Reassignment, Stage
from console.reassignment import audit_names, pacing
from console.reassignment.actions import PlanRejected

NEXT_SHOWN = 5  # the next queued partitions the page and the API name


def queue_state(r: Reassignment) -> dict | None:
    """What a paced move's queue looks like now (None for a move that is not paced): N, paused,
    how many are queued and the next few, in flight in all and per broker against N."""
    if not r.paced:
        return None
    queued = r.partitions.filter(state=PartitionState.PENDING)
    count = queued.count()
    upcoming = [f"{t}-{p}" for t, p in queued.values_list("topic", "partition")[:NEXT_SHOWN]]
    moving = list(r.partitions.filter(state=PartitionState.MOVING).values_list("original", "target"))
    per_broker = pacing.in_flight_per_broker(moving)
    running = r.stage not in (Stage.FINISHED, Stage.CANCELLING) and not r.cancel_requested
    if r.paused and running:
        text = f"paused ({count} queued)"
    else:
        text = f"{count} queued"
    return {
        "max_moves_per_broker": r.max_moves_per_broker,
        "paused": r.paused,
        "queued": count,
        "next": upcoming,
        "in_flight": len(moving),
        "in_flight_per_broker": {str(b): n for b, n in sorted(per_broker.items())},
        "text": text,
        "can_pause": running and not r.paused and not r.operation.finished,
        "can_resume": running and r.paused and not r.operation.finished,
    }


def _refuse_unless_pausable(r: Reassignment, pause: bool) -> None:
    if not r.paced:
        raise PlanRejected(
            f"Reassignment #{r.pk} is not paced (no max moves per broker): every partition was submitted "
            "at once, so there is nothing to pause or resume."
        )
    if r.operation.finished or r.stage == Stage.FINISHED:
        raise PlanRejected(f"Reassignment #{r.pk} has already finished.")
    if r.cancel_requested or r.stage == Stage.CANCELLING:
        raise PlanRejected(f"Reassignment #{r.pk} is being cancelled.")
    if pause and r.paused:
        raise PlanRejected(f"Reassignment #{r.pk} is already paused.")
    if not pause and not r.paused:
        raise PlanRejected(f"Reassignment #{r.pk} is not paused.")


def _set_paused(*, actor, reassignment: Reassignment, pause: bool, source_ip: str | None) -> dict:
    r = reassignment
    access.require(actor, r.cluster, access.MANAGE_REASSIGNMENTS)
    r.refresh_from_db(fields=["paused", "stage", "cancel_requested"])
    r.operation.refresh_from_db(fields=["state"])
    _refuse_unless_pausable(r, pause)
    action = audit_names.REASSIGNMENT_PAUSE if pause else audit_names.REASSIGNMENT_RESUME
    target = [f"operation:{r.operation_id}"]
    with transaction.atomic():
        audit.record(
            actor=actor,
            action=action,
            cluster=r.cluster,
            targets=target,
            before={"paused": not pause},
            outcome="requested",
            operation=r.operation,
            source_ip=source_ip,
        )
    # conditional: a move that ended or began cancelling meanwhile is left as it is
    changed = (
        Reassignment.objects.filter(pk=r.pk, paused=not pause, cancel_requested=False)
        .exclude(stage__in=(Stage.FINISHED, Stage.CANCELLING))
        .update(paused=pause)
    )
    r.paused = pause if changed else r.paused
    state = queue_state(r) or {}
    with transaction.atomic():
        audit.record(
            actor=actor,
            action=action,
            cluster=r.cluster,
            targets=target,
            before={"paused": not pause},
            after={"paused": r.paused, "queued": state.get("queued"), "in_flight": state.get("in_flight")},
            outcomes={f"operation:{r.operation_id}": {"ok": bool(changed)}},
            operation=r.operation,
            source_ip=source_ip,
        )
    if not changed:
        raise PlanRejected(f"Reassignment #{r.pk} finished or began cancelling meanwhile; nothing changed.")
    return state


@refused_as(
    audit_names.REASSIGNMENT_PAUSE,
    PlanRejected,
    targets=lambda k: [f"operation:{k['reassignment'].operation_id}"],
)
def pause_reassignment(*, actor, reassignment: Reassignment, source_ip: str | None = None) -> dict:
    """Stop submitting the queued partitions; those in flight finish. Returns the queue's state."""
    return _set_paused(actor=actor, reassignment=reassignment, pause=True, source_ip=source_ip)


@refused_as(
    audit_names.REASSIGNMENT_RESUME,
    PlanRejected,
    targets=lambda k: [f"operation:{k['reassignment'].operation_id}"],
)
def resume_reassignment(*, actor, reassignment: Reassignment, source_ip: str | None = None) -> dict:
    """Go on submitting the queued partitions as others finish. Returns the queue's state."""
    return _set_paused(actor=actor, reassignment=reassignment, pause=False, source_ip=source_ip)
