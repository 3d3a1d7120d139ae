"""Self-service requests: submit (namespace + policy + Kafka validate-only, or a consumer group reset's
dry run), approve/reject (four eyes: as many distinct approvers as the change-control policy asks for
the kind, never the requester), execute on a worker through the topic, config, ACL and consumer
group actions, notify, audit every step."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from console import access, notify
from console.audit import recorded
from console.audit.refusals import refused_as
from console.changes import actions as changes
from console.changes import approvals, schedule
from console.changes import kinds as held_kinds
from console.changes.kinds import ChangeInvalid
from console.changes.notify import announce, notify_approvers, notify_requester
from console.changes.queue import (
    COMMENT_MAX,
    RequestInvalid,
    claim_decision,
    queue_run,
    record_event,
)
from console.models import Cluster, Operation
from console.models.requests import (
    AutoApproveRule,
    ChangeRequest,
    RequestState,
)
from console.requests import audit_names as names
from console.requests import display
from console.requests import kinds as request_kinds
from console.requests.checks import check_again, check_request

log = logging.getLogger(__name__)


# ---- submit / decide ---------------------------------------------------------------------------


def _auto_rule_allows(cluster: Cluster, kind: str, payload: Mapping[str, Any]) -> bool:
    """The requester policy's auto-approve rule: the kind is listed, and the partitions the request
    creates or sets (as its held kind counts them) are within the rule's limit."""
    rule = AutoApproveRule.objects.filter(cluster=cluster, enabled=True).first()
    if rule is None or kind not in (rule.kinds or []):
        return False
    count = held_kinds.requested(kind).partitions(payload)
    return rule.max_partitions is None or count is None or count <= rule.max_partitions


@refused_as(names.SUBMIT, RequestInvalid, targets=lambda k: [str(k.get("kind", ""))])
def submit_request(
    *,
    actor,
    cluster: Cluster,
    kind: str,
    payload: Mapping[str, Any],
    reason: str = "",
    source_ip: str | None = None,
) -> ChangeRequest:
    """Validate everything, store the request with its first timeline step, audit it; auto-approve if the rule says so."""
    access.require(actor, cluster, access.REQUEST)
    if len(reason) > COMMENT_MAX:
        raise RequestInvalid([f"the reason is longer than {COMMENT_MAX} characters"])
    checked = check_request(requester=actor, cluster=cluster, kind=kind, payload=payload)
    needed = approvals.needed_for_request(cluster, kind, checked.payload)
    # the auto-approve rule stands in for one approver, never for the two a policy asks for
    auto = needed == 1 and _auto_rule_allows(cluster, kind, checked.payload)
    with transaction.atomic():
        req = ChangeRequest.objects.create(
            cluster=cluster,
            kind=kind,
            resource=checked.resource,
            payload=checked.payload,
            payload_sha256=approvals.payload_digest(checked.payload),
            approvals_required=needed,
            reason=reason,
            requested_by=actor,
            requested_by_name=actor.get_username(),
        )
        record_event(
            req,
            actor=actor,
            action=names.SUBMIT,
            outcome="requested",
            params={"kind": kind, "payload": display.shown_payload(kind, checked.payload), "reason": reason},
            step="submitted",
            text=checked.summary,
            source_ip=source_ip,
        )
        announce(req, notify.events.REQUEST_SUBMITTED, f"{req.requested_by_name} asks: {checked.summary}")
        try:
            if not auto:
                raise RequestInvalid(["not auto-approved"])
            _approve(
                req,
                access.system_actor(),
                "approved by this cluster's auto-approve rule",
                source_ip,
                auto=True,
            )
        except RequestInvalid:  # not auto-approved, or the windows allow no run within the horizon
            notify_approvers(req)
    return req


def can_decide(user, req: ChangeRequest) -> bool:
    """Approvers of the cluster, never the requester (four eyes, whatever their other roles), and
    not one whose approval already counts."""
    return (
        req.state == RequestState.PENDING
        and req.requested_by_id != getattr(user, "pk", None)
        and access.can(user, req.cluster, access.APPROVE)
        and not approvals.has_approved(user, req)
    )


def _require_decider(actor, req: ChangeRequest) -> None:
    access.require(actor, req.cluster, access.APPROVE)
    if req.requested_by_id == actor.pk:
        raise PermissionDenied("Four eyes: you cannot approve or reject your own request.")


def _approval_text(count: int, needed: int, comment: str) -> str:
    if needed == 1:
        return comment
    return f"{count} of {needed}" + (f": {comment}" if comment else "")


def _record_approval(req: ChangeRequest, actor, comment: str, source_ip, count: int, needed: int, auto: bool):
    """One approval's timeline line and audit event (the last one needed, or one short of it)."""
    record_event(
        req,
        actor=actor,
        action=names.AUTO_APPROVE if auto else names.APPROVE,
        outcome="approved",
        params={
            "kind": req.kind,
            "payload": display.shown_payload(req.kind, req.payload),
            "comment": comment,
            "approval": count,
            "of": needed,
        },
        step="auto-approved" if auto else "approved",
        text=_approval_text(count, needed, comment),
        source_ip=source_ip,
        on_behalf_of=req.requested_by_name,
    )


def _approve(
    req: ChangeRequest,
    actor,
    comment: str,
    source_ip: str | None,
    *,
    auto: bool = False,
    count: int = 1,
    needed: int = 1,
) -> None:
    """Inside the caller's transaction: mark approved, audit, start the Operation (dispatched on commit),
    or, as a held change, wait for its scheduled time or for the end of a freeze (``changes.schedule``)."""
    try:
        when = schedule.after_approval(req)
    except ChangeInvalid as exc:
        raise RequestInvalid(exc.errors) from None
    claim_decision(req, RequestState.APPROVED, actor, comment)
    _record_approval(req, actor, comment, source_ip, count, needed, auto)
    if when is not None:
        schedule.wait_for(req, when, actor)
        return
    queue_run(
        req,
        actor=req.requested_by if auto else actor,
        source_ip=source_ip,
        on_behalf_of=req.requested_by_name,
    )
    notify_requester(
        req,
        f"Your request #{req.pk} ({request_kinds.label(req)} {req.resource}) was approved by {actor.get_username()}.",
    )
    announce(req, notify.events.REQUEST_APPROVED, f"Approved by {actor.get_username()}; it runs now.")


@refused_as(names.APPROVE, RequestInvalid, targets=lambda k: [f"request:{k['request'].pk}"])
def approve_request(
    *, actor, request: ChangeRequest, comment: str = "", source_ip: str | None = None
) -> ChangeRequest:
    """Four eyes (as many distinct approvers as the change-control policy asks for the kind, counted
    as it is now), re-validate against the cluster as it is now; with the last approval needed, run
    the change as an Operation. An approval short of that count is recorded and audited; nothing runs."""
    _require_decider(actor, request)
    if len(comment) > COMMENT_MAX:
        raise RequestInvalid([f"the comment is longer than {COMMENT_MAX} characters"])
    if request.state != RequestState.PENDING:
        raise RequestInvalid(["this request has already been decided"])
    if approvals.has_approved(actor, request):
        raise RequestInvalid(["you have already approved this request; it needs another approver"])
    check_again(request)
    needed = max(
        request.approvals_required,
        approvals.needed_for_request(request.cluster, request.kind, request.payload),
    )
    with transaction.atomic():
        if needed != request.approvals_required:  # the policy asks for more now than on submit
            ChangeRequest.objects.filter(pk=request.pk).update(approvals_required=needed)
            request.approvals_required = needed
        count = approvals.record(request, actor, comment)
        if count >= needed:
            _approve(request, actor, comment, source_ip, count=count, needed=needed)
        else:
            _record_approval(request, actor, comment, source_ip, count, needed, auto=False)
    request.refresh_from_db()
    return request


@refused_as(names.REJECT, RequestInvalid, targets=lambda k: [f"request:{k['request'].pk}"])
def reject_request(
    *, actor, request: ChangeRequest, comment: str, source_ip: str | None = None
) -> ChangeRequest:
    """Four eyes; a rejection always says why."""
    _require_decider(actor, request)
    comment = comment.strip()
    if not comment:
        raise RequestInvalid(["say why the request is rejected"])
    if len(comment) > COMMENT_MAX:
        raise RequestInvalid([f"the comment is longer than {COMMENT_MAX} characters"])
    with transaction.atomic():
        claim_decision(request, RequestState.REJECTED, actor, comment)
        ChangeRequest.objects.filter(pk=request.pk).update(finished_at=timezone.now())
        record_event(
            request,
            actor=actor,
            action=names.REJECT,
            outcome="rejected",
            params={"kind": request.kind, "comment": comment},
            step="rejected",
            text=comment,
            source_ip=source_ip,
            on_behalf_of=request.requested_by_name,
        )
        notify_requester(
            request, f"Your request #{request.pk} was rejected by {actor.get_username()}: {comment}"
        )
        announce(request, notify.events.REQUEST_REJECTED, f"Rejected by {actor.get_username()}: {comment}")
    request.refresh_from_db()
    return request


def decide(
    *,
    actor,
    request: ChangeRequest,
    approve: bool,
    comment: str = "",
    source_ip=None,
    run_at: datetime | None = None,
) -> ChangeRequest:
    """One entry for the review queue's Approve/Reject (pages, API, CLI): a held operator action is
    approved by change control (approvals, drift), anything else here. ``run_at``: approve and
    schedule in one action - the time is set first (``changes.schedule``, with its refusals: a time
    in a freeze approves nothing), then the approval, whose run waits for it."""
    if run_at is not None:
        if not approve:
            raise RequestInvalid(["only an approval takes a time to run at"])
        _require_decider(actor, request)
        schedule.schedule_change(actor=actor, request=request, run_at=run_at, source_ip=source_ip)
    if approve and request.gated:
        return changes.approve_change(actor=actor, request=request, comment=comment, source_ip=source_ip)
    service = approve_request if approve else reject_request
    return service(actor=actor, request=request, comment=comment, source_ip=source_ip)


@refused_as(names.CANCEL, RequestInvalid, targets=lambda k: [f"request:{k['request'].pk}"])
def cancel_request(*, actor, request: ChangeRequest, source_ip: str | None = None) -> ChangeRequest:
    """The requester withdraws their own request while it waits for approval."""
    access.require(actor, request.cluster, access.VIEW)
    if request.requested_by_id != actor.pk:
        raise PermissionDenied("Only the requester can cancel a request.")
    with transaction.atomic():
        updated = ChangeRequest.objects.filter(pk=request.pk, state=RequestState.PENDING).update(
            state=RequestState.CANCELLED, finished_at=timezone.now()
        )
        if not updated:
            raise RequestInvalid(["only a request waiting for approval can be cancelled"])
        record_event(
            request,
            actor=actor,
            action=names.CANCEL,
            outcome="success",
            params={"kind": request.kind},
            step="cancelled",
            source_ip=source_ip,
        )
    request.refresh_from_db()
    return request


# ---- reading -----------------------------------------------------------------------------------


def may_see_all(user, cluster: Cluster) -> bool:
    return access.can(user, cluster, access.APPROVE) or access.can(user, cluster, access.VIEW_AUDIT)


def list_requests(
    *, actor, cluster: Cluster, state: str = "", kind: str = "", limit: int = 200
) -> list[ChangeRequest]:
    """Approvers and auditors see every request on the cluster; everyone else only their own."""
    access.require(actor, cluster, access.VIEW)
    qs = ChangeRequest.objects.filter(cluster=cluster).select_related("requested_by", "cluster", "schedule")
    if not may_see_all(actor, cluster):
        qs = qs.filter(requested_by=actor)
    if state:
        qs = qs.filter(state=state)
    if kind:
        qs = qs.filter(kind=kind)
    return list(qs.order_by("-id")[:limit])


def review_queue(*, actor, cluster_name: str = "", state: str = "", kind: str = "", limit: int = 200):
    """One queue over every cluster the actor may see (self-service requests and held operator
    actions): on a cluster where they approve or audit, every request; elsewhere their own."""
    scope = Q()
    for cluster in access.visible_clusters(actor):
        if cluster_name and cluster.name != cluster_name:
            continue
        if may_see_all(actor, cluster):
            scope |= Q(cluster=cluster)
        elif access.can(actor, cluster, access.VIEW):
            scope |= Q(cluster=cluster, requested_by=actor)
    if not scope:
        return []
    qs = ChangeRequest.objects.filter(scope).select_related("cluster", "schedule")
    if state:
        qs = qs.filter(state=state)
    if kind:
        qs = qs.filter(kind=kind)
    return list(qs.order_by("-id")[:limit])


def get_request(*, actor, cluster: Cluster, request_id: int) -> ChangeRequest | None:
    """The request when the actor may see it (its requester, approvers, auditors), else None."""
    req = ChangeRequest.objects.filter(cluster=cluster, pk=request_id).select_related("operation").first()
    if req is None or not access.can(actor, cluster, access.VIEW):
        return None
    if req.requested_by_id != actor.pk and not may_see_all(actor, cluster):
        return None
    return req


@refused_as(names.AUTO_APPROVE_RULE_UPDATE, ValidationError)
def set_auto_approve_rule(
    *,
    actor,
    cluster: Cluster,
    enabled: bool,
    kinds: list[str],
    max_partitions: int | None,
    source_ip: str | None = None,
) -> AutoApproveRule:
    """Cluster admins decide which low-risk requests skip the human approver (the change is audited)."""
    access.require(actor, cluster, access.ADMINISTER)
    kinds = [k for k in kinds if k in request_kinds.VALUES]
    with transaction.atomic():
        rule, _ = AutoApproveRule.objects.select_for_update().get_or_create(cluster=cluster)
        return recorded.set_fields(
            rule,
            {"enabled": enabled, "kinds": kinds, "max_partitions": max_partitions},
            ("enabled", "kinds", "max_partitions"),
            actor=actor,
            action=names.AUTO_APPROVE_RULE_UPDATE,
            targets=[f"cluster:{cluster.name}"],
            cluster=cluster,
            source_ip=source_ip,
        )


def operation_for(req: ChangeRequest) -> Operation | None:
    return req.operation
