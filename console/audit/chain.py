"""The audit chain's status for reviewers: the incremental check on the audit page and the full
re-verification, an Operation of kind ``audit.verify`` (its step is in ``audit/worker.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.cache import cache

from console import operations
from console.audit import store as audit
from console.audit.review import _require_reviewer
from console.models import AuditChainHead, AuditEvent, Operation
from console.models.operations import FINISHED_STATES

CHECKPOINT_KEY = "audit_review:chain_checkpoint"
VERIFY_KIND = "audit.verify"
VERIFY_ITEM = "audit:chain"


@dataclass(frozen=True)
class ChainView:
    """What the audit page shows about the chain."""

    ok: bool
    verified_up_to: int
    head_id: int
    broken_at: int | None = None
    reason: str = ""
    archived_up_to: int = 0


def chain_status(*, actor, batch_size: int = 2000) -> ChainView:
    """Verify the chain incrementally from the last verified checkpoint up to the head.

    The checkpoint (id and hash of the last event proven good) lives in the cache; the event at the
    checkpoint is re-hashed each time so editing it is still noticed. Without a usable checkpoint the
    walk starts at the archive anchor (or the genesis hash). The full re-walk is an Operation
    (start_verify, run by audit/worker.py) or `manage.py audit_verify`.
    """
    _require_reviewer(actor)
    head = AuditChainHead.objects.filter(pk=1).first()
    head_id = head.last_id if head else 0
    prev_id, prev_hash = audit.chain_start(head)
    archived = prev_id
    checkpoint = cache.get(CHECKPOINT_KEY)
    if checkpoint and checkpoint[0] > prev_id:
        anchor = AuditEvent.objects.filter(pk=checkpoint[0]).first()
        if anchor is not None and anchor.hash == checkpoint[1] and anchor.compute_hash() == anchor.hash:
            prev_id, prev_hash = checkpoint
    walked = audit.walk(prev_id, prev_hash, batch_size=batch_size)
    if not walked.ok:
        return ChainView(False, walked.last_id, head_id, walked.broken_at, walked.reason, archived)
    cache.set(CHECKPOINT_KEY, (walked.last_id, walked.last_hash), None)
    problem = audit.head_problem(head, walked.last_id, walked.last_hash)
    if problem is not None:
        return ChainView(False, walked.last_id, head_id, problem[0], problem[1], archived)
    return ChainView(True, walked.last_id, head_id, archived_up_to=archived)


def latest_verify() -> Operation | None:
    """The newest full-verification operation (shown on the audit page with its progress)."""
    return Operation.objects.filter(kind=VERIFY_KIND).order_by("-id").first()


def get_verify(*, actor, op_id: int) -> Operation | None:
    """A full-verification operation for a reviewer (None for any other operation id)."""
    _require_reviewer(actor)
    return Operation.objects.filter(pk=op_id, kind=VERIFY_KIND).first()


def start_verify(*, actor, source_ip: str | None = None) -> Operation:
    """Queue a full re-walk of the chain on a worker; an unfinished one is reused, not duplicated."""
    _require_reviewer(actor)
    running = Operation.objects.filter(kind=VERIFY_KIND).exclude(state__in=FINISHED_STATES).first()
    if running is not None:
        return running
    return operations.start(
        actor=actor,
        kind=VERIFY_KIND,
        cluster=None,
        params={"scope": "full chain"},
        items=[VERIFY_ITEM],
        source_ip=source_ip,
    )
