"""Change control: the policy (admin-edited, audited), holding a gated action for review, approving
it (never by its author; one or two approvers; approvals expire), running exactly what was
reviewed after a drift check, and break glass.

A held action is a ChangeRequest with ``gated=True``: it shares the review queue with self-service
requests (``queue``, ``approvals``, ``notify`` here; ``console/requests`` builds on them) and the
worker (``request.execute``), which calls ``execute`` here. What each
kind prepares, reviews and runs its area declares (``<area>/held.py``, registered in ``kinds``):
nothing here knows an area.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from console import access
from console.audit import recorded
from console.audit.refusals import refused_as
from console.changes import approvals, gate, schedule
from console.changes import audit_names as names
from console.changes import kinds as held_kinds
from console.changes.kinds import ChangeInvalid, Prepared
from console.changes.notify import announce, notify_approvers, notify_requester
from console.changes.queue import (
    COMMENT_MAX,
    claim_decision,
    queue_run,
    record_event,
    record_step,
)
from console.kafka import KafkaOperationError
from console.models import Cluster
from console.models.changes import ChangePolicy
from console.models.requests import ChangeRequest, RequestState
from console.notify import events as notify_events

JUSTIFICATION_MIN = 10


class Drifted(Exception):
    """The cluster changed since the review: the change went back for a fresh review."""


# -- policy ---------------------------------------------------------------------------------------


def get_policy(cluster: Cluster) -> ChangePolicy:
    return ChangePolicy.objects.filter(cluster=cluster).first() or ChangePolicy(cluster=cluster)


@refused_as(names.POLICY_UPDATE, ChangeInvalid)
def set_policy(
    *,
    actor,
    cluster: Cluster,
    enabled: bool,
    kinds: list[str],
    roles: list[str],
    approvers: int,
    source_ip: str | None = None,
) -> ChangePolicy:
    """Cluster admins decide what needs approval; the change to the policy is audited."""
    access.require(actor, cluster, access.ADMINISTER)
    errors = [f"unknown action kind {k!r}" for k in kinds if k not in gate.KINDS]
    errors += [f"unknown role {r!r}" for r in roles if r not in access.ROLE_PERMISSIONS]
    if approvers not in range(1, gate.MAX_APPROVERS + 1):
        errors.append(f"approvers must be 1 or {gate.MAX_APPROVERS}")
    if errors:
        raise ChangeInvalid(errors)
    with transaction.atomic():
        policy, _ = ChangePolicy.objects.select_for_update().get_or_create(cluster=cluster)
        return recorded.set_fields(
            policy,
            {"enabled": enabled, "kinds": kinds, "roles": roles, "approvers": approvers},
            ("enabled", "kinds", "roles", "approvers"),
            actor=actor,
            action=names.POLICY_UPDATE,
            targets=[f"cluster:{cluster.name}"],
            cluster=cluster,
            source_ip=source_ip,
        )


# -- hold for review ------------------------------------------------------------------------------


def _held(actor, cluster: Cluster, prepared: Prepared, digest: str, reason: str, **fields) -> ChangeRequest:
    """The change request that carries a held action: its exact payload, digest and review."""
    return ChangeRequest.objects.create(
        cluster=cluster,
        kind=prepared.kind,
        resource=prepared.resource[:300],
        payload=prepared.payload,
        reason=reason,
        requested_by=actor,
        requested_by_name=actor.get_username(),
        gated=True,
        payload_sha256=digest,
        review=prepared.review,
        **fields,
    )


@refused_as(
    names.SUBMIT, ChangeInvalid, targets=lambda k: [k["prepared"].resource] if k.get("prepared") else []
)
def submit_change(
    *, actor, cluster: Cluster, prepared: Prepared, reason: str = "", source_ip: str | None = None
) -> ChangeRequest:
    """Hold a prepared (dry-run) action for approval: the exact payload, its digest and review."""
    access.require(actor, cluster, gate.PERMISSIONS[prepared.gate])
    policy = gate.required(actor, cluster, prepared.gate)
    if policy is None:
        gate.check(actor, cluster, prepared.gate)  # a freeze refuses it (nothing would approve it)
        raise ChangeInvalid(["this action does not need approval on this cluster: run it directly"])
    if len(reason) > COMMENT_MAX:
        raise ChangeInvalid([f"the reason is longer than {COMMENT_MAX} characters"])
    digest = approvals.payload_digest(prepared.payload)
    with transaction.atomic():
        req = _held(actor, cluster, prepared, digest, reason, approvals_required=policy.approvers)
        record_event(
            req,
            actor=actor,
            action=names.SUBMIT,
            outcome="requested",
            params={"kind": prepared.kind, "payload_sha256": digest, "approvers": policy.approvers},
            step="submitted",
            text=f"{prepared.summary} (payload SHA-256 {digest[:12]}…)",
            source_ip=source_ip,
        )
        notify_approvers(req)
        announce(req, notify_events.CHANGE_HELD, f"{actor.get_username()} submitted: {prepared.summary}")
    return req


# -- approve --------------------------------------------------------------------------------------


def can_approve(user, req: ChangeRequest) -> bool:
    return (
        req.gated
        and req.state == RequestState.PENDING
        and req.requested_by_id != getattr(user, "pk", None)
        and access.can(user, req.cluster, access.APPROVE)
        and not approvals.has_approved(user, req)
    )


def _drifted(req: ChangeRequest, actor, why: str) -> bool:
    """Compute the review again (as ``actor``); when the cluster is no longer as reviewed, send the
    change back for a fresh review with the new diff and say so."""
    handler = held_kinds.get(req.kind)
    with gate.passed(handler.gate_of(req.payload)):
        now = handler.review(actor, req.cluster, req.payload)
    if now.get("pinned") == req.review.get("pinned") and now.get("ok", True):
        return False
    back_to_review(req, now, why)
    return True


def back_to_review(req: ChangeRequest, new_review: dict, why: str) -> None:
    """The cluster drifted (or the approvals expired, or a waiting request's last check failed): the
    new diff waits for fresh approvals."""
    with transaction.atomic():
        ChangeRequest.objects.filter(pk=req.pk).update(
            state=RequestState.PENDING,
            review={**new_review, "reviewed_before": req.review.get("rows", [])},
            decided_by=None,
            decided_by_name="",
            decided_at=None,
            operation=None,
        )
        req.approvals.all().delete()
        record_event(
            req,
            actor=access.system_actor(),
            action=names.DRIFT,
            outcome="refused",
            params={"kind": req.kind, "reason": why},
            step="drifted",
            text=why,
            by="system",
        )
        notify_requester(req, f"Change #{req.pk} needs a fresh review: {why}")
        notify_approvers(req)
        announce(req, notify_events.CHANGE_HELD, f"Back for a fresh review: {why}")
    req.refresh_from_db()


@refused_as(names.APPROVE, ChangeInvalid, targets=lambda k: [f"request:{k['request'].pk}"])
def approve_change(
    *, actor, request: ChangeRequest, comment: str = "", source_ip: str | None = None
) -> ChangeRequest:
    """Record one approval; with enough of them, re-check the cluster and queue the run."""
    req = request
    access.require(actor, req.cluster, access.APPROVE)
    if not req.gated:
        raise ChangeInvalid(["not a held operator action"])
    if req.requested_by_id == actor.pk:
        raise PermissionDenied("Four eyes: you cannot approve your own change.")
    if req.state != RequestState.PENDING:
        raise ChangeInvalid(["this change is not waiting for approval"])
    if len(comment) > COMMENT_MAX:
        raise ChangeInvalid([f"the comment is longer than {COMMENT_MAX} characters"])
    if approvals.payload_digest(req.payload) != req.payload_sha256:
        raise ChangeInvalid(["the stored payload does not match its reviewed digest; reject it"])
    if approvals.has_approved(actor, req):
        raise ChangeInvalid(["you have already approved this change"])
    with transaction.atomic():
        count = approvals.record(req, actor, comment)
        record_event(
            req,
            actor=actor,
            action=names.APPROVE,
            outcome="approved",
            params={
                "kind": req.kind,
                "payload_sha256": req.payload_sha256,
                "approval": count,
                "of": req.approvals_required,
                "comment": comment,
            },
            step="approved",
            text=f"{count} of {req.approvals_required}" + (f": {comment}" if comment else ""),
            source_ip=source_ip,
            on_behalf_of=req.requested_by_name,
        )
    if count < req.approvals_required:
        return req
    if _drifted(req, req.requested_by, "the cluster changed since the review; the new diff is shown"):
        return req
    when = schedule.after_approval(req)
    with transaction.atomic():
        claim_decision(req, RequestState.APPROVED, actor, comment)
        if when is not None:
            schedule.wait_for(req, when, actor)
        else:
            queue_run(req, actor=req.requested_by, source_ip=source_ip)
            notify_requester(
                req, f"Your change #{req.pk} was approved by {actor.get_username()} and runs now."
            )
            announce(req, notify_events.REQUEST_APPROVED, f"Approved by {actor.get_username()}; it runs now.")
    req.refresh_from_db()
    return req


# -- run (on the worker) -------------------------------------------------------------------------


def execute(req: ChangeRequest, *, retry: bool = False) -> tuple[bool, str]:
    """The reviewed payload, unchanged, as its author, right after a last drift and expiry check.
    Re-entered after an earlier attempt started (``retry``), it converges: that attempt passed the
    checks, and the kind's run takes what it already did as done.

    Raises Drifted after sending the change back for review (nothing ran)."""
    author = req.requested_by
    if author is None:
        return False, "the author's account no longer exists"
    if approvals.payload_digest(req.payload) != req.payload_sha256:
        return False, "the payload no longer matches the reviewed digest; nothing ran"
    # a scheduled change's approvals are judged at its approval: its run waited for the time they chose
    approved_at = req.decided_at if schedule.was_scheduled(req) else None
    if not retry and len(approvals.fresh_approvals(req, at=approved_at)) < req.approvals_required:
        back_to_review(
            req,
            req.review,
            f"the approvals expired (APPROVAL_TTL_H={approvals.approval_ttl()}) before it ran",
        )
        raise Drifted("approvals expired")
    why = "the cluster changed between the review and the run; the new diff is shown"
    if not retry and _drifted(req, author, why):
        raise Drifted("drift")
    with gate.passed(held_kinds.get(req.kind).gate_of(req.payload)):
        return held_kinds.run(
            req.kind, author, req.cluster, req.payload, f"change-{req.pk}", retry=retry, pinned=not retry
        )


# -- break glass ----------------------------------------------------------------------------------


@refused_as(
    names.BREAK_GLASS,
    ChangeInvalid,
    targets=lambda k: [k["prepared"].resource] if k.get("prepared") else [],
)
def break_glass(
    *, actor, cluster: Cluster, prepared: Prepared, justification: str, source_ip: str | None = None
) -> ChangeRequest:
    """An admin runs a held action at once: written justification, flagged in the audit trail,
    the approvers notified, kept in the review queue with its result."""
    access.require(actor, cluster, access.ADMINISTER)
    justification = justification.strip()
    if len(justification) < JUSTIFICATION_MIN:
        raise ChangeInvalid(
            [f"break glass needs a written justification (at least {JUSTIFICATION_MIN} characters)"]
        )
    if len(justification) > COMMENT_MAX:
        raise ChangeInvalid([f"the justification is longer than {COMMENT_MAX} characters"])
    digest = approvals.payload_digest(prepared.payload)
    with transaction.atomic():
        req = _held(
            actor,
            cluster,
            prepared,
            digest,
            justification,
            state=RequestState.RUNNING,
            decided_by=actor,
            decided_by_name=actor.get_username(),
            decided_at=timezone.now(),
            decision_comment=f"BREAK GLASS: {justification}",
        )
        record_event(
            req,
            actor=actor,
            action=names.BREAK_GLASS,
            outcome="requested",
            params={
                "kind": prepared.kind,
                "payload_sha256": digest,
                "justification": justification,
                "break_glass": True,
            },
            step="break glass",
            text=justification,
            source_ip=source_ip,
        )
        notify_approvers(req)
        announce(
            req,
            notify_events.BREAK_GLASS,
            f"{actor.get_username()} broke glass ({prepared.summary}): {justification}",
        )
    handler = held_kinds.get(req.kind)
    try:
        with gate.passed(handler.gate_of(req.payload)):
            ok, message = held_kinds.run(  # prepared just now: its review is the cluster as it is
                req.kind, actor, cluster, req.payload, f"change-{req.pk}", pinned=True
            )
    except KafkaOperationError as exc:
        ok, message = False, f"Kafka: {exc.name}: {exc.operator_text}"
    except held_kinds.Indeterminate as exc:  # run inline, not retried: say what is not known
        ok, message = False, f"Kafka did not say whether it was done: {exc}"
    except (PermissionDenied, ValueError) as exc:  # policy, plan and confirmation refusals
        ok, message = False, str(exc)
    with transaction.atomic():
        ChangeRequest.objects.filter(pk=req.pk).update(
            state=RequestState.SUCCEEDED if ok else RequestState.FAILED,
            result={"ok": ok, "message": message},
            finished_at=timezone.now(),
        )
        record_step(req, "system", "succeeded" if ok else "failed", message)
    req.refresh_from_db()
    return req
