"""Consumer group pages: the list, a group's page (live with htmx), offset reset (dry run, execute),
deleting a group or its offsets of a topic, and the groups consuming a topic (a fragment the topic
page loads after itself, so a slow or failing group read never holds up or breaks it)."""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from console import access, refusals
from console.alerts import rules
from console.clusters import capabilities
from console.forms.groups import ConfirmForm, GroupListForm, OffsetsDeleteForm, ResetForm
from console.groups import actions, delete, reads, trend
from console.groups import held as groups_held
from console.groups.core import to_csv
from console.kafka import KafkaOperationError
from console.views import htmx, posting
from console.views._helpers import get_cluster_for_user
from console.views.capabilities import unavailable_page
from console.views.posting import gated_context
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
    context["lag_threshold"] = _lag_threshold(cluster)
    try:
        context["page"] = reads.list_groups(actor=request.user, cluster=cluster, **query)
    except KafkaOperationError as exc:
        context["error"] = exc
    context["querystring"] = _querystring(request, drop=("page",))
    context["sort_querystring"] = _querystring(request, drop=("page", "sort", "desc"))
    return htmx.fragment_or_page(request, "console/group_list.html", "console/_group_table.html", context)


def _lag_threshold(cluster) -> float:
    """The group-lag alert rule's threshold on ``cluster``: a lag above it is coloured as a problem,
    a smaller one as plain "behind" (54 messages is not 5 million)."""
    return rules.settings_for(cluster)["group_lag"].threshold


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
        "lag_threshold": _lag_threshold(cluster),
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
        spec, typed = form.cleaned_data["spec"], confirm.cleaned_data["confirmation"]
        shown = partial(_show_refusal, context, confirm)
        action = request.POST.get("action")
        if action != "execute" and not (action == "break_glass" and context["gated"]):
            context.update(_plan(request, cluster, group, spec, on_refusal=shown))  # Dry run
        else:
            posted = posting.run_or_hold(
                request,
                cluster,
                context,
                run_actions=("execute",),
                prepare=partial(_prepare_reset, group_id=group, spec=spec, typed=typed),
                run=partial(actions.reset_offsets, group_id=group, spec=spec, confirmation=typed),
                on_refusal=shown,
            )
            if posted.held:
                return posted.held
            result = context["result"] = posted.result
            if result is not None and result.all_ok:
                messages.success(
                    request, f"Offsets of {result.ok_count} partition(s) reset ({spec.describe()})."
                )
                return htmx.redirect_to(request, _detail_url(cluster, group))
            if result is None:
                context.update(_plan(request, cluster, group, spec))  # a refused execute keeps its plan
    return htmx.fragment_or_page(
        request, "console/group_reset.html", "console/_group_reset_form.html", context
    )


def _prepare_reset(actor, cluster, group_id: str, spec, typed: str):
    actions.check_confirmation(group_id, typed)
    return groups_held.prepare_group_reset(actor, cluster, group_id, spec)


def _plan(request, cluster, group: str, spec, on_refusal=None) -> dict:
    """The reset's dry run for the page (also after a refused execute, to keep its plan in view)."""
    try:
        preview = actions.preview_reset(actor=request.user, cluster=cluster, group_id=group, spec=spec)
    except refusals.SHOWN as exc:
        if on_refusal is not None:
            on_refusal(exc)
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
        posted = posting.run_or_hold(
            request,
            cluster,
            context,
            run_actions=HOLD_ACTIONS,
            prepare=partial(groups_held.prepare_group_delete, group_id=group, confirmation=confirmation),
            run=partial(delete.delete_group, group_id=group, confirmation=confirmation),
            on_refusal=partial(_show_refusal, context, form),
        )
        if posted.held:
            return posted.held
        done = posted.result
        if done is not None and done.ok:
            messages.success(request, f"Consumer group '{group}' deleted.")
            return htmx.redirect_to(request, reverse("group_list", kwargs={"name": cluster.name}))
        if done is not None:
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
        posted = posting.run_or_hold(
            request,
            cluster,
            context,
            run_actions=HOLD_ACTIONS,
            prepare=partial(
                groups_held.prepare_group_offsets_delete,
                group_id=group,
                topic=topic,
                confirmation=confirmation,
            ),
            run=partial(delete.delete_offsets, group_id=group, topic=topic, confirmation=confirmation),
            on_refusal=partial(_show_refusal, context, form),
        )
        if posted.held:
            return posted.held
        result = posted.result
        if result is not None:
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
    context["lag_threshold"] = _lag_threshold(cluster)
    if not unavailable:
        try:
            context["consumers"] = reads.topic_consumers(actor=request.user, cluster=cluster, topic=topic)
        except KafkaOperationError as exc:
            context["error"] = _error_text(exc)
    # Only the topic page's htmx asks for it: the fragment, whoever asks.
    return htmx.fragment_or_page(request, "console/_group_topic_consumers.html", None, context)
