"""Approved self-service requests and held changes on a worker: the ``request.execute`` kind.

A request runs through the held kind its area declares (``changes.kinds.run``: the one table
turning a stored request into an action), on behalf of the requester, as the approver (or the
system actor for auto-approved requests), so permissions, policy and audit are those of the area;
a held change runs through ``changes.execute`` (drift and expiry first). Re-running converges: the
kind's run takes what an earlier attempt did as done ("already exists" is success; a consumer group
reset already at the reviewed offsets is done).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from console import access, operations
from console.changes import actions as changes
from console.changes import gate, schedule
from console.changes import kinds as held_kinds
from console.changes.notify import notify_requester
from console.changes.queue import EXECUTE_KIND, record_step
from console.kafka import KafkaOperationError
from console.models import OperationState
from console.models.requests import ChangeRequest, RequestState
from console.operations import Done, Kind, Step
from console.requests import kinds as request_kinds
from console.requests.actions import get_request
from console.requests.checks import RequestInvalid, check_again


def _execute(req: ChangeRequest, actor, *, retry: bool) -> tuple[bool, str]:
    """A held change exactly as reviewed; a request through its held kind, its own four eyes passed."""
    if req.gated:
        return changes.execute(req, retry=retry)
    if not retry and schedule.was_scheduled(req):
        _checked_again(req)
    with gate.passed():
        return held_kinds.run(
            req.kind, actor, req.cluster, req.payload, f"request-{req.pk}",
            on_behalf_of=req.requested_by_name, retry=retry,
        )  # fmt: skip


def _checked_again(req: ChangeRequest) -> None:
    """A request that waited for its time (a freeze, a chosen time) is checked once more as at its
    approval, as a held change's drift pin is: when the cluster no longer allows it, it goes back for
    a fresh review with the reasons (``changes.Drifted``; nothing ran)."""
    try:
        check_again(req)
    except RequestInvalid as exc:
        why = f"the cluster changed while it waited: {exc}"
        changes.back_to_review(req, {"ok": False, "kafka": str(exc)}, why)
        raise changes.Drifted(why) from None


def _run(ctx) -> Done:
    """Execute once (converging when re-entered), record the outcome on the request and notify."""
    op = ctx.op
    req = ChangeRequest.objects.select_related("cluster", "requested_by", "decided_by").get(
        pk=op.params["request_id"]
    )
    if req.state in (RequestState.SUCCEEDED, RequestState.FAILED):  # recorded by an earlier attempt
        ok = req.state == RequestState.SUCCEEDED
        message = (req.result or {}).get("message", "")
        return _done(req, ok, message)
    actor = access.system_actor() if req.auto_approved else req.decided_by
    retry = req.state == RequestState.RUNNING
    with transaction.atomic():
        ChangeRequest.objects.filter(pk=req.pk).update(state=RequestState.RUNNING)
        record_step(req, "system", "running", f"operation #{op.pk} on {ctx.worker}")
    ctx.set_item(req.resource, state=OperationState.RUNNING)
    try:
        if actor is None:
            raise PermissionDenied("the approver's account no longer exists")
        if not retry:  # a freeze that began after the approval (or the schedule's tick) refuses the run
            schedule.check_frozen(req)
        ok, message = _execute(req, actor, retry=retry)
    except changes.Drifted as exc:  # sent back for a fresh review; nothing ran
        ctx.set_item(req.resource, state=OperationState.FAILED, progress=1.0, message=str(exc))
        return Done(
            OperationState.FAILED,
            result={"request_id": req.pk, "message": f"not run: {exc}"},
            error=f"not run: {exc} (back to review)",
            outcomes={req.resource: {"ok": False, "message": f"not run: {exc}"}},
        )
    except KafkaOperationError as exc:
        if exc.retriable:
            raise  # the cluster did not answer: the runner retries with backoff, then gives up
        ok, message = False, held_kinds.kafka_text(exc)
    except (PermissionDenied, ValueError) as exc:  # RequestInvalid, the areas' plan and policy refusals
        ok, message = False, str(exc)
    state = RequestState.SUCCEEDED if ok else RequestState.FAILED
    ctx.set_item(
        req.resource,
        state=OperationState.SUCCEEDED if ok else OperationState.FAILED,
        progress=1.0,
        message=message,
    )
    with transaction.atomic():
        ChangeRequest.objects.filter(pk=req.pk).update(
            state=state, result={"ok": ok, "message": message}, finished_at=timezone.now()
        )
        record_step(req, "system", "succeeded" if ok else "failed", message)
        notify_requester(
            req,
            f"Your request #{req.pk} ({request_kinds.label(req)} {req.resource}) {'is done' if ok else 'failed'}: {message}",
        )
    return _done(req, ok, message)


def _done(req: ChangeRequest, ok: bool, message: str) -> Done:
    return Done(
        OperationState.SUCCEEDED if ok else OperationState.FAILED,
        result={"request_id": req.pk, "message": message},
        error="" if ok else message,
        outcomes={req.resource: {"ok": ok, "message": message}},
    )


def _give_up(ctx, error: str) -> None:
    """The execution itself kept crashing: the request must not stay "running" either."""
    req = ChangeRequest.objects.filter(pk=ctx.op.params.get("request_id")).first()
    if req is None or req.state in (RequestState.SUCCEEDED, RequestState.FAILED):
        return
    with transaction.atomic():
        ChangeRequest.objects.filter(pk=req.pk).update(
            state=RequestState.FAILED, result={"ok": False, "message": error}, finished_at=timezone.now()
        )
        record_step(req, "system", "failed", f"the console gave up: {error}")
        notify_requester(
            req, f"Your request #{req.pk} ({request_kinds.label(req)} {req.resource}) failed: {error}"
        )


def _may_view(user, op) -> bool:
    """A request's execution shows its payload: only to those who may see the request itself."""
    req = ChangeRequest.objects.filter(pk=op.params.get("request_id"), operation=op).first()
    if req is None or op.cluster is None:
        return bool(getattr(user, "is_superuser", False))
    return get_request(actor=user, cluster=op.cluster, request_id=req.pk) is not None


operations.register(Kind(EXECUTE_KIND, (Step("execute", _run),), give_up=_give_up, may_view=_may_view))
