"""The one runner: claim, heartbeat, steps, cancel, retry with backoff, finish or give up.

Every Operation kind runs here; areas only declare steps (``core.Kind``). The rows are the
truth: the claim is a conditional UPDATE (a redelivered task re-enters a stale claim, a second
live worker backs off), every write of a claimed run is conditional on still holding the claim,
and the final state is written in the same transaction as its audit event, so an operation ends
exactly once. Nothing stays ``running`` for ever: a step that raises, or whose worker dies, is
retried with backoff and after ``OPERATION_MAX_ATTEMPTS`` the operation ends ``errored``.
A step that watches Kafka's own work (``Step.watches_kafka``) is the exception: while Kafka
cannot be reached it waits in "lost contact" (``LOST_CONTACT`` in ``data``; no attempt is
spent, retries back off up to ``OPERATION_LOST_CONTACT_BACKOFF_MAX_S``) for as long as it takes,
and the first run that reads Kafka again clears it (the step sees ``ctx.lost_contact`` and
recomputes from Kafka).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from console import notify
from console.audit import store as audit
from console.models import Operation, OperationItem, OperationState
from console.operations import audit_names, registry
from console.operations.core import (
    CANCEL,
    LOST_CONTACT,
    RUN,
    Done,
    Kind,
    Wait,
    audit_outcome,
    backoff_s,
    is_lost_contact,
    lost_contact_text,
)
from console.operations.reads import since_text

log = logging.getLogger(__name__)

ACTIVE = (OperationState.PENDING, OperationState.RUNNING)


class LostClaim(Exception):
    """Another worker took the operation over (ours was presumed dead): stop without writing."""


class Context:
    """What a step gets: the operation, the worker's name, ``data`` saved with each step."""

    def __init__(self, op: Operation, worker: str):
        self.op = op
        self.worker = worker
        self.data: dict[str, Any] = dict(op.data or {})
        # the lost contact this run starts from (None: the last run read Kafka), for a step to
        # know that what it kept from before is stale and must be read from Kafka again
        self.lost_contact: dict[str, Any] | None = self.data.get(LOST_CONTACT)

    def heartbeat(self, *, progress: float | None = None, text: str | None = None) -> None:
        heartbeat(self.op, progress=progress, text=text)

    def set_item(self, resource: str, *, state: str, progress: float = 0.0, message: str = "") -> None:
        set_item(self.op, resource, state=state, progress=progress, message=message)


def _now():
    return timezone.now()


def _stale_before():
    return _now() - timedelta(seconds=settings.OPERATION_STALE_AFTER_S)


def claim(op_id: int, worker: str) -> Operation | None:
    """Take the operation if it is due and free, or if its worker went quiet (that attempt failed)."""
    now = _now()
    recovered = (
        Operation.objects.filter(pk=op_id, state=OperationState.RUNNING, heartbeat_at__lt=_stale_before())
        .exclude(claimed_by="")
        .update(
            claimed_by=worker,
            heartbeat_at=now,
            attempts=F("attempts") + 1,
            last_error="the worker running it stopped answering",
        )
    )
    if not recovered:
        due = Q(next_run_at__isnull=True) | Q(next_run_at__lte=now) | Q(cancel_requested=True)
        free = Q(state=OperationState.PENDING) | Q(state=OperationState.RUNNING, claimed_by="")
        taken = Operation.objects.filter(free & due, pk=op_id).update(
            state=OperationState.RUNNING,
            claimed_by=worker,
            heartbeat_at=now,
            started_at=Coalesce(F("started_at"), now),
        )
        if not taken:
            return None
    return Operation.objects.select_related("cluster", "created_by").get(pk=op_id)


def _mine(op: Operation):
    return Operation.objects.filter(pk=op.pk, claimed_by=op.claimed_by, state=OperationState.RUNNING)


def heartbeat(op: Operation, *, progress: float | None = None, text: str | None = None) -> None:
    """Record that the claimant is alive (with optional progress 0..1); LostClaim if it is not ours."""
    fields: dict[str, Any] = {"heartbeat_at": _now()}
    if progress is not None:
        fields["progress"] = op.progress = max(0.0, min(1.0, progress))
    if text is not None:
        fields["progress_text"] = op.progress_text = text[:200]
    if not _mine(op).update(**fields):
        raise LostClaim(f"operation {op.pk} is no longer held by {op.claimed_by}")


def set_item(op: Operation, resource: str, *, state: str, progress: float = 0.0, message: str = "") -> None:
    OperationItem.objects.filter(operation=op, resource=resource).update(
        state=state, progress=progress, message=message[:2000], updated_at=_now()
    )


def run(op_id: int, *, worker: str) -> Operation | None:
    """The task body for every kind: claim, then drive steps until done, waiting, or failed."""
    op = claim(op_id, worker)
    if op is None:
        return None
    try:
        return _drive(op, Context(op, worker))
    except LostClaim as lost:
        log.warning("%s", lost)
        return None


def _drive(op: Operation, ctx: Context) -> Operation:
    kind = registry.kind_for(op.kind)
    if kind is None:
        return _give_up(op, ctx, None, f"no runner knows operations of kind '{op.kind}'")
    if op.attempts >= settings.OPERATION_MAX_ATTEMPTS:
        return _give_up(op, ctx, kind, op.last_error or "too many failed attempts")
    while True:
        steps = kind.path(op.path)
        if op.path == RUN and _cancel_requested(op) and (op.step >= len(steps) or steps[op.step].cancellable):
            if not kind.cancel_steps:
                return _finish(op, ctx, Done(OperationState.CANCELLED, {"outcome": "cancelled"}))
            _move_to(op, ctx, path=CANCEL, step=0)
            continue
        if op.step >= len(steps):
            return _finish(op, ctx, Done(OperationState.SUCCEEDED, ctx.data.get("result", {})))
        step = steps[op.step]
        try:
            outcome = step.fn(ctx)
        except LostClaim:
            raise
        except Exception as exc:  # a failed attempt of this step, whatever raised it
            if step.watches_kafka and is_lost_contact(exc):
                return _lost_contact(op, ctx, step.name, exc)
            ctx.data.pop(LOST_CONTACT, None)  # another failure (Kafka answered, or a bug): an attempt
            return _failed(op, ctx, kind, step.name, exc)
        _contact_back(op, ctx)
        if isinstance(outcome, Done):
            return _finish(op, ctx, outcome)
        if isinstance(outcome, Wait):
            return _wait(op, ctx, outcome)
        _move_to(op, ctx, path=op.path, step=op.step + 1)


def _cancel_requested(op: Operation) -> bool:
    op.cancel_requested = Operation.objects.filter(pk=op.pk).values_list("cancel_requested", flat=True)[0]
    return op.cancel_requested


def _move_to(op: Operation, ctx: Context, *, path: str, step: int) -> None:
    """Record that the step completed (or the path changed): the place, the data, attempts reset."""
    if not _mine(op).update(path=path, step=step, attempts=0, data=ctx.data, heartbeat_at=_now()):
        raise LostClaim(f"operation {op.pk} is no longer held by {op.claimed_by}")
    op.path, op.step, op.attempts, op.data = path, step, 0, ctx.data


def _release(op: Operation, **fields) -> Operation:
    if not _mine(op).update(claimed_by="", heartbeat_at=_now(), **fields):
        raise LostClaim(f"operation {op.pk} is no longer held by {op.claimed_by}")
    return Operation.objects.get(pk=op.pk)


def _wait(op: Operation, ctx: Context, wait: Wait) -> Operation:
    fields: dict[str, Any] = {"next_run_at": _now() + timedelta(seconds=wait.seconds), "attempts": 0}
    if wait.text:
        fields["progress_text"] = wait.text[:200]
    return _release(op, data=ctx.data, last_error="", **fields)


def error_text(exc: BaseException) -> str:
    return getattr(exc, "operator_text", None) or f"{type(exc).__name__}: {exc}"


def _lost_contact(op: Operation, ctx: Context, step: str, exc: Exception) -> Operation:
    """Kafka could not be reached while the step watches its work: a state, not a failed attempt.

    The operation stays running and is tried again after a bounded backoff; ``attempts`` is
    untouched, so a cluster down for an hour never ends it errored."""
    lost = dict(ctx.data.get(LOST_CONTACT) or {})
    since = lost.get("since") or _now().isoformat()
    count = int(lost.get("attempts", 0)) + 1
    delay = backoff_s(
        count, settings.OPERATION_LOST_CONTACT_BACKOFF_S, settings.OPERATION_LOST_CONTACT_BACKOFF_MAX_S
    )
    error = f"{step}: {error_text(exc)}"
    ctx.data[LOST_CONTACT] = {"since": since, "attempts": count, "retry_every_s": delay, "error": error}
    if count == 1:
        log.warning("operation %s (%s) lost contact with Kafka at %s", op.pk, op.kind, error)
    text = lost_contact_text(since_text(since), count, delay, error)
    return _retry_later(op, ctx, delay, error, text)


def _contact_back(op: Operation, ctx: Context) -> None:
    """A step ran without losing contact: the lost-contact state (if any) ends with this run."""
    lost = ctx.data.pop(LOST_CONTACT, None)
    if lost is not None:
        log.warning(
            "operation %s (%s) reached Kafka again after %s attempts (lost since %s)",
            op.pk,
            op.kind,
            lost.get("attempts"),
            lost.get("since"),
        )


def _failed(op: Operation, ctx: Context, kind: Kind, step: str, exc: Exception) -> Operation:
    attempts = op.attempts + 1
    error = f"{step}: {error_text(exc)}"
    log.warning("operation %s (%s) attempt %s failed at %s", op.pk, op.kind, attempts, error)
    if attempts >= settings.OPERATION_MAX_ATTEMPTS:
        return _give_up(op, ctx, kind, error, attempts=attempts)
    delay = backoff_s(attempts, settings.OPERATION_BACKOFF_S, settings.OPERATION_BACKOFF_MAX_S)
    text = f"retrying in {delay:.0f} s (attempt {attempts} of {settings.OPERATION_MAX_ATTEMPTS}): {error}"
    return _retry_later(op, ctx, delay, error, text, attempts=attempts)


def _retry_later(op: Operation, ctx: Context, delay: float, error: str, text: str, **counts) -> Operation:
    """Release the claim with the error and the page's text, due again (and dispatched) in ``delay`` s."""
    released = _release(
        op,
        last_error=error[:4000],
        progress_text=text[:200],
        next_run_at=_now() + timedelta(seconds=delay),
        data=ctx.data,
        **counts,
    )
    registry.dispatch(op.pk, countdown=delay)
    return released


def _give_up(
    op: Operation, ctx: Context, kind: Kind | None, error: str, attempts: int | None = None
) -> Operation:
    """End errored. The kind's give-up hook runs first, best effort; a crash in it is retried twice."""
    notes = []
    if (
        kind is not None
        and kind.give_up is not None
        and (attempts or op.attempts) < settings.OPERATION_MAX_ATTEMPTS + 2
    ):
        try:
            kind.give_up(ctx, error)
        except LostClaim:
            raise
        except Exception as exc:
            notes.append(f"cleanup failed: {error_text(exc)}")
    op.attempts = attempts or op.attempts
    text = "; ".join([f"gave up after {op.attempts} attempts: {error}", *notes])
    result = {"outcome": "errored", **ctx.data.get("result", {})}
    return _finish(op, ctx, Done(OperationState.ERRORED, result, error=text))


def _finish(op: Operation, ctx: Context, done: Done) -> Operation:
    """The final state and its audit event together; only the claimant can end the operation."""
    now = _now()
    if RECONCILED in ctx.data and done.state != OperationState.ERRORED:
        done = replace(done, result={**done.result, RECONCILED: ctx.data[RECONCILED]})
    with transaction.atomic():
        ended = _mine(op).update(
            state=done.state,
            result=dict(done.result),
            error=done.error,
            data=ctx.data,
            claimed_by="",
            attempts=op.attempts,
            progress=1.0 if done.state == OperationState.SUCCEEDED else op.progress,
            finished_at=now,
            heartbeat_at=now,
            next_run_at=None,
        )
        if not ended:
            raise LostClaim(f"operation {op.pk} is no longer held by {op.claimed_by}")
        audit.record(
            actor=op.created_by,
            action=audit_names.of(op.kind, done.state),
            cluster=op.cluster,
            targets=list(done.outcomes),
            params={"error": done.error} if done.error else {},
            after=dict(done.result),
            outcomes=dict(done.outcomes),
            outcome=audit_outcome(done.state),
            operation=op,
        )
        # Notification channels hear of a reassignment's end and of any errored operation (on commit).
        notify.operation_ended(op, done.state, done.error, dict(done.result))
    return Operation.objects.get(pk=op.pk)


RECONCILED = "reconciled"  # key in Operation.data: {"after": the error it had ended with, "at"}


def reopen(op: Operation, *, step: str, reason: str) -> bool:
    """Take up again an operation that ended ``errored`` while Kafka went on with its work.

    It runs again from ``step`` of its run path (a step that reads Kafka and converges), with
    its attempts reset; its end is audited as any operation's, its result says it was
    reconciled and from what error. Audited itself (``<kind>.reopened``). Only once: an
    operation already reconciled stays ended. False if it was not ``errored`` (any more)."""
    kind = registry.kind_for(op.kind)
    if kind is None or (op.data or {}).get(RECONCILED):
        return False
    index = [s.name for s in kind.steps].index(step)
    now = _now()
    data = {**(op.data or {}), RECONCILED: {"after": op.error, "at": now.isoformat()}}
    data.pop(LOST_CONTACT, None)
    with transaction.atomic():
        taken = Operation.objects.filter(pk=op.pk, state=OperationState.ERRORED).update(
            state=OperationState.RUNNING,
            path=RUN,
            step=index,
            attempts=0,
            error="",
            last_error="",
            claimed_by="",
            finished_at=None,
            next_run_at=now,
            heartbeat_at=now,
            data=data,
            progress_text=f"reconciling from Kafka: {reason}"[:200],
        )
        if taken:
            audit.record(
                actor=None,
                action=audit_names.of(op.kind, audit_names.REOPENED),
                cluster=op.cluster,
                params={"reason": reason, "after": op.error, "step": step},
                outcome="success",
                operation=op,
            )
    if taken:
        log.warning("operation %s (%s) reopened at %s: %s", op.pk, op.kind, step, reason)
        transaction.on_commit(lambda: registry.dispatch(op.pk))  # never inside a caller's transaction
    return bool(taken)


def due_ids() -> list[int]:
    """Running operations a worker should take now: waiting ones that are due, quiet ones, cancels."""
    now = _now()
    free = Q(state=OperationState.RUNNING, claimed_by="") & (
        Q(next_run_at__isnull=True) | Q(next_run_at__lte=now) | Q(cancel_requested=True)
    )
    quiet = Q(state=OperationState.RUNNING, heartbeat_at__lt=_stale_before()) & ~Q(claimed_by="")
    return list(
        Operation.objects.filter(free | quiet).order_by("next_run_at", "pk").values_list("pk", flat=True)
    )


def run_due(*, worker: str) -> list[int]:
    """Beat's tick: run every due operation once (polls, retries, recovery); returns the ids run."""
    ran = []
    for op_id in due_ids():
        if run(op_id, worker=worker) is not None:
            ran.append(op_id)
    return ran


def requeue_pending() -> list[int]:
    """Re-dispatch pending operations nobody picked up (the queue was down when they were created)."""
    now = _now()
    ids = list(
        Operation.objects.filter(state=OperationState.PENDING, created_at__lt=_stale_before())
        .filter(Q(next_run_at__isnull=True) | Q(next_run_at__lte=now))
        .values_list("pk", flat=True)
    )
    for op_id in ids:
        registry.dispatch(op_id)
    return ids
