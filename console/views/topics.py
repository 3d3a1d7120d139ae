"""Topic pages: list, detail, create (one / batch), delete, add partitions."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console import access, refusals
from console.forms.topics import (
    AddPartitionsForm,
    BatchCreateForm,
    TopicCreateForm,
    TopicListForm,
    TopicPolicyForm,
)
from console.kafka import KafkaOperationError
from console.messages import grants as messages_grants
from console.topics import actions as topics
from console.topics import confirm, policy
from console.topics import delete as deletion
from console.topics import held as topics_held
from console.topics import reads as topic_reads
from console.views import htmx, posting
from console.views._helpers import client_ip, get_cluster_for_user
from console.views.posting import gated_context
from console.views.topic_detail_rows import config_rows_html, event_rows_html, partition_rows_html
from console.views.topic_rows import result_rows_html, topic_rows_html

# On a cluster that holds deletions, a confirmed delete is submitted for review (the page's
# "Submit for approval" button, or none) or breaks glass: nothing reaches the direct delete there.
HOLD_ACTIONS = ("submit", "")


def _result_rows(result):
    """The results table's rows (console/_topic_results.html) of a create or delete, if any."""
    return result_rows_html(result.outcomes) if result is not None else ""


@login_required
@require_GET
def topic_list(request, name: str):
    cluster = get_cluster_for_user(request, name)
    form = TopicListForm(request.GET or None)
    query = form.query()
    context = {"cluster": cluster, "form": form, "query": query, "error": None, "page": None}
    try:
        context["page"] = topic_reads.list_topics(
            actor=request.user, cluster=cluster, refresh=bool(request.GET.get("refresh")), **query
        )
    except KafkaOperationError as exc:
        context["error"] = exc
    context["can_manage"] = access.can(request.user, cluster, access.MANAGE_TOPICS)
    if context["page"] is not None:
        context["topic_rows"] = topic_rows_html(context["page"], cluster.name, context["can_manage"])
    context["querystring"] = _querystring(request, drop=("page", "refresh"))
    context["sort_querystring"] = _querystring(request, drop=("page", "refresh", "sort", "desc"))
    return htmx.fragment_or_page(request, "console/topic_list.html", "console/_topic_table.html", context)


def _querystring(request, drop: tuple[str, ...]) -> str:
    params = request.GET.copy()
    for key in drop:
        params.pop(key, None)
    return params.urlencode()


@login_required
@require_GET
def topic_detail(request, name: str, topic: str):
    cluster = get_cluster_for_user(request, name)
    try:
        detail = topic_reads.describe_topic(actor=request.user, cluster=cluster, name=topic)
    except KafkaOperationError as exc:
        status = 404 if exc.name == "UNKNOWN_TOPIC_OR_PARTITION" else 200
        context = {"cluster": cluster, "topic": topic, "error": exc}
        return render(request, "console/topic_detail.html", context, status=status)
    can_manage = access.can(request.user, cluster, access.MANAGE_TOPICS)
    context = {
        "cluster": cluster,
        "topic": topic,
        "detail": detail,
        "partition_rows": partition_rows_html(
            detail.partitions,
            detail.partition_sizes,
            "not in snapshot" if detail.sizes.has_snapshot else "no snapshot yet",
        ),
        "config_rows": config_rows_html(detail.configs),
        "event_rows": event_rows_html(detail.events),
        "can_manage": can_manage and not detail.internal,
        "can_edit_configs": access.can(request.user, cluster, access.MANAGE_CONFIGS),
        "can_read_data": messages_grants.visible(request.user, cluster, topic),
    }
    return render(request, "console/topic_detail.html", context)


def _create_or_hold(request, cluster, held: dict, form, specs, validate_only: bool) -> posting.Posted:
    """Create the topics (or validate only), or hold their creation for review (one page or a batch)."""
    return posting.run_or_hold(
        request,
        cluster,
        held,
        run_actions=("create",),
        form=form,
        prepare=partial(topics_held.prepare_topic_create, specs=specs),
        run=partial(topics.create_topics, specs=specs, validate_only=validate_only),
    )


@login_required
@require_http_methods(["GET", "POST"])
def topic_create(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_TOPICS)
    like, like_error = None, None
    if request.method == "GET" and request.GET.get("like"):
        try:
            like = topic_reads.settings_of(actor=request.user, cluster=cluster, name=request.GET["like"])
        except KafkaOperationError as exc:
            like_error = exc
    form = TopicCreateForm(request.POST or None, initial=TopicCreateForm.initial_like(like) if like else None)
    result = None
    held = gated_context(request, cluster, "topic.create")
    if request.method == "POST" and form.is_valid():
        validate_only = request.POST.get("action") == "validate"
        posted = _create_or_hold(request, cluster, held, form, [form.spec()], validate_only)
        if posted.held:
            return posted.held
        result = posted.result
        if result is not None:
            outcome = result.outcomes[0]
            if outcome.ok and not validate_only:
                messages.success(request, f"Topic '{outcome.name}' created.")
                if outcome.warning:
                    messages.warning(request, outcome.warning)
                url = reverse("topic_detail", kwargs={"name": cluster.name, "topic": outcome.name})
                return htmx.redirect_to(request, url)
    return htmx.fragment_or_page(
        request,
        "console/topic_create.html",
        "console/_topic_create_form.html",
        {
            "cluster": cluster,
            "form": form,
            "result": result,
            "result_rows": _result_rows(result),
            "like": like,
            "like_error": like_error,
            "namespaces": policy.rules_for(cluster).namespace_rules,
            **held,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def topic_batch_create(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_TOPICS)
    form = BatchCreateForm(request.POST or None, request.FILES or None)
    result = None
    held = gated_context(request, cluster, "topic.create")
    if request.method == "POST" and form.is_valid():
        validate_only = request.POST.get("action") == "validate"
        posted = _create_or_hold(request, cluster, held, form, form.cleaned_data["specs"], validate_only)
        if posted.held:
            return posted.held
        result = posted.result
    context = {
        "cluster": cluster,
        "form": form,
        "result": result,
        "result_rows": _result_rows(result),
        **held,
    }
    return render(request, "console/topic_batch.html", context)


def _prepare_delete(actor, cluster, names: list[str], typed: str):
    confirm.check_held_delete(names, typed)
    return topics_held.prepare_topic_delete(actor, cluster, names)


@login_required
@require_POST
def topic_delete(request, name: str):
    """Two steps on one URL: without ``confirmation`` show what would happen; with it, delete."""
    cluster = get_cluster_for_user(request, name, access.MANAGE_TOPICS)
    names = [n.strip() for n in request.POST.getlist("names") if n.strip()]
    context = {"cluster": cluster, "names": names, "result": None, "error": ""}
    context.update(gated_context(request, cluster, "topic.delete"))
    if "confirmation" in request.POST and names:
        typed = request.POST["confirmation"]
        posted = posting.run_or_hold(
            request,
            cluster,
            context,
            run_actions=HOLD_ACTIONS,
            prepare=partial(_prepare_delete, names=names, typed=typed),
            run=partial(deletion.delete_topics, names=names, confirmation=typed),
            on_refusal=lambda exc: context.update(error=refusals.text(exc)),
        )
        if posted.held:
            return posted.held
        if posted.result is not None:
            context["result"], context["result_rows"] = posted.result, _result_rows(posted.result)
            return render(request, "console/topic_delete.html", context)
    if not names:
        messages.error(request, "Select at least one topic to delete.")
        return redirect("topic_list", name=cluster.name)
    try:
        context["preview"] = deletion.delete_preview(actor=request.user, cluster=cluster, names=names)
    except KafkaOperationError as exc:
        context["preview"], context["error"] = [(n, "") for n in names], exc.operator_text
    context["expected"] = deletion.delete_confirmation(names)
    return render(request, "console/topic_delete.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def topic_add_partitions(request, name: str, topic: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_TOPICS)
    form = AddPartitionsForm(request.POST or None)
    outcome = None
    held = gated_context(request, cluster, "topic.partitions")
    if request.method == "POST" and form.is_valid():
        validate_only = request.POST.get("action") == "validate"
        total, assignment = form.cleaned_data["total_count"], form.cleaned_data["assignment"]
        posted = posting.run_or_hold(
            request,
            cluster,
            held,
            form=form,
            prepare=partial(
                topics_held.prepare_partitions, topic=topic, total_count=total, assignment=assignment
            ),
            run=partial(
                topics.add_partitions,
                topic=topic,
                total_count=total,
                assignment=assignment,
                validate_only=validate_only,
            ),
        )
        if posted.held:
            return posted.held
        outcome = posted.result
        if outcome is not None and outcome.ok and not validate_only:
            messages.success(request, f"Topic '{topic}' now has {total} partitions.")
            url = reverse("topic_detail", kwargs={"name": cluster.name, "topic": topic})
            return htmx.redirect_to(request, url)
    current = topic_reads.partition_count(actor=request.user, cluster=cluster, name=topic)
    return render(
        request,
        "console/topic_partitions.html",
        {"cluster": cluster, "topic": topic, "form": form, "outcome": outcome, "current": current, **held},
    )


@login_required
@require_http_methods(["GET", "POST"])
def topic_policy(request, name: str):
    """The cluster's create-topic / alter-config limits: everyone who sees the cluster reads them, admins edit."""
    cluster = get_cluster_for_user(
        request, name, access.ADMINISTER if request.method == "POST" else access.VIEW
    )
    rules = policy.rules_for(cluster)
    form = TopicPolicyForm(request.POST or None, initial=TopicPolicyForm.initial_from(rules))
    if request.method == "POST" and form.is_valid():
        policy.update_topic_policy(
            actor=request.user, cluster=cluster, values=form.cleaned_data, source_ip=client_ip(request)
        )
        messages.success(request, "Topic policy saved.")
        return redirect("topic_policy", name=cluster.name)
    return render(
        request,
        "console/topic_policy.html",
        {
            "cluster": cluster,
            "form": form,
            "rules": rules,
            "can_edit": access.can(request.user, cluster, access.ADMINISTER),
        },
    )
