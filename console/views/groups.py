"""Consumer group pages: the list, a group's page (live with htmx), offset reset (dry run, execute),
deleting a group or its offsets of a topic, and the groups consuming a topic (a fragment the topic
page loads after itself, so a slow or failing group read never holds up or breaks it)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from console import access, refusals
from console.clusters import capabilities
from console.forms.groups import ConfirmForm, GroupListForm, OffsetsDeleteForm, ResetForm
from console.groups import actions, delete, reads, trend
from console.groups import held as groups_held
from console.groups.core import to_csv
from console.kafka import KafkaOperationError
from console.views import htmx
from console.views._helpers import client_ip, get_cluster_for_user
from console.views.capabilities import unavailable_page
from console.views.changes import gated_context, hold_for_review, holding
from pipeline import charts

# On a cluster that holds these actions, any POST of a delete page submits it for review (the
# page's own button, or none) or breaks glass: nothing reaches the direct delete there.
HOLD_ACTIONS = ("delete", "")


def _cluster(request, name: str, perm: str = access.VIEW):
    cluster = get_cluster_for_user(request, name, perm)
    return cluster, capabilities.unavailable_reason(cluster, "groups")


def _querystring(request, drop: tuple[str, ...]) -> str:
    params = request.GET.copy()
    for key in drop:
        params.pop(key, None)
    return params.urlencode()


def _detail_url(cluster, group_id: str) -> str:
    return reverse("group_detail", kwargs={"name": cluster.name, "group": group_id})


def _show_refusal(context: dict, form, exc: Exception) -> None:
    """A refused typed confirmation on its field; any other refusal as the page's error."""
    if isinstance(exc, actions.ConfirmationError):
        form.add_error("confirmation", str(exc))
    else:
        context["error"] = refusals.text(exc)


def _error_text(exc: Exception) -> str:
    return f"{exc.name}: {exc.operator_text}" if isinstance(exc, KafkaOperationError) else str(exc)


@login_required
@require_GET
def group_list(request, name: str):
    cluster, unavailable = _cluster(request, name)
    if unavailable:
        return unavailable_page(request, cluster, "groups")
    form = GroupListForm(request.GET or None)
    query = form.query()
    context = {"cluster": cluster, "form": form, "query": query, "error": None, "page": None}
    try:
        context["page"] = reads.list_groups(actor=request.user, cluster=cluster, **query)
    except KafkaOperationError as exc:
        context["error"] = exc
    context["querystring"] = _querystring(request, drop=("page",))
    context["sort_querystring"] = _querystring(request, drop=("page", "sort", "desc"))
    return htmx.fragment_or_page(request, "console/group_list.html", "console/_group_table.html", context)


def _trend_chart(cluster, group_id: str) -> dict:
    got = trend.lag_trend(cluster.name, group_id)
    chart = charts.line_chart(("total lag", got.points), fmt=lambda v: f"{int(v):,} msgs")
    return {"chart": chart, "trend": got}


@login_required
@require_GET
def group_detail(request, name: str, group: str):
    """The group's members and lag; htmx polls the live part every GROUPS_REFRESH_S seconds."""
    cluster, unavailable = _cluster(request, name)
    if unavailable:
        return unavailable_page(request, cluster, "groups", f"Group {group}")
    context = {
        "cluster": cluster,
        "group_id": group,
        "refresh_s": settings.GROUPS_REFRESH_S,
        "can_manage": access.can(request.user, cluster, access.MANAGE_GROUPS),
    }
    try:
        context["detail"] = reads.group_detail(actor=request.user, cluster=cluster, group_id=group)
    except KafkaOperationError as exc:
        context["error"] = exc
        status = 404 if exc.name == "GROUP_ID_NOT_FOUND" and not htmx.wants_fragment(request) else 200
        return htmx.fragment_or_page(
            request, "console/group_detail.html", "console/_group_live.html", context, status=status
        )
    if not htmx.wants_fragment(request):
        context.update(_trend_chart(cluster, group))
    return htmx.fragment_or_page(request, "console/group_detail.html", "console/_group_live.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def group_reset(request, name: str, group: str):
    """One form, two buttons: Dry run (the plan, nothing changes) and Execute (with the group id typed)."""
    cluster, unavailable = _cluster(request, name, access.MANAGE_GROUPS)
    if unavailable:
        return unavailable_page(request, cluster, "groups", f"Reset offsets of {group}")
    form = ResetForm(request.POST or None, request.FILES or None, group_id=group)
    confirm = ConfirmForm(request.POST or None)
    context = {"cluster": cluster, "group_id": group, "form": form, "confirm": confirm, "preview": None}
    context["mode_fields"], context["scope_fields"] = ResetForm.MODE_FIELDS, ResetForm.SCOPE_FIELDS
    context.update(gated_context(request, cluster, "group.reset"))
    if request.method == "POST" and form.is_valid() and confirm.is_valid():
        spec = form.cleaned_data["spec"]
        try:
            if holding(request, context, ("execute",)):
                actions.check_confirmation(group, confirm.cleaned_data["confirmation"])
                prepared = groups_held.prepare_group_reset(request.user, cluster, group, spec)
                return hold_for_review(request, cluster, prepared)
            if request.POST.get("action") == "execute":
                result = actions.reset_offsets(
                    actor=request.user,
                    cluster=cluster,
                    group_id=group,
                    spec=spec,
                    confirmation=confirm.cleaned_data["confirmation"],
                    source_ip=client_ip(request),
                )
                if result.all_ok:
                    messages.success(
                        request, f"Offsets of {result.ok_count} partition(s) reset ({spec.describe()})."
                    )
                    return htmx.redirect_to(request, _detail_url(cluster, group))
                context["result"] = result
            else:
                context["preview"] = actions.preview_reset(
                    actor=request.user, cluster=cluster, group_id=group, spec=spec
                )
                context["export"] = to_csv(context["preview"].plan.rows)
        except refusals.SHOWN as exc:
            _show_refusal(context, confirm, exc)
        if request.POST.get("action") in ("execute", "break_glass") and not context.get("result"):
            context.update(
                _plan_again(request, cluster, group, spec)
            )  # a refused execute keeps its plan in view
    return htmx.fragment_or_page(
        request, "console/group_reset.html", "console/_group_reset_form.html", context
    )


def _plan_again(request, cluster, group: str, spec) -> dict:
    try:
        preview = actions.preview_reset(actor=request.user, cluster=cluster, group_id=group, spec=spec)
    except refusals.SHOWN:
        return {}
    return {"preview": preview, "export": to_csv(preview.plan.rows)}


@login_required
@require_http_methods(["GET", "POST"])
def group_delete(request, name: str, group: str):
    """Delete an empty group (the group id typed); held for review when the cluster holds resets."""
    cluster, unavailable = _cluster(request, name, access.MANAGE_GROUPS)
    if unavailable:
        return unavailable_page(request, cluster, "groups", f"Delete {group}")
    form = ConfirmForm(request.POST or None)
    context = {"cluster": cluster, "group_id": group, "form": form}
    context.update(gated_context(request, cluster, delete.GATE))
    if request.method == "POST" and form.is_valid():
        confirmation = form.cleaned_data["confirmation"]
        try:
            if holding(request, context, HOLD_ACTIONS):
                prepared = groups_held.prepare_group_delete(
                    request.user, cluster, group, confirmation=confirmation
                )
                return hold_for_review(request, cluster, prepared)
            done = delete.delete_group(
                actor=request.user,
                cluster=cluster,
                group_id=group,
                confirmation=confirmation,
                source_ip=client_ip(request),
            )
        except refusals.SHOWN as exc:
            _show_refusal(context, form, exc)
        else:
            if done.ok:
                messages.success(request, f"Consumer group '{group}' deleted.")
                return htmx.redirect_to(request, reverse("group_list", kwargs={"name": cluster.name}))
            context["error"] = f"Not deleted ({done.status}): {done.message}"
    try:
        context["group"] = reads.describe_group(cluster, group)
    except KafkaOperationError as exc:
        if exc.name == "GROUP_ID_NOT_FOUND" and request.method == "GET":
            raise Http404(exc.message) from None
        context.setdefault("error", _error_text(exc))
    return render(request, "console/group_delete.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def group_offsets_delete(request, name: str, group: str):
    """Delete the group's committed offsets of one topic (the topic comes from the group's page);
    held for review when the cluster holds resets."""
    cluster, unavailable = _cluster(request, name, access.MANAGE_GROUPS)
    if unavailable:
        return unavailable_page(request, cluster, "groups", f"Delete offsets of {group}")
    form = OffsetsDeleteForm(request.POST or None, initial={"topic": request.GET.get("topic", "")[:300]})
    context = {"cluster": cluster, "group_id": group, "form": form, "result": None}
    context.update(gated_context(request, cluster, delete.GATE))
    if request.method == "POST" and form.is_valid():
        topic, confirmation = form.cleaned_data["topic"], form.cleaned_data["confirmation"]
        try:
            if holding(request, context, HOLD_ACTIONS):
                prepared = groups_held.prepare_group_offsets_delete(
                    request.user, cluster, group, topic, confirmation=confirmation
                )
                return hold_for_review(request, cluster, prepared)
            result = delete.delete_offsets(
                actor=request.user,
                cluster=cluster,
                group_id=group,
                topic=topic,
                confirmation=confirmation,
                source_ip=client_ip(request),
            )
        except refusals.SHOWN as exc:
            _show_refusal(context, form, exc)
        else:
            if result.all_ok:
                messages.success(
                    request,
                    f"Committed offsets of '{topic}' deleted ({result.ok_count} partition{'s' if result.ok_count != 1 else ''}).",
                )
                return htmx.redirect_to(request, _detail_url(cluster, group))
            context["result"] = result
    return render(request, "console/group_offsets_delete.html", context)


@login_required
@require_GET
def group_topic_consumers(request, name: str, topic: str):
    """The topic page's "Consumer groups" section (loaded by htmx after the page)."""
    cluster, unavailable = _cluster(request, name)
    context = {"cluster": cluster, "topic": topic, "consumers": [], "error": unavailable or ""}
    if not unavailable:
        try:
            context["consumers"] = reads.topic_consumers(actor=request.user, cluster=cluster, topic=topic)
        except KafkaOperationError as exc:
            context["error"] = _error_text(exc)
    # Only the topic page's htmx asks for it: the fragment, whoever asks.
    return htmx.fragment_or_page(request, "console/_group_topic_consumers.html", None, context)
