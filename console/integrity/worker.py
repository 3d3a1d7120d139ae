"""The full audit-chain re-verification on a worker: the ``audit.verify`` kind."""

from __future__ import annotations

from dataclasses import asdict

from console import operations
from console.audit import review
from console.audit import store as audit
from console.integrity.chain import VERIFY_ITEM, VERIFY_KIND, announce_broken
from console.models import AuditChainHead, OperationState
from console.operations import Done, Kind, Step

BATCH_SIZE = 2000


def _verify(ctx) -> Done:
    """Walk every kept event from the archive anchor, with progress on the Operation (success signs a
    new verified-up-to marker, audit/marker.py)."""
    head = AuditChainHead.objects.filter(pk=1).first()
    start_id, _ = audit.chain_start(head)
    total = max(1, (head.last_id if head else 0) - start_id)

    def progress(count: int, last_id: int) -> None:
        ctx.heartbeat(progress=count / total, text=f"verified up to event {last_id}")

    status = audit.verify_chain(batch_size=BATCH_SIZE, progress=progress)
    if status.ok:
        text = f"intact: {status.count} events verified up to event {status.verified_up_to}"
    else:
        where = "failed" if status.broken_at is None else f"broken at event {status.broken_at}"
        text = f"{where}: {status.reason}"
        announce_broken(status.broken_at, status.reason)
    if status.archived_up_to:
        text += f" (archived up to event {status.archived_up_to})"
    if status.note:
        text += f"; {status.note}"
    if status.anchor_check is not None and status.anchor_check.level == "warning":
        text += f"; anchor warning: {status.anchor_check.message}"
    state = OperationState.SUCCEEDED if status.ok else OperationState.FAILED
    ctx.set_item(VERIFY_ITEM, state=state, progress=1.0, message=text)
    return Done(
        state,
        result=asdict(status),
        error="" if status.ok else text,
        outcomes={VERIFY_ITEM: {"ok": status.ok, "message": text}},
    )


def _may_view(user, op) -> bool:
    """The chain's verification is for whoever may review the audit (on at least one cluster)."""
    return review.may_review(user)


operations.register(Kind(VERIFY_KIND, (Step("verify", _verify),), may_view=_may_view))
