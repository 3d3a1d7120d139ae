"""The estate page: export a cluster's or a namespace's desired state (a YAML download), plan a file
against the cluster (the diff per resource with Kafka's validate-only answers), and submit the plan
for approval as one held change. Thin over console/estate."""

from __future__ import annotations

import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console import access, refusals
from console.estate import held, reads
from console.estate.plan import CHECKED_COLUMNS
from console.forms.estate import EstatePlanForm, EstateSubmitForm
from console.views import htmx
from console.views._helpers import client_ip, get_cluster_for_user
from console.views.posting import refused

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _page(request, cluster, form, *, plan=None, submit=None, status: int = 200):
    may_submit = (
        plan is not None
        and plan.ok
        and plan.changes > 0
        and all(access.can(request.user, cluster, p) for p in held.permissions(plan.payload))
    )
    context = {
        "cluster": cluster,
        "form": form,
        "plan": plan,
        "columns": CHECKED_COLUMNS,
        "rows": plan.checked_rows() if plan is not None else [],
        "may_submit": may_submit,
        "submit": submit,
    }
    return render(request, "console/estate.html", context, status=status)


@login_required
@require_GET
def estate_page(request, name: str):
    cluster = get_cluster_for_user(request, name)
    return _page(request, cluster, EstatePlanForm())


@login_required
@require_GET
def estate_export(request, name: str):
    """The YAML file of the cluster (or of ``?namespace=``), as a download."""
    cluster = get_cluster_for_user(request, name)
    namespace = request.GET.get("namespace", "").strip()[:249]
    text = reads.export_estate(actor=request.user, cluster=cluster, namespace=namespace)
    response = HttpResponse(text, content_type="application/yaml; charset=utf-8")
    stem = _UNSAFE.sub("_", f"{cluster.name}-{namespace}".rstrip(".-")) or "estate"
    response["Content-Disposition"] = f'attachment; filename="{stem}.estate.yaml"'
    return response


@login_required
@require_POST
def estate_plan(request, name: str):
    """The posted file's plan against the cluster (changes nothing)."""
    cluster = get_cluster_for_user(request, name)
    form = EstatePlanForm(request.POST, request.FILES)
    plan = submit = None
    if form.is_valid():
        d = form.cleaned_data
        try:
            plan = reads.plan_estate(actor=request.user, cluster=cluster, text=d["text"], delete=d["delete"])
        except refusals.SHOWN as exc:
            refused(form, exc)
        else:
            submit = EstateSubmitForm(initial={"text": d["text"], "delete": d["delete"]})
    return _page(request, cluster, form, plan=plan, submit=submit)


@login_required
@require_POST
def estate_submit(request, name: str):
    """The planned file as one change held for approval (four eyes, always)."""
    cluster = get_cluster_for_user(request, name)
    submit = EstateSubmitForm(request.POST)
    form = EstatePlanForm(
        initial={"text": request.POST.get("text", ""), "delete": request.POST.get("delete")}
    )
    if submit.is_valid():
        d = submit.cleaned_data
        try:
            req = held.submit_plan(
                actor=request.user, cluster=cluster, text=d["text"], delete=d["delete"], reason=d["reason"],
                source_ip=client_ip(request),
            )  # fmt: skip
        except refusals.SHOWN as exc:
            refused(submit, exc)
        else:
            messages.success(
                request,
                f"Change #{req.pk} is held for approval: {req.approvals_required} approver(s) other than you.",
            )
            return htmx.redirect_to(
                request, reverse("request_detail", kwargs={"name": cluster.name, "request_id": req.pk})
            )
    return _page(request, cluster, form, submit=submit)
