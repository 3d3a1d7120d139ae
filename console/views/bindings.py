"""The per-cluster access page: who holds which role; admins grant and revoke."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from console import access, refusals
from console.clusters import bindings
from console.forms.bindings import GrantRoleForm
from console.models import RoleBinding
from console.views import posting
from console.views._helpers import client_ip, get_cluster_for_user


@login_required
@require_http_methods(["GET", "POST"])
def access_page(request, name: str):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    form = GrantRoleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            bindings.grant_role(
                actor=request.user, cluster=cluster, source_ip=client_ip(request), **form.cleaned_data
            )
        except refusals.SHOWN as exc:
            posting.refused(form, exc)
        else:
            messages.success(request, "Role granted.")
            return redirect("cluster_access", name=cluster.name)
    rows = cluster.bindings.select_related("user", "group").order_by("role", "user__username", "group__name")
    return render(request, "console/access.html", {"cluster": cluster, "form": form, "bindings": rows})


@login_required
@require_POST
def access_revoke(request, name: str, binding_id: int):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    binding = RoleBinding.objects.filter(pk=binding_id, cluster=cluster).first()
    if binding is None:
        raise Http404("No such role binding.")
    bindings.revoke_role(actor=request.user, binding=binding, source_ip=client_ip(request))
    messages.success(request, "Role revoked.")
    return redirect("cluster_access", name=cluster.name)
