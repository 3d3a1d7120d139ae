"""Operations: create them with their audit event, claim them in workers, record progress and outcome."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from console.audit import store as audit
from console.models import Operation, OperationItem, OperationState

log = logging.getLogger(__name__)


def start_operation(
    *,
    actor,
    kind: str,
    cluster,
    params: Mapping[str, Any],
    items: Iterable[str] = (),
    targets: Iterable[str] = (),
    source_ip: str | None = None,
    on_behalf_of: str = "",
) -> Operation:
    """Create the Operation, its items and its "requested" audit event together; enqueue after commit."""
    with transaction.atomic():
        op = Operation.objects.create(kind=kind, cluster=cluster, params=dict(params), created_by=actor)
        OperationItem.objects.bulk_create(OperationItem(operation=op, resource=r) for r in items)
        audit.record(
            actor=actor,
            action=f"{kind}.requested",
            cluster=cluster,
            targets=list(targets) or list(items),
            params=params,
            outcome="requested",
            operation=op,
            source_ip=source_ip,
            on_behalf_of=on_behalf_of,
        )
        transaction.on_commit(lambda: dispatch(op.pk))
    return op


def dispatch(op_id: int) -> None:
    """Send the operation's task to the queue. A broker outage leaves it pending for beat to retry."""
    from tasks.registry import task_for

    op = Operation.objects.get(pk=op_id)
    try:
        result = task_for(op.kind).delay(op.pk)
    except Exception as exc:  # the queue being down must not fail the request that created the work
        log.warning("could not enqueue operation %s (%s); beat will retry", op.pk, exc)
        return
    Operation.objects.filter(pk=op.pk).update(celery_task_id=result.id or "")


def claim(op_id: int, worker: str) -> Operation | None:
    """Atomically take the operation: pending, or running with a stale heartbeat. None if someone has it."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.OPERATION_STALE_AFTER_S)
    claimable = Q(state=OperationState.PENDING) | Q(state=OperationState.RUNNING, heartbeat_at__lt=stale)
    # started_at is overwritten on a re-claim on purpose: it is when the current attempt began.
    updated = Operation.objects.filter(claimable, pk=op_id).update(
        state=OperationState.RUNNING, claimed_by=worker, heartbeat_at=now, started_at=now
    )
    if not updated:
        return None
    Operation.objects.filter(pk=op_id).update(attempts=F("attempts") + 1)
    return Operation.objects.get(pk=op_id)


def heartbeat(op: Operation, *, progress: float | None = None, text: str | None = None) -> None:
    """Record that the worker is alive, with optional progress (0..1)."""
    fields: dict[str, Any] = {"heartbeat_at": timezone.now()}
    if progress is not None:
        fields["progress"] = max(0.0, min(1.0, progress))
    if text is not None:
        fields["progress_text"] = text[:200]
    Operation.objects.filter(pk=op.pk).update(**fields)


def set_item(op: Operation, resource: str, *, state: str, progress: float = 0.0, message: str = "") -> None:
    OperationItem.objects.filter(operation=op, resource=resource).update(
        state=state, progress=progress, message=message[:2000], updated_at=timezone.now()
    )


def finish(
    op: Operation,
    *,
    state: str,
    result: Mapping[str, Any] | None = None,
    error: str = "",
    outcomes: Mapping[str, Any] | None = None,
    actor=None,
) -> Operation:
    """Write the final state and its audit event in one transaction."""
    with transaction.atomic():
        Operation.objects.filter(pk=op.pk).update(
            state=state,
            result=dict(result or {}),
            error=error,
            progress=1.0 if state == OperationState.SUCCEEDED else op.progress,
            finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
        )
        audit.record(
            actor=actor or op.created_by,
            action=f"{op.kind}.{state}",
            cluster=op.cluster,
            targets=list(outcomes or {}),
            params={"error": error} if error else {},
            after=dict(result or {}),
            outcomes=outcomes or {},
            outcome="success" if state == OperationState.SUCCEEDED else "failure",
            operation=op,
        )
    return Operation.objects.get(pk=op.pk)


def requeue_stale() -> list[int]:
    """Re-dispatch operations nobody is working on: pending ones never picked up, running ones gone quiet."""
    stale = timezone.now() - timedelta(seconds=settings.OPERATION_STALE_AFTER_S)
    ids = list(
        Operation.objects.filter(
            Q(state=OperationState.PENDING, created_at__lt=stale)
            | Q(state=OperationState.RUNNING, heartbeat_at__lt=stale)
        ).values_list("pk", flat=True)
    )
    for op_id in ids:
        dispatch(op_id)
    return ids
