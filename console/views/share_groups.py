"""The share groups pages (KIP-932): the list (search, state, paged, total lag) or why the cluster has
none and how to enable them, a group (members, per-partition start offset, log end and lag), the reset
form (dry run first; the reset with the group id typed, held where the cluster holds resets) and the
deletion form (the group, or its offsets of topics)."""

from __future__ import annotations

from functools import partial

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from console import access, refusals
from console.forms.share_groups import ShareDeleteForm, ShareFilterForm, ShareResetForm
from console.share_groups import actions, held, reads
from console.views import htmx, posting
from console.views._helpers import get_cluster_for_user
from console.views.posting import gated_context


def _base(request, cluster) -> dict:
    return {"cluster": cluster, "can_manage": access.can(request.user, cluster, access.MANAGE_GROUPS)}


@login_required
@require_GET
def share_groups_page(request, name: str):
    """The cluster's share groups, or why there are none to show."""
    cluster = get_cluster_for_user(request, name)
    context = _base(request, cluster)
    form = context["filter_form"] = ShareFilterForm(request.GET or None)
    if not form.is_bound or form.is_valid():
        d = form.cleaned_data if form.is_bound else {}
        try:
            context["listing"] = reads.list_page(
                actor=request.user, cluster=cluster, query=d.get("q") or "", state=d.get("state") or "",
                page=d.get("page") or 1,
            )  # fmt: skip
        except refusals.SHOWN as exc:
            context["list_error"] = refusals.text(exc)
    query = request.GET.copy()
    query.pop("page", None)
    context["list_query"] = query.urlencode()
    context["enable_hint"] = reads.ENABLE_HINT
    return render(request, "console/share_groups.html", context)


def _detail_or_404(request, cluster, group_id: str, context: dict):
    try:
        found = reads.detail(actor=request.user, cluster=cluster, group_id=group_id)
    except refusals.SHOWN as exc:
        context["error"] = refusals.text(exc)
        return None
    if found is None:
        raise Http404("No such share group.")
    return found


@login_required
@require_GET
def share_group_detail(request, name: str, group_id: str):
    """A share group's members and partitions (404 when there is no such group)."""
    cluster = get_cluster_for_user(request, name)
    context = _base(request, cluster)
    context["group"] = _detail_or_404(request, cluster, group_id, context)
    context["group_id"] = group_id
    return render(request, "console/share_group.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def share_group_reset(request, name: str, group_id: str):
    """GET: the form. POST "dry_run": the plan; POST "apply": the reset after the typed group id (or the
    held change)."""
    cluster = get_cluster_for_user(request, name, access.MANAGE_GROUPS)
    form = ShareResetForm(request.POST or None)
    context = {**_base(request, cluster), "form": form, "group_id": group_id, "result": None, "plan": None}
    context.update(gated_context(request, cluster, held.GATE_RESET))
    if request.method == "POST" and form.is_valid():
        spec = form.cleaned_data["spec"]
        if request.POST.get("action") == "dry_run":
            try:
                context["plan"] = actions.preview_reset(
                    actor=request.user, cluster=cluster, group_id=group_id, spec=spec
                )
            except refusals.SHOWN as exc:
                posting.refused(form, exc)
        else:
            typed = request.POST.get("confirmation", "")
            posted = posting.run_or_hold(
                request, cluster, context, form=form,
                prepare=partial(held.prepare_reset, group_id=group_id, spec=spec, confirmation=typed),
                run=partial(actions.reset_offsets, group_id=group_id, spec=spec, confirmation=typed),
            )  # fmt: skip
            if posted.held:
                return posted.held
            context["result"] = posted.result
    return htmx.fragment_or_page(request, "console/share_group_reset.html", None, context)


@login_required
@require_http_methods(["GET", "POST"])
def share_group_delete(request, name: str, group_id: str):
    """GET: the form. POST: delete the group (or its offsets of the topics named) after the typed group id."""
    cluster = get_cluster_for_user(request, name, access.MANAGE_GROUPS)
    form = ShareDeleteForm(request.POST or None)
    context = {**_base(request, cluster), "form": form, "group_id": group_id, "result": None}
    context.update(gated_context(request, cluster, held.GATE_DELETE))
    if request.method == "POST" and form.is_valid():
        topics = form.cleaned_data["topics"]
        typed = request.POST.get("confirmation", "")
        run = (
            partial(actions.delete_offsets, group_id=group_id, topics=topics, confirmation=typed)
            if topics
            else partial(actions.delete_group, group_id=group_id, confirmation=typed)
        )
        posted = posting.run_or_hold(
            request, cluster, context, form=form,
            prepare=partial(held.prepare_delete, group_id=group_id, confirmation=typed, topics=topics), run=run,
        )  # fmt: skip
        if posted.held:
            return posted.held
        context["result"] = posted.result
    return htmx.fragment_or_page(request, "console/share_group_delete.html", None, context)
