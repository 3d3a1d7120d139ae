"""Self-service request pages: list/queue, submit, detail with timeline, approve/reject, auto-approve rule."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console import access, refusals
from console.changes import actions as change_actions
from console.changes import approvals
from console.changes import notify as request_notify
from console.forms.requests import AutoApproveRuleForm, DecisionForm, RequestForm
from console.forms.windows import ScheduleForm
from console.models.requests import FINAL_STATES, AutoApproveRule, RequestState
from console.requests import actions as requests
from console.requests import display as request_display
from console.requests import kinds as request_kinds
from console.views import htmx, posting
from console.views._helpers import client_ip, get_cluster_for_user
from console.windows import guard as window_guard


def _get_request_for_user(request, cluster, request_id: int):
    req = requests.get_request(actor=request.user, cluster=cluster, request_id=request_id)
    if req is None:
        raise Http404("No such request.")
    return req


def _queue(rows, kind: str, state: str) -> dict:
    """A queue page's rows (waiting ones first, with their kind's label) and its kind/state filter."""
    for row in rows:
        row.kind_label = request_kinds.label(row)
    return {
        "queue": [r for r in rows if r.state == RequestState.PENDING],
        "others": [r for r in rows if r.state != RequestState.PENDING],
        "kind": kind,
        "state": state,
        "kind_choices": sorted(request_kinds.LABELS.items()),
        "state_choices": RequestState.choices,
    }


@login_required
@require_GET
def review_queue(request):
    """Every cluster's requests and held changes the user may see, filterable by cluster, kind, state."""
    clusters = list(access.visible_clusters(request.user).order_by("name"))
    names = {c.name for c in clusters}
    chosen = request.GET.get("cluster", "")
    kind, state = request.GET.get("kind", ""), request.GET.get("state", "")
    rows = requests.review_queue(
        actor=request.user,
        cluster_name=chosen if chosen in names else "",
        state=state if state in RequestState.values else "",
        kind=kind if kind in request_kinds.LABELS else "",
    )
    context = {**_queue(rows, kind, state), "clusters": clusters, "chosen": chosen}
    return render(request, "console/review_queue.html", context)


@login_required
@require_GET
def request_list(request, name: str):
    cluster = get_cluster_for_user(request, name)
    kind = request.GET.get("kind", "")
    state = request.GET.get("state", "")
    rows = requests.list_requests(
        actor=request.user,
        cluster=cluster,
        state=state if state in RequestState.values else "",
        kind=kind if kind in request_kinds.LABELS else "",
    )
    context = {
        **_queue(rows, kind, state),
        "cluster": cluster,
        "can_submit": access.can(request.user, cluster, access.REQUEST),
        "can_approve": access.can(request.user, cluster, access.APPROVE),
        "can_administer": access.can(request.user, cluster, access.ADMINISTER),
        "notifications": request_notify.unread_notifications(actor=request.user),
    }
    return render(request, "console/request_list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def request_new(request, name: str):
    cluster = get_cluster_for_user(request, name, access.REQUEST)
    form = RequestForm(
        request.POST or None,
        request.FILES or None,
        initial={"kind": request.GET.get("kind", "topic.create"), "group": request.GET.get("group", "")},
    )
    if request.method == "POST" and form.is_valid():
        try:
            req = requests.submit_request(
                actor=request.user,
                cluster=cluster,
                kind=form.cleaned_data["kind"],
                payload=form.cleaned_data["payload"],
                reason=form.cleaned_data["reason"],
                source_ip=client_ip(request),
            )
        except refusals.SHOWN as exc:
            posting.refused(form, exc)
        else:
            messages.success(request, f"Request #{req.pk} submitted.")
            return redirect("request_detail", name=cluster.name, request_id=req.pk)
    return render(request, "console/request_new.html", {"cluster": cluster, "form": form})


@login_required
@require_GET
def request_detail(request, name: str, request_id: int):
    cluster = get_cluster_for_user(request, name)
    req = _get_request_for_user(request, cluster, request_id)
    if req.requested_by_id == request.user.pk:
        request_notify.mark_read(actor=request.user, request=req)
    payload = request_display.shown_payload(req.kind, req.payload or {})
    group_reset = req.kind == request_kinds.GROUP_RESET
    if req.gated:
        return _change_detail(request, cluster, req)
    given = approvals.fresh_approvals(req)
    context = {
        **_status_context(cluster, req),
        "kind_label": request_kinds.label(req),
        "can_decide": requests.can_decide(request.user, req),
        "payload_rows": (
            request_display.group_reset_rows(payload)
            if group_reset
            else request_display.payload_rows(payload)
        ),
        "dry_run": request_display.dry_run_rows(payload) if group_reset else None,
        "approvals": given,
        "approve_label": _approve_label(cluster, last=len(given) + 1 >= req.approvals_required),
        "awaiting_other": req.requested_by_id == request.user.pk and req.state == RequestState.PENDING,
        "form": DecisionForm(),
    }
    return render(request, "console/request_detail.html", context)


def _approve_label(cluster, *, last: bool) -> str:
    """What the last approval does: run the request now, or, while the cluster's windows forbid a run
    (a freeze, the maintenance-only rule), leave it waiting for the next allowed moment."""
    if not last:
        return "Approve"
    return (
        "Approve and run"
        if window_guard.refusal(cluster) is None
        else "Approve (runs when the windows allow)"
    )


def _change_detail(request, cluster, req):
    """A held operator action: its review (before -> after, Kafka's dry-run answer) and approvals."""
    context = {
        **_status_context(cluster, req),
        "kind_label": request_kinds.label(req),
        "review": req.review or {},
        "approvals": approvals.fresh_approvals(req),
        "can_decide": change_actions.can_approve(request.user, req),
        "awaiting_other": req.requested_by_id == request.user.pk and req.state == RequestState.PENDING,
        "form": DecisionForm(),
    }
    return render(request, "console/change_detail.html", context)


def _status_context(cluster, req) -> dict:
    return {
        "cluster": cluster,
        "req": req,
        "steps": list(req.events.all()),
        "polling": req.state not in FINAL_STATES,
    }


@login_required
@require_GET
def request_status(request, name: str, request_id: int):
    """The htmx fragment the detail page polls until the request is finished (then: stop polling)."""
    cluster = get_cluster_for_user(request, name)
    req = _get_request_for_user(request, cluster, request_id)
    context = _status_context(cluster, req)
    return htmx.polled_fragment(
        request, "console/_request_status.html", context, finished=not context["polling"]
    )


def _decide(request, name: str, request_id: int, approve: bool):
    cluster = get_cluster_for_user(request, name, access.APPROVE)
    req = _get_request_for_user(request, cluster, request_id)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(e for errs in form.errors.values() for e in errs))
        return redirect("request_detail", name=cluster.name, request_id=req.pk)
    when = ScheduleForm(request.POST) if approve and request.POST.get("run_at") else None
    if when is not None and not when.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in when.errors.items()))
        return redirect("request_detail", name=cluster.name, request_id=req.pk)
    try:
        req = requests.decide(
            actor=request.user,
            request=req,
            approve=approve,
            comment=form.cleaned_data["comment"],
            source_ip=client_ip(request),
            run_at=when.zoned("run_at") if when is not None else None,
        )
    except refusals.SHOWN as exc:
        messages.error(request, "Not done: " + "; ".join(refusals.reasons(exc)))
    else:
        text = approvals.approval_outcome(req) if approve else f"Request #{req.pk} rejected."
        messages.success(request, text)
    return redirect("request_detail", name=cluster.name, request_id=req.pk)


@login_required
@require_POST
def request_approve(request, name: str, request_id: int):
    return _decide(request, name, request_id, approve=True)


@login_required
@require_POST
def request_reject(request, name: str, request_id: int):
    return _decide(request, name, request_id, approve=False)


@login_required
@require_POST
def request_cancel(request, name: str, request_id: int):
    cluster = get_cluster_for_user(request, name)
    req = _get_request_for_user(request, cluster, request_id)
    try:
        requests.cancel_request(actor=request.user, request=req, source_ip=client_ip(request))
    except refusals.SHOWN as exc:
        messages.error(request, "; ".join(refusals.reasons(exc)))
    else:
        messages.success(request, f"Request #{req.pk} cancelled.")
    return redirect("request_detail", name=cluster.name, request_id=req.pk)


@login_required
@require_http_methods(["GET", "POST"])
def request_rules(request, name: str):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    rule = AutoApproveRule.objects.filter(cluster=cluster).first()
    initial = (
        {"enabled": rule.enabled, "kinds": rule.kinds, "max_partitions": rule.max_partitions} if rule else {}
    )
    form = AutoApproveRuleForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        requests.set_auto_approve_rule(
            actor=request.user, cluster=cluster, **form.cleaned_data, source_ip=client_ip(request)
        )
        messages.success(request, "Auto-approve rule saved.")
        return redirect("request_list", name=cluster.name)
    return render(request, "console/request_rules.html", {"cluster": cluster, "form": form})
