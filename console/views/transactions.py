"""The transactions pages (KIP-664): the list with a state filter (paged), a transactional id, the
"Hanging" tab (find-hanging for a topic or a broker, each row with its abort link for admins), and the
abort form (typed confirmation of the topic-partition; held where the cluster holds aborts)."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from console import access, refusals
from console.forms.transactions import AbortForm, HangingForm, TxnFilterForm
from console.transactions import actions, held, reads
from console.views import htmx, posting
from console.views._helpers import get_cluster_for_user
from console.views.posting import gated_context


def _base(request, cluster, tab: str) -> dict:
    return {"cluster": cluster, "tab": tab, "can_abort": access.can(request.user, cluster, access.ADMINISTER)}


@login_required
@require_GET
def transactions_page(request, name: str):
    """The cluster's transactions, filtered by state, producer id or duration, one page at a time."""
    cluster = get_cluster_for_user(request, name)
    context = _base(request, cluster, "list")
    form = context["filter_form"] = TxnFilterForm(request.GET or None)
    if not form.is_bound or form.is_valid():
        d = form.cleaned_data if form.is_bound else {}
        try:
            context["listing"] = reads.list_page(
                actor=request.user,
                cluster=cluster,
                page=d.get("page") or 1,
                states=[d["state"]] if d.get("state") else [],
                producer_ids=[] if d.get("producer_id") is None else [d["producer_id"]],
                duration_ms=-1 if d.get("duration_ms") is None else d["duration_ms"],
            )
        except refusals.SHOWN as exc:
            context["list_error"] = refusals.text(exc)
    query = request.GET.copy()
    query.pop("page", None)
    context["list_query"] = query.urlencode()
    return render(request, "console/transactions.html", context)


@login_required
@require_GET
def transaction_detail(request, name: str, transactional_id: str):
    """One transactional id at its coordinator (404 when it knows none)."""
    cluster = get_cluster_for_user(request, name)
    context = _base(request, cluster, "list")
    try:
        found = reads.describe(actor=request.user, cluster=cluster, transactional_id=transactional_id)
    except refusals.SHOWN as exc:
        context["error"] = refusals.text(exc)
        found = None
    else:
        if found is None:
            raise Http404("No such transactional id.")
    context["txn"] = found
    context["shown"] = reads.description_json(found) if found is not None else None
    return render(request, "console/transaction_detail.html", context)


@login_required
@require_GET
def hanging_page(request, name: str):
    """find-hanging for a topic (or one of its partitions) or a broker, with a threshold."""
    cluster = get_cluster_for_user(request, name)
    context = _base(request, cluster, "hanging")
    form = context["form"] = HangingForm(request.GET or None)
    if form.is_bound and form.is_valid():
        d = form.cleaned_data
        try:
            found = reads.find_hanging(
                actor=request.user,
                cluster=cluster,
                topic=d.get("topic") or None,
                partition=d.get("partition"),
                broker_id=d.get("broker_id"),
                max_timeout_min=d["max_transaction_timeout"],
            )
        except refusals.SHOWN as exc:
            posting.refused(form, exc)
        else:
            context["found"] = found
            context["rows"] = [t.as_json(found.now_ms) for t in found.rows]
    return render(request, "console/transactions_hanging.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def abort_page(request, name: str):
    """GET: the form (prefilled from a hanging row) with the partition's open transactions. POST: the
    abort after the typed confirmation, or the held change."""
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    form = AbortForm(request.POST or request.GET or None)
    context = {**_base(request, cluster, "hanging"), "form": form, "result": None, "open": None}
    context.update(gated_context(request, cluster, held.GATE))
    if form.is_bound and form.is_valid():
        d = form.cleaned_data
        topic, partition, start = d["topic"], d["partition"], d["start_offset"]
        context["expected"] = f"{topic}-{partition}"
        if request.method == "POST":
            typed = request.POST.get("confirmation", "")
            posted = posting.run_or_hold(
                request,
                cluster,
                context,
                form=form,
                prepare=partial(
                    held.prepare, topic=topic, partition=partition, start_offset=start, confirmation=typed
                ),  # fmt: skip
                run=partial(
                    actions.abort_transaction,
                    topic=topic,
                    partition=partition,
                    start_offset=start,
                    confirmation=typed,
                ),  # fmt: skip
            )
            if posted.held:
                return posted.held
            result = context["result"] = posted.result
            if result is not None and result.ok:
                messages.success(request, result.message)
        try:
            states = reads.producers(actor=request.user, cluster=cluster, topic=topic, partition=partition)
            answer = states.get(partition)
            context["open"] = [
                reads.producer_json(s) for s in answer if s.txn_start_offset >= 0
            ] if isinstance(answer, tuple) else []  # fmt: skip
            if not isinstance(answer, tuple) and answer is not None:
                context["open_error"] = f"{answer.name}: {answer.operator_text}"
        except refusals.SHOWN as exc:
            context["open_error"] = refusals.text(exc)
    return htmx.fragment_or_page(request, "console/transaction_abort.html", None, context)
