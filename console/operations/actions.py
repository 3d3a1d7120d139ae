"""Request side of operations: create one with its "requested" event, and ask a running one to cancel."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from console import access
from console.audit import store as audit
from console.models import Operation, OperationItem, OperationState
from console.operations import audit_names, registry


def start(
    *,
    actor,
    kind: str,
    cluster,
    params: Mapping[str, Any],
    items: Iterable[str] = (),
    targets: Iterable[str] = (),
    source_ip: str | None = None,
    on_behalf_of: str = "",
    audit_details: Mapping[str, Any] | None = None,
) -> Operation:
    """Create the Operation, its items and its "requested" audit event together; dispatch after commit.

    Must be called inside the caller's transaction when the caller writes rows of its own with
    the operation (they commit or roll back together); dispatch waits for the outermost commit.
    """
    if registry.kind_for(kind) is None:
        raise LookupError(f"no runner knows operations of kind '{kind}'")
    items = list(items)
    with transaction.atomic():
        op = Operation.objects.create(kind=kind, cluster=cluster, params=dict(params), created_by=actor)
        OperationItem.objects.bulk_create(OperationItem(operation=op, resource=r) for r in items)
        audit.record(
            actor=actor,
            action=audit_names.of(kind, audit_names.REQUESTED),
            cluster=cluster,
            targets=list(targets) or items,
            params={**params, **(audit_details or {})},
            outcome="requested",
            operation=op,
            source_ip=source_ip,
            on_behalf_of=on_behalf_of,
        )
        transaction.on_commit(lambda: _dispatch(op.pk))
    return op


def _dispatch(op_id: int) -> None:
    task_id = registry.dispatch(op_id)
    if task_id:
        Operation.objects.filter(pk=op_id).update(celery_task_id=task_id[:64])


def request_cancel(*, actor, op: Operation, source_ip: str | None = None, action: str = "") -> bool:
    """Flag the operation for cancel (its kind's cancel steps run at the next step boundary).

    Audited as "<kind>.cancel" (outcome "requested"); False when it had already ended.
    """
    with transaction.atomic():
        flagged = Operation.objects.filter(
            pk=op.pk, state__in=(OperationState.PENDING, OperationState.RUNNING), cancel_requested=False
        ).update(cancel_requested=True, next_run_at=timezone.now())
        if flagged:
            audit.record(
                actor=actor,
                action=action or audit_names.of(op.kind, audit_names.CANCEL),
                cluster=op.cluster,
                targets=[f"operation:{op.pk}"],
                outcome="requested",
                operation=op,
                source_ip=source_ip,
            )
    if flagged:
        transaction.on_commit(lambda: registry.dispatch(op.pk))
    return bool(flagged)


def get_visible(*, actor, op_id: int) -> Operation | None:
    """The operation when the actor may see it, by the rule of its kind (None otherwise)."""
    op = Operation.objects.select_related("cluster", "created_by").filter(pk=op_id).first()
    if op is None or not getattr(actor, "is_active", False):
        return None
    kind = registry.kind_for(op.kind)
    if kind is not None and kind.may_view is not None:
        return op if kind.may_view(actor, op) else None
    if op.cluster is None:
        return op if (actor.is_superuser or op.created_by_id == actor.pk) else None
    return op if access.can(actor, op.cluster, access.VIEW) else None
