"""The KRaft lifecycle pages (admins): feature levels with Kafka's validate-only preview, the voter set
(add or remove a controller, KIP-853) and unregistering a stopped broker. Each posts through the
change-control door where the cluster holds its ``kraft.*`` kind."""

from __future__ import annotations

from functools import partial

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from console import access, refusals
from console.forms.kraft import FeaturesForm, UnregisterForm, VoterAddForm, VoterRemoveForm
from console.kafka import KafkaOperationError
from console.quorum import core, features, held, unregister, voters
from console.views import posting
from console.views._helpers import client_ip, get_cluster_for_user
from console.views.posting import gated_context


@login_required
@require_http_methods(["GET", "POST"])
def kraft_features(request, name: str):
    """GET: the features; POST "preview": Kafka's validate-only answer; "apply": the change (or held)."""
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    form = FeaturesForm(request.POST or None)
    context = {
        "cluster": cluster,
        "form": form,
        "result": None,
        **gated_context(request, cluster, held.FEATURES_GATE),
    }
    if request.method == "POST" and form.is_valid():
        change = {"updates": form.cleaned_data["updates"], "upgrade_type": form.cleaned_data["upgrade_type"]}
        if request.POST.get("action") == "preview":
            try:
                context["result"] = features.update_features(
                    actor=request.user, cluster=cluster, dry_run=True, source_ip=client_ip(request), **change
                )
            except refusals.SHOWN as exc:
                posting.refused(form, exc)
        else:
            posted = posting.run_or_hold(
                request, cluster, context, form=form,
                prepare=partial(held.prepare_features, **change), run=partial(features.update_features, **change),
            )  # fmt: skip
            answer = posting.answered(request, context, posted)
            if answer is not None:
                return answer
    try:
        found = context["features"] = sorted(
            features.describe(actor=request.user, cluster=cluster).values(), key=lambda f: f.name
        )
        levels = {f.name: f.finalized_max for f in found}
        context["metadata_release"] = core.metadata_release(levels.get(core.METADATA_VERSION))
    except KafkaOperationError as exc:
        context["read_error"] = exc
    return render(request, "console/quorum_features.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def kraft_voters(request, name: str):
    """GET: voters and observers with directory ids; POST "remove" or "add" a voter (or held)."""
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    action = request.POST.get("form", "")
    remove_form = VoterRemoveForm(request.POST if action == "remove" else None)
    add_form = VoterAddForm(
        request.POST if action == "add" else None, initial={"node_id": request.GET.get("add", "")}
    )
    context = {
        "cluster": cluster,
        "remove_form": remove_form,
        "add_form": add_form,
        "result": None,
        **gated_context(request, cluster, held.VOTER_GATE),
    }
    form = remove_form if action == "remove" else add_form
    if request.method == "POST" and action in ("remove", "add") and form.is_valid():
        d = form.cleaned_data
        if action == "remove":
            change = {"node_id": d["node_id"], "allow_leader": d["allow_leader"]}
            prepare = partial(held.prepare_voter, op=held.REMOVE, **change)
            run = partial(voters.remove_voter, **change)
        else:
            change = {
                "node_id": d["node_id"],
                "directory_id": d["directory_id"] or "",
                "endpoint": d["endpoint"] or "",
            }
            prepare = partial(held.prepare_voter, op=held.ADD, **change)
            run = partial(voters.add_voter, **change)
        posted = posting.run_or_hold(
            request, cluster, context, form=form, run_actions=(action,), prepare=prepare, run=run
        )
        answer = posting.answered(request, context, posted)
        if answer is not None:
            return answer
    try:
        info, voter_rows, observer_rows = voters.members(cluster)
        context.update(info=info, voters=voter_rows, observers=observer_rows)
    except KafkaOperationError as exc:
        context["read_error"] = exc
    return render(request, "console/quorum_voters.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def broker_unregister(request, name: str, broker_id: int):
    """GET: whether the broker may be unregistered (or why not); POST: unregister it (or held)."""
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    form = UnregisterForm(request.POST or None, broker_id=broker_id)
    context = {
        "cluster": cluster,
        "broker_id": broker_id,
        "form": form,
        "result": None,
        **gated_context(request, cluster, held.UNREGISTER_GATE),
    }
    if request.method == "POST" and form.is_valid():
        posted = posting.run_or_hold(
            request, cluster, context, form=form, run_actions=("unregister",),
            prepare=partial(held.prepare_unregister, broker_id=broker_id),
            run=partial(unregister.unregister_broker, broker_id=broker_id),
        )  # fmt: skip
        answer = posting.answered(
            request, context, posted, reverse("broker_list", kwargs={"name": cluster.name})
        )
        if answer is not None:
            return answer
    try:
        context["state"], context["hosted"] = unregister.check(cluster, broker_id)
    except refusals.SHOWN as exc:  # unsafe now: the reasons, and the form stays for when it is not
        context["refusal"] = refusals.reasons(exc)
    except KafkaOperationError as exc:
        context["read_error"] = exc
    return render(request, "console/broker_unregister.html", context)
