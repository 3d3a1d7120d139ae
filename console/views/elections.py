"""Leftover throttles (list, clean up) and leader elections (preferred, unclean) pages."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console import access, refusals
from console.forms.reassignment import ElectionForm
from console.kafka import KafkaOperationError
from console.reassignment import elections, throttles
from console.reassignment import held as reassignment_held
from console.reassignment import janitor as reassign_janitor
from console.views import posting
from console.views._helpers import client_ip, get_cluster_for_user
from console.views.posting import gated_context


@login_required
@require_GET
def throttle_list(request, name: str):
    cluster = get_cluster_for_user(request, name)
    foreign, error = [], None
    try:
        foreign = reassign_janitor.find_foreign_throttles(cluster)
    except KafkaOperationError as exc:
        error = exc
    return render(
        request,
        "console/throttle_list.html",
        {
            "cluster": cluster,
            "foreign": foreign,
            "error": error,
            "ledger": throttles.ThrottleEntry.objects.filter(
                cluster=cluster, state__in=throttles.ACTIVE
            ).select_related("reassignment__operation"),
            "can_manage": access.can(request.user, cluster, access.MANAGE_REASSIGNMENTS),
        },
    )


@login_required
@require_POST
def throttle_cleanup(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_REASSIGNMENTS)
    try:
        outcomes = reassign_janitor.clean_foreign_throttles(
            actor=request.user,
            cluster=cluster,
            keys=request.POST.getlist("key"),
            source_ip=client_ip(request),
        )
    except KafkaOperationError as exc:
        messages.error(request, f"{exc.name}: {exc.operator_text}")
    else:
        ok = sum(1 for v in outcomes.values() if v["ok"])
        messages.info(request, f"Removed {ok} of {len(outcomes)} leftover throttle configs.")
    return redirect("throttle_list", name=name)


@login_required
@require_http_methods(["GET", "POST"])
def election_page(request, name: str):
    cluster = get_cluster_for_user(request, name)
    form = ElectionForm(request.POST or None)
    held = gated_context(request, cluster, "election")
    if request.method == "POST":
        access.require(request.user, cluster, access.MANAGE_REASSIGNMENTS)
        if form.is_valid():
            data = form.cleaned_data
            try:
                chosen = elections.partitions_to_elect(
                    request.user,
                    cluster,
                    data["election_type"],
                    data["chosen"] if data["scope"] == "selected" else None,
                )
            except refusals.SHOWN as exc:
                posting.refused(form, exc)
            else:
                inputs = {
                    "election_type": data["election_type"],
                    "partitions": chosen,
                    "confirmation": data.get("confirmation", ""),
                }
                posted = posting.run_or_hold(
                    request,
                    cluster,
                    held,
                    run_actions=("run",),
                    form=form,
                    prepare=partial(reassignment_held.prepare_election, **inputs),
                    run=partial(elections.start_election, **inputs),
                )
                if posted.held:
                    return posted.held
                if posted.result is not None:
                    return redirect("operation_detail", op_id=posted.result.pk)
    imbalance, error = None, None
    try:
        imbalance = elections.leader_imbalance(cluster)
    except KafkaOperationError as exc:
        error = exc
    return render(
        request,
        "console/election.html",
        {
            "cluster": cluster,
            "form": form,
            "imbalance": imbalance,
            "error": error,
            "can_manage": access.can(request.user, cluster, access.MANAGE_REASSIGNMENTS),
            "can_unclean": access.can(request.user, cluster, access.ADMINISTER),
            "confirmation": elections.unclean_confirmation(cluster),
            **held,
        },
    )
