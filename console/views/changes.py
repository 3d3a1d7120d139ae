"""The change-control policy page (console/changes): which operator actions need approval."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from console import access, refusals
from console.changes import actions as changes
from console.forms.changes import ChangePolicyForm
from console.views import posting
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
            posting.refused(form, exc)
        else:
            messages.success(request, "Change-control policy saved.")
            return redirect("change_policy", name=cluster.name)
    return render(request, "console/change_policy.html", {"cluster": cluster, "form": form})
