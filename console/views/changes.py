"""The change-control policy page (console/changes): which operator actions need approval."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from console import access, refusals
from console.changes import actions as changes
from console.changes import door, gate
from console.forms.changes import ChangePolicyForm
from console.views import htmx
from console.views._helpers import client_ip, get_cluster_for_user


@login_required
@require_http_methods(["GET", "POST"])
def change_policy(request, name: str):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    policy = changes.get_policy(cluster)
    initial = {
        "enabled": policy.enabled,
        "kinds": policy.kinds,
        "roles": policy.roles,
        "approvers": str(policy.approvers),
    }
    form = ChangePolicyForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            changes.set_policy(
                actor=request.user,
                cluster=cluster,
                enabled=data["enabled"],
                kinds=list(data["kinds"]),
                roles=list(data["roles"]),
                approvers=data["approvers"],
                source_ip=client_ip(request),
            )
        except refusals.SHOWN as exc:
            for e in refusals.reasons(exc):
                form.add_error(None, e)
        else:
            messages.success(request, "Change-control policy saved.")
            return redirect("change_policy", name=cluster.name)
    return render(request, "console/change_policy.html", {"cluster": cluster, "form": form})


def gated_context(request, cluster, kind: str) -> dict:
    """What a page needs to offer "Submit for approval" (and break glass) for a held ``kind``."""
    return {
        "gated": door.is_held(request.user, cluster, kind),
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
