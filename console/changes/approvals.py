"""Four eyes, counted one way for self-service requests and for operator actions held by change
control: an approval counts when it names the request's payload digest, is not the requester's and
is younger than APPROVAL_TTL_H; each approver counts once. How many are needed is the cluster's
change-control policy's count for the kind (``console.changes.gate.approvals_for``)."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from console.changes import gate
from console.changes import kinds as held_kinds
from console.models.changes import ChangeApproval
from console.models.requests import ChangeRequest, RequestState
from console.models.windows import ScheduledChange, ScheduleState


def payload_digest(payload) -> str:
    """SHA-256 of the payload as canonical JSON: what was reviewed is what runs."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def approval_ttl() -> timedelta:
    return timedelta(hours=float(getattr(settings, "APPROVAL_TTL_H", 24)))


def fresh_approvals(req: ChangeRequest, *, at=None) -> list[ChangeApproval]:
    """Approvals of this exact payload, by someone other than the author, younger than the TTL
    (at ``at``; default now)."""
    since = (at or timezone.now()) - approval_ttl()
    return list(
        req.approvals.filter(payload_sha256=req.payload_sha256, created_at__gte=since)
        .exclude(user_id=req.requested_by_id)
        .order_by("id")
    )


def has_approved(user, req: ChangeRequest) -> bool:
    return any(a.user_id == getattr(user, "pk", None) for a in fresh_approvals(req))


def record(req: ChangeRequest, actor, comment: str) -> int:
    """Inside the caller's transaction: the actor's approval (an expired one of theirs is renewed);
    the number that count now."""
    ChangeApproval.objects.update_or_create(
        request=req,
        user=actor,
        payload_sha256=req.payload_sha256,
        defaults={"user_name": actor.get_username(), "comment": comment, "created_at": timezone.now()},
    )
    return len(fresh_approvals(req))


def needed_for_request(cluster, kind: str, payload) -> int:
    """The approvers a self-service request of ``kind`` needs: as many as the policy asks for the
    held kind it asks for (a requester never gets a lower bar than an operator), else one."""
    if held_kinds.requested(kind) is None:
        return gate.approvals_for(cluster, "")
    return gate.approvals_for(cluster, held_kinds.get(kind).gate_of(held_kinds.held_payload(kind, payload)))


def approval_outcome(req: ChangeRequest) -> str:
    """What an Approve just did, as the pages say it (the request as it is now): queued to run,
    recorded and waiting for another approver, or sent back for a fresh review (the cluster drifted)
    - never just "approved" when nothing runs."""
    req.refresh_from_db()
    if req.state != RequestState.PENDING:
        waits = ScheduledChange.objects.filter(request=req, state=ScheduleState.WAITING).first()
        if req.state == RequestState.APPROVED and waits is not None:
            return f"Request #{req.pk} approved: it runs at {waits.run_at:%Y-%m-%d %H:%M} UTC, not before."
        return f"Request #{req.pk} approved: it runs now."
    last = req.events.order_by("-id").first()
    if last is not None and last.step == "drifted":
        return f"Request #{req.pk} approved, but not run: {last.text}. It is back for a fresh review."
    count = len(fresh_approvals(req))
    return (
        f"Request #{req.pk}: your approval is {count} of {req.approvals_required}; "
        "it waits for another approver and has not run."
    )


def repin(req: ChangeRequest, before, after) -> dict[str, list[str]]:
    """Key rotation re-encrypted a secret in the payload (the same value under the new key): the request
    and the approvals of its reviewed payload name the new payload's digest, so a rotation voids no
    review. A payload that already differed from its reviewed digest is left as it was (still refused).
    Runs inside the rotation's transaction (console/key_rotation.py)."""
    old, new = payload_digest(before), payload_digest(after)
    if req.payload_sha256 != old:
        return {}
    ChangeRequest.objects.filter(pk=req.pk).update(payload_sha256=new)
    ChangeApproval.objects.filter(request_id=req.pk, payload_sha256=old).update(payload_sha256=new)
    return {f"request:{req.pk}": [old, new]}
