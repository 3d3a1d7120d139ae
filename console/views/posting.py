"""What a page does with a posted action, in one place.

- ``refused(form, exc)``: an area's refusal (console/refusals.py's ``SHOWN``) on the form, one error per
  reason; the page then re-renders the form with status 200 (htmx 2 does not swap a 4xx).
- ``run_or_hold(...)``: an action change control may hold (console/changes). When the cluster holds it
  and the page's button is the run button (or "break glass"), the action is prepared with its dry run
  and goes through change control's door (``hold_for_review``: submitted for review, or run at once by
  an admin breaking glass); otherwise it runs. A refusal of either is shown (on the form by default)
  and the page renders again.
- ``preview_or_run(...)``: a diff form's POST (Preview diff, Validate only, Apply or submit): the
  preview asked of the area, the rest through ``run_or_hold``.
- ``answered(request, context, posted, url)``: the usual end of such a POST: the held change's page,
  or (when the run went through) its message and a redirect; None leaves the page to render the
  result (a refusal, a failure) in ``context["result"]``.
- ``gated_context``, ``holding``, ``hold_for_review``: the pieces, for a page whose action does not fit
  ``run_or_hold``'s shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from console import access, refusals
from console.changes import door, gate
from console.changes.kinds import Prepared
from console.views import htmx
from console.views._helpers import client_ip

__all__ = [
    "Posted",
    "answered",
    "gated_context",
    "hold_for_review",
    "holding",
    "preview_or_run",
    "refused",
    "run_or_hold",
]


def refused(form, exc: BaseException) -> None:
    """The refusal as the form's non-field errors, one per reason."""
    for reason in refusals.reasons(exc):
        form.add_error(None, reason)


@dataclass(frozen=True)
class Posted:
    """What became of a posted held action: ``held`` the answer to send (the redirect to the held
    change), else ``result`` what the run returned (None when refused)."""

    held: HttpResponse | None = None
    result: Any = None


def answered(request: HttpRequest, context: dict, posted: Posted, url: str = "") -> HttpResponse | None:
    """The held change's page, or the result's success message and a redirect to ``url`` (this page by
    default); None when the page should render ``context["result"]`` (refused, failed, nothing run)."""
    if posted.held:
        return posted.held
    result = context["result"] = posted.result
    if result is not None and result.ok:
        messages.success(request, result.message)
        return htmx.redirect_to(request, url or request.path)
    return None


def run_or_hold(
    request: HttpRequest,
    cluster,
    gated: dict,
    *,
    prepare: Callable[..., Prepared],
    run: Callable[..., Any],
    run_actions: tuple[str, ...] = ("apply",),
    form=None,
    on_refusal: Callable[[BaseException], None] | None = None,
) -> Posted:
    """Hold the action for review when ``gated`` (``gated_context``) says the cluster holds it
    and the posted button is one of ``run_actions`` or break glass; run it otherwise.

    ``prepare`` is the area's held prepare and ``run`` its action, each with the page's inputs bound
    (``functools.partial``); the door adds who and where: ``prepare(user, cluster)``,
    ``run(actor=user, cluster=cluster, source_ip=...)``. A refusal goes to ``on_refusal``, or to
    ``form`` as its errors."""
    try:
        if holding(request, gated, run_actions):
            return Posted(held=hold_for_review(request, cluster, prepare(request.user, cluster)))
        return Posted(result=run(actor=request.user, cluster=cluster, source_ip=client_ip(request)))
    except refusals.SHOWN as exc:
        if on_refusal is not None:
            on_refusal(exc)
        else:
            refused(form, exc)
        return Posted()


def preview_or_run(
    request: HttpRequest,
    cluster,
    gated: dict,
    *,
    form,
    preview: Callable[[], Any],
    prepare: Callable[..., Prepared],
    run: Callable[..., Any],
) -> Posted:
    """A diff form's POST by its ``action`` button: "preview" answers ``preview()`` (the area's diff,
    asked as the user; a refusal shows on the form); "validate" and "apply" (or break glass) go through
    ``run_or_hold`` with ``run`` told ``validate_only`` unless the button was "apply"."""
    action = request.POST.get("action", "preview")
    if action == "preview":
        try:
            return Posted(result=preview())
        except refusals.SHOWN as exc:
            refused(form, exc)
            return Posted()
    return run_or_hold(
        request, cluster, gated, form=form, prepare=prepare, run=partial(run, validate_only=action != "apply")
    )


def gated_context(request, cluster, kind: str) -> dict:
    """What a page needs to offer "Submit for approval" (and break glass) for a held ``kind``."""
    return {
        **door.page_controls(request.user, cluster, kind),
        "gate_label": gate.KINDS[kind],
        "can_break_glass": access.can(request.user, cluster, access.ADMINISTER),
    }


def holding(request, context: dict, run_actions: tuple[str, ...] = ("apply",)) -> bool:
    """Whether this POST submits the page's held action (or breaks glass) instead of running it."""
    action = request.POST.get("action", "")
    return context.get("gated", False) and (action in run_actions or action == "break_glass")


def hold_for_review(request, cluster, prepared):
    """A held action from a page through the change-control door (``changes.door``): submit it with
    its dry run for approval, or (an admin with a written justification, the "break_glass" button)
    break glass and run it now. Raises ChangeInvalid for the page to show."""
    glass = request.POST.get("action") == "break_glass"
    req = door.hold(
        actor=request.user,
        cluster=cluster,
        prepared=prepared,
        mode=door.BREAK_GLASS if glass else door.HOLD,
        text=request.POST.get("justification", ""),
        source_ip=client_ip(request),
    )
    if glass:
        text = f"Break glass: change #{req.pk} ran ({req.result.get('message', '')}); the approvers are told."
    else:
        text = f"Change #{req.pk} is held for approval: {req.approvals_required} approver(s) other than you."
    messages.success(request, text)
    url = reverse("request_detail", kwargs={"name": cluster.name, "request_id": req.pk})
    return htmx.redirect_to(request, url)
