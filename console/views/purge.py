"""A topic's purge page (KIP-107 DeleteRecords): what to purge, the dry run's table (per partition the
start, end, new start, records and bytes that go, the groups left below the new start), then the typed
confirmation and Purge - held for review where the cluster holds record purges."""

from __future__ import annotations

from functools import partial

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from console import access, refusals
from console.forms.purge import PurgeForm
from console.purge import actions, core, held, reads
from console.views import posting
from console.views._helpers import get_cluster_for_user
from console.views.posting import gated_context

RUN_ACTIONS = ("apply",)


@login_required
@require_http_methods(["GET", "POST"])
def purge_page(request, name: str, topic: str):
    """GET: the form. POST ``dry_run``: the table and the confirmation; ``apply`` (or break glass):
    the purge, or the held change."""
    cluster = get_cluster_for_user(request, name, access.MANAGE_TOPICS)
    form = PurgeForm(request.POST or None, topic=topic)
    context = {"cluster": cluster, "topic": topic, "form": form, "plan": None, "result": None}
    context.update(gated_context(request, cluster, held.GATE))
    context["bytes_note"] = core.BYTES_NOTE
    if request.method == "POST" and form.is_valid():
        target = form.cleaned_data["target"]
        typed = request.POST.get("confirmation", "")
        if request.POST.get("action") in (*RUN_ACTIONS, "break_glass"):
            posted = posting.run_or_hold(
                request,
                cluster,
                context,
                form=form,
                run_actions=RUN_ACTIONS,
                prepare=partial(held.prepare, target=target, confirmation=typed),
                run=partial(actions.purge_records, target=target, confirmation=typed),
            )
            if posted.held:
                return posted.held
            context["result"] = posted.result
        if context["result"] is None:
            try:
                context["plan"] = reads.dry_run(actor=request.user, cluster=cluster, target=target)
            except refusals.SHOWN as exc:
                posting.refused(form, exc)
    return render(request, "console/purge.html", context)
