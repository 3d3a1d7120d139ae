"""The client quotas page: quotas grouped by entity type with a filter, the quota that applies to a
user + client id (or an IP), and a change: preview the diff, Kafka's validate-only, apply (held where
the cluster's change control holds quota changes)."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.views.decorators.http import require_http_methods

from console import access, refusals
from console.forms.quotas import EffectiveForm, QuotaAlterForm, QuotaFilterForm
from console.quotas import actions, held, reads
from console.views import htmx, posting
from console.views._helpers import get_cluster_for_user
from console.views.posting import gated_context


def _listing(request, cluster, context: dict) -> None:
    form = QuotaFilterForm(request.GET or None)
    context["filter_form"] = form
    data = form.cleaned_data if form.is_bound and form.is_valid() else {}
    if form.is_bound and not form.is_valid():
        return
    try:
        context["listing"] = reads.list_quotas(
            actor=request.user,
            cluster=cluster,
            entity_type=data.get("entity_type", ""),
            name=data.get("name", ""),
            page=data.get("page") or 1,
        )
    except refusals.SHOWN as exc:
        context["list_error"] = refusals.text(exc)
    query = request.GET.copy()
    query.pop("page", None)
    context["list_query"] = query.urlencode()


def _effective(request, cluster, context: dict) -> None:
    asked = any(request.GET.get(k) for k in ("user", "client_id", "ip"))
    form = EffectiveForm(request.GET if asked else None)
    context["effective_form"] = form
    if not asked or not form.is_valid():
        return
    d = form.cleaned_data
    try:
        if d.get("ip"):
            context["effective"] = reads.effective_ip_quota(actor=request.user, cluster=cluster, ip=d["ip"])
        else:
            context["effective"] = reads.effective_quota(
                actor=request.user, cluster=cluster, user=d["user"], client_id=d["client_id"]
            )
    except refusals.SHOWN as exc:
        posting.refused(form, exc)


@login_required
@require_http_methods(["GET", "POST"])
def quotas_page(request, name: str):
    """GET lists (with the filter and the effective lookup); POST runs one step of a change:
    preview, validate or apply."""
    cluster = get_cluster_for_user(request, name)
    can_edit = access.can(request.user, cluster, access.MANAGE_CONFIGS)
    if request.method == "POST" and not can_edit:
        raise PermissionDenied(
            f"You need the '{access.MANAGE_CONFIGS}' permission on cluster '{cluster.name}'."
        )
    form = QuotaAlterForm(request.POST or None, initial={"entity": request.GET.get("entity", "")})
    context = {
        "cluster": cluster,
        "form": form,
        "can_edit": can_edit,
        "result": None,
        "diffs": None,
        **gated_context(request, cluster, held.GATE),
    }
    context["gated"] = can_edit and context["gated"]
    if request.method == "POST" and form.is_valid():
        entity, changes = form.cleaned_data["entity_obj"], form.cleaned_data["changes"]
        posted = posting.preview_or_run(
            request,
            cluster,
            context,
            form=form,
            preview=partial(
                actions.preview, actor=request.user, cluster=cluster, entity=entity, changes=changes
            ),
            prepare=partial(held.prepare, entity=entity, changes=changes),
            run=partial(actions.alter_quotas, entity=entity, changes=changes),
        )
        if posted.held:
            return posted.held
        result = context["result"] = posted.result  # a preview is a dry run that asked Kafka nothing
        if result is not None and result.ok and not result.validate_only:
            messages.success(request, f"Quotas of {entity.name} changed.")
            if result.message:
                messages.warning(request, result.message)
            return htmx.redirect_to(request, request.path + f"?entity_type={entity.parts[0][0]}")
        context["diffs"] = context["result"].diffs if context["result"] is not None else None
    posted = request.method == "POST"
    if not (posted and htmx.wants_fragment(request)):
        _listing(request, cluster, context)
        _effective(request, cluster, context)
    return htmx.fragment_or_page(
        request, "console/quotas.html", "console/_quotas_alter.html" if posted else None, context
    )
