"""ACL pages: list, create (form or pasted batch), delete by filter, review/apply, effective access."""

from __future__ import annotations

import json
from functools import partial

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console import access, refusals
from console.acls import actions as acls
from console.acls import core as acl_core
from console.acls import held as acls_held
from console.forms.acls import AclBatchForm, AclBindingForm, AclExportForm, AclFilterForm, EffectiveAccessForm
from console.kafka import KafkaOperationError
from console.views import htmx, posting
from console.views._helpers import get_cluster_for_user
from console.views.posting import gated_context


def _as_json(bindings) -> list[tuple[str, object]]:
    return [(json.dumps(acl_core.to_dict(b), sort_keys=True), b) for b in bindings]


@login_required
@require_GET
def acl_list(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_ACLS)
    form = AclFilterForm(request.GET or None)
    listing, error = None, None
    if not form.is_bound or form.is_valid():
        try:
            listing = acls.list_acls(actor=request.user, cluster=cluster, **form.query())
        except KafkaOperationError as exc:
            error = exc
    cleaned = form.cleaned_data if form.is_bound and form.is_valid() else {}
    query = {k: v for k, v in cleaned.items() if v and k not in ("filter", "page")}
    context = {
        "cluster": cluster,
        "form": form,
        "listing": listing,
        "error": error,
        "query": urlencode(query),
    }
    return htmx.fragment_or_page(request, "console/acl_list.html", "console/_acl_table.html", context)


@login_required
@require_GET
def acl_export(request, name: str):
    """The bindings the list's filter matches as a file: YAML (for the batch form) or kafka-acls.sh lines."""
    cluster = get_cluster_for_user(request, name, access.MANAGE_ACLS)
    form = AclExportForm(request.GET)
    if not form.is_valid():
        problems = [e for errors in form.errors.values() for e in errors]
        return HttpResponse("\n".join(problems) + "\n", status=400, content_type="text/plain; charset=utf-8")
    try:
        filename, text = acls.export_acls(
            actor=request.user,
            cluster=cluster,
            filters=[form.cleaned_data["filter"]],
            fmt=form.cleaned_data["output"],
        )
    except KafkaOperationError as exc:
        return HttpResponse(f"{exc.operator_text}\n", status=502, content_type="text/plain; charset=utf-8")
    kind = "application/yaml" if filename.endswith(".yaml") else "text/x-shellscript"
    response = HttpResponse(text, content_type=f"{kind}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _review(request, cluster, deletes, creates, *, delete_filters=()):
    return render(
        request,
        "console/acl_review.html",
        {
            "cluster": cluster,
            "deletes": _as_json(deletes),
            "creates": _as_json(creates),
            "delete_filters": [acl_core.to_dict(f) for f in delete_filters],
            **gated_context(request, cluster, "acl"),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def acl_new(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_ACLS)
    batch = request.POST.get("mode") == "batch"
    single = AclBindingForm(request.POST if request.method == "POST" and not batch else None)
    pasted = AclBatchForm(
        request.POST if request.method == "POST" and batch else None,
        request.FILES if request.method == "POST" and batch else None,
    )
    error = None
    if request.method == "POST":
        form = pasted if batch else single
        if form.is_valid():
            creates = form.cleaned_data["creates"] if batch else [form.cleaned_data["binding"]]
            filters = form.cleaned_data["delete_filters"] if batch else []
            try:
                deletes = acls.preview_delete(actor=request.user, cluster=cluster, filters=filters)
                return _review(request, cluster, deletes, creates, delete_filters=filters)
            except KafkaOperationError as exc:
                error = exc
    context = {"cluster": cluster, "single": single, "pasted": pasted, "error": error}
    return render(request, "console/acl_new.html", context)


@login_required
@require_GET
def acl_delete(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_ACLS)
    form = AclFilterForm(request.GET)
    error = None
    if form.is_valid():
        try:
            acl_filter = acl_core.validate_filter(form.cleaned_data, for_delete=True)
            matched = acls.preview_delete(actor=request.user, cluster=cluster, filters=[acl_filter])
            return _review(request, cluster, matched, [], delete_filters=[acl_filter])
        except refusals.SHOWN as exc:
            error = refusals.text(exc)
    return render(request, "console/acl_review.html", {"cluster": cluster, "error": error, "form": form})


@login_required
@require_POST
def acl_apply(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_ACLS)
    refused: list[BaseException] = []
    try:
        bindings = {
            "deletes": acl_core.bindings_from_json(request.POST.getlist("delete")),
            "creates": acl_core.bindings_from_json(request.POST.getlist("create")),
        }
    except refusals.SHOWN as exc:
        refused.append(exc)
    else:
        posted = posting.run_or_hold(
            request,
            cluster,
            gated_context(request, cluster, "acl"),
            prepare=partial(acls_held.prepare_acl_change, **bindings),
            run=partial(acls.change_acls, **bindings),
            on_refusal=refused.append,
        )
        if posted.held:
            return posted.held
    if refused:
        return render(
            request, "console/acl_review.html", {"cluster": cluster, "error": refusals.text(refused[0])}
        )
    return render(request, "console/acl_results.html", {"cluster": cluster, "change": posted.result})


@login_required
@require_GET
def acl_effective(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_ACLS)
    form = EffectiveAccessForm(request.GET or None)
    result, error = None, None
    if form.is_bound and form.is_valid():
        try:
            result = acls.effective(
                actor=request.user,
                cluster=cluster,
                principal=form.cleaned_data["principal"],
                resource_type=form.cleaned_data["resource_type"],
                resource_name=form.cleaned_data["resource_name"],
                host=form.cleaned_data["host"] or "*",
            )
        except refusals.SHOWN as exc:
            error = refusals.text(exc)
    context = {"cluster": cluster, "form": form, "result": result, "error": error}
    return render(request, "console/acl_effective.html", context)
