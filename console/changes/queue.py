"""The review queue that self-service requests and held operator actions share: a ChangeRequest's
timeline, the one-winner decision, the kind labels, and the refusal its steps raise.

``console/requests`` (what a requester asks for) and ``changes.actions`` (operators' held actions)
both build on this; the worker runs either through the held kind its area declares."""

from __future__ import annotations

from django.utils import timezone

from console import access, operations
from console.audit import store as audit
from console.models import Operation
from console.models.requests import ChangeRequest, RequestEvent, RequestKind, RequestState

EXECUTE_KIND = "request.execute"
COMMENT_MAX = 2000
LABELS: dict[str, str] = dict(RequestKind.choices)


class RequestInvalid(ValueError):
    """The request cannot be submitted (or decided) as it is; ``errors`` are shown on the form."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def label(req) -> str:
    """A request's kind as the pages and notifications name it."""
    return LABELS.get(req.kind, req.kind)


def record_step(req: ChangeRequest, actor_name: str, step: str, text: str = "") -> None:
    """One line of a request's (or held change's) timeline."""
    RequestEvent.objects.create(request=req, actor_name=actor_name, step=step, text=text)


def record_event(
    req: ChangeRequest,
    *,
    actor,
    action: str,
    outcome: str,
    params: dict,
    step: str = "",
    text: str = "",
    by: str | None = None,
    source_ip: str | None = None,
    on_behalf_of: str = "",
) -> None:
    """A queue step's audit event (targets: the request and its resource; request id
    ``change-<id>`` for a held change, ``request-<id>`` for a request) and, with ``step``, its
    timeline line (by ``by``, default the actor). Inside the caller's transaction."""
    if step:
        record_step(req, actor.get_username() if by is None else by, step, text)
    audit.record(
        actor=actor,
        action=action,
        cluster=req.cluster,
        targets=[f"request:{req.pk}", req.resource],
        params=params,
        outcome=outcome,
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=f"{'change' if req.gated else 'request'}-{req.pk}",
    )


def queue_run(
    req: ChangeRequest, *, actor, source_ip: str | None = None, on_behalf_of: str = ""
) -> Operation:
    """An approved request or change queued on the worker (the ``request.execute`` Operation, started
    as ``actor``, dispatched on commit), linked to it and on its timeline. Inside the caller's
    transaction."""
    op = operations.start(
        actor=actor,
        kind=EXECUTE_KIND,
        cluster=req.cluster,
        params={"request_id": req.pk},
        items=[req.resource],
        targets=[f"request:{req.pk}", req.resource],
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
    )
    ChangeRequest.objects.filter(pk=req.pk).update(operation=op)
    record_step(req, "system", "queued", f"operation #{op.pk}")
    return op


def claim_decision(req: ChangeRequest, state: str, actor, comment: str) -> None:
    """Decide a pending request (or held change) once: a conditional UPDATE, so of two deciders
    only one wins; the other is refused."""
    updated = ChangeRequest.objects.filter(pk=req.pk, state=RequestState.PENDING).update(
        state=state,
        decided_by=actor if actor.pk else None,
        decided_by_name=actor.get_username(),
        decided_at=timezone.now(),
        decision_comment=comment,
        auto_approved=access.is_system(actor),
    )
    if not updated:
        raise RequestInvalid(["this request has already been decided"])
    req.refresh_from_db()
