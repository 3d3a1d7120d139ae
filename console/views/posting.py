"""What a page does with a posted action, in one place.

- ``refused(form, exc)``: an area's refusal (console/refusals.py's ``SHOWN``) on the form, one error per
  reason; the page then re-renders the form with status 200 (htmx 2 does not swap a 4xx).
- ``run_or_hold(...)``: an action change control may hold (console/changes). When the cluster holds it
  and the page's button is the run button (or "break glass"), the action is prepared with its dry run
  and submitted for review, or run at once by an admin breaking glass (``views.changes.hold_for_review``);
  otherwise it runs. A refusal of either is shown (on the form by default) and the page renders again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse

from console import refusals
from console.changes.kinds import Prepared
from console.views._helpers import client_ip
from console.views.changes import hold_for_review, holding

__all__ = ["Posted", "refused", "run_or_hold"]


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
    """Hold the action for review when ``gated`` (views.changes.gated_context) says the cluster holds it
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
