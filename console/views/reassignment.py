"""Reassignment pages: list, plan (preview / start), export, live progress, throttle, cancel."""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console import access, operations, refusals
from console.changes import gate
from console.formatting import human_bytes, human_duration
from console.forms.reassignment import PlanForm, ThrottleForm
from console.kafka import KafkaOperationError
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment import dry_run, external, planner, progress, queue, reads, throttles
from console.reassignment import held as reassignment_held
from console.views import htmx, posting
from console.views import reassignment_rows as progress_rows
from console.views._helpers import client_ip, get_cluster_for_user
from console.views.posting import gated_context


def _get_reassignment_for_user(
    request, name: str, rid: int, perm: str = access.VIEW, defer: tuple[str, ...] = ()
) -> Reassignment:
    r = reads.reassignment_of(get_cluster_for_user(request, name, perm), rid, defer=defer)
    if r is None:
        raise Http404("No such reassignment.")
    return r


@login_required
@require_GET
def reassign_list(request, name: str):
    cluster = get_cluster_for_user(request, name)
    outside, error = [], None
    try:
        outside = external.external_reassignments(cluster)
    except KafkaOperationError as exc:
        error = exc
    return render(
        request,
        "console/reassign_list.html",
        {
            "cluster": cluster,
            "error": error,
            "external": outside,
            "reassignments": reads.reassignments_of(cluster)[:50],
            "can_manage": access.can(request.user, cluster, access.MANAGE_REASSIGNMENTS),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def reassign_new(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_REASSIGNMENTS)
    form = PlanForm(request.POST or None, request.FILES or None, initial=_rollback_initial(request, name))
    ctx = {
        "cluster": cluster,
        "form": form,
        "preview": None,
        "error": None,
        "checks": None,
        "intent_fields": PlanForm.INTENT_FIELDS,
        **gated_context(request, cluster, "reassignment"),
    }

    def show(exc: BaseException) -> None:
        if isinstance(exc, throttles.ThrottleError):  # the rate's own field
            form.add_error("throttle_mb", str(exc))
        else:
            ctx["error"], ctx["checks"] = refusals.text(exc), getattr(exc, "checks", None) or None

    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            if request.POST.get("action") in ("start", "break_glass"):
                posted = _start(request, cluster, ctx, data, show)
                if posted.held is not None:
                    return posted.held
                if posted.result is not None:
                    return redirect("reassign_detail", name=cluster.name, rid=posted.result.reassignment.pk)
            else:
                done = dry_run.dry_run(cluster, data, throttle=data["throttle"], pacing=data["pacing"])
                ctx["preview"], ctx["plan_json"] = done.preview, done.plan_json
                ctx["plan_sha256"] = done.preview.sha256
                ctx["balance"] = _balance_rows(done.balance)
        except refusals.SHOWN as exc:
            show(exc)
    if ctx["preview"] is not None:
        ctx["eta"] = human_duration(ctx["preview"].estimated_seconds)
        ctx["bytes"] = human_bytes(ctx["preview"].diff.total_bytes)
        ctx["diff_rows"], ctx["diff_more"] = _largest_first(ctx["preview"].diff.rows)
    return render(request, "console/reassign_new.html", ctx)


#: The dry run's table shows this many partitions, the largest moves first: a 10,000-partition
#: plan was ~10 MB of HTML; the counts, bytes, checks and the plan JSON cover every partition.
PREVIEW_ROWS = 200


def _largest_first(rows) -> tuple[list, int]:
    """The dry run's rows to show (the most bytes to move first, then in plan order) and how many
    more the plan has."""
    if len(rows) <= PREVIEW_ROWS:
        return list(rows), 0
    order = sorted(range(len(rows)), key=lambda i: (-rows[i].bytes_to_move, i))[:PREVIEW_ROWS]
    return [rows[i] for i in order], len(rows) - PREVIEW_ROWS


def _start(request, cluster, ctx, data, show) -> posting.Posted:
    """Start (or, on a gated cluster, submit) exactly the plan of the dry run (console/reassignment/
    dry_run.py): a plan file as sent, an intent's plan as previewed (sent back with its digest)."""
    expected = request.POST.get("plan_sha256", "").strip() or None
    plan, rf_change = dry_run.plan_to_start(
        intent=data["intent"],
        plan=data.get("plan"),
        reviewed=request.POST.get("previewed_plan", ""),
        expected=expected,
    )
    args = {
        "throttle": data["throttle"],
        "elect_preferred": data["elect_preferred"],
        "rf_change": rf_change,
        "pacing": data["pacing"],
    }
    return posting.run_or_hold(
        request,
        cluster,
        ctx,
        prepare=partial(reassignment_held.prepare_reviewed, plan=plan, **args, expected=expected),
        run=partial(reassignment.start_reassignment, proposed=plan, **args, expected_sha256=expected),
        run_actions=("start",),
        on_refusal=show,
    )


def _balance_rows(result) -> dict | None:
    """Per-broker bytes and preferred leaders before/after, for the balance section of the dry run."""
    if result is None:
        return None
    rows = [
        {
            "broker": b,
            "before": human_bytes(result.before[b]),
            "after": human_bytes(result.after[b]),
            "leaders_before": result.leaders_before.get(b, 0),
            "leaders_after": result.leaders_after.get(b, 0),
        }
        for b in sorted(result.before)
    ]
    return {
        "rows": rows,
        "moved": human_bytes(result.bytes_to_move),
        "bound": human_bytes(result.lower_bound),
    }


def _rollback_initial(request, name: str) -> dict:
    """``?rollback=<id>``: the form filled in with that cancelled reassignment's rollback plan."""
    rid = request.GET.get("rollback", "")
    if request.method != "GET" or not rid.isdigit() or len(rid) > 18:
        return {}
    r = _get_reassignment_for_user(request, name, int(rid), access.MANAGE_REASSIGNMENTS)
    plan = reassignment.rollback_plan(r)
    return {"intent": "json", "plan_json": planner.export_plan(plan)} if plan else {}


@login_required
@require_GET
def reassign_rollback(request, name: str, rid: int):
    """The rollback plan of a cancel that Kafka restored in another order, as a plan file."""
    r = _get_reassignment_for_user(request, name, rid, defer=_NOT_SHOWN)
    plan = reassignment.rollback_plan(r)
    if not plan:
        raise Http404("This reassignment has no rollback plan.")
    response = HttpResponse(planner.export_plan(plan), content_type="application/json")
    response["Content-Disposition"] = (
        f'attachment; filename="{r.cluster.name}-reassignment-{r.pk}-rollback.json"'
    )
    return response


@login_required
@require_GET
def reassign_export(request, name: str):
    cluster = get_cluster_for_user(request, name)
    topics = [t for t in request.GET.get("topics", "").split(",") if t.strip()]
    try:
        text = reassignment.export_assignment(cluster, [t.strip() for t in topics])
    except KafkaOperationError as exc:
        return HttpResponse(f"{exc.name}: {exc.operator_text}", status=502, content_type="text/plain")
    response = HttpResponse(text, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{cluster.name}-assignment.json"'
    return response


def _progress_context(r: Reassignment, user) -> dict:
    """What the progress fragment shows; Cancel and Change throttle only while the move runs."""
    op = r.operation
    settled = r.partitions.exclude(state__in=("pending", "moving")).count()
    # Cancel and Change throttle go once every partition has settled (the move has ended), even
    # while the operation still takes the throttles back.
    moving = not op.finished and r.stage != "finished" and settled < r.partitions_total
    rate = r.rate_bytes_per_s if r.rate_bytes_per_s > 0 else None
    eta = progress.eta_seconds(r.bytes_total - r.bytes_done, rate)
    rows = progress_rows.rows_html(r)
    # MANAGE_REASSIGNMENTS and ADMINISTER are not namespaced: access.can is "in permissions"
    granted = access.permissions(user, r.cluster)
    can_manage = access.MANAGE_REASSIGNMENTS in granted
    controls = can_manage and moving and not r.cancel_requested
    now = timezone.now()
    age = reads.poll_age(r)
    # the worker's last sign of life: a poll, a heartbeat, or (nothing yet) the submission
    alive = max(t for t in (r.last_poll_at, op.heartbeat_at, op.created_at) if t is not None)
    quiet = (now - alive).total_seconds()
    # Kafka could not be read for a while (the worker is alive and retrying): the figures are
    # the last ones read, and say so with their time, never shown as current
    lost = operations.lost_contact(op)
    behind = moving and reads.figures_behind(r)
    return {
        "r": r,
        "op": op,
        "polling": not op.finished,
        "moving": moving,
        "rows": rows,
        "more": max(0, r.partitions_total - progress_rows.SHOWN_ROWS),
        "stage": reassignment.stage_label(r),
        "done_bytes": human_bytes(r.bytes_done),
        "total_bytes": human_bytes(r.bytes_total),
        "rate": f"{human_bytes(rate)}/s" if rate is not None else "measuring rate",
        "rate_window": round(progress.rate_window(settings.REASSIGN_RATE_WINDOW_S)),
        "eta": human_duration(eta) if moving and r.last_poll_at and eta is not None and not behind else "—",
        "settled": settled,
        "throttle": human_bytes(r.throttle_bytes_per_s) + "/s"
        if r.throttle_bytes_per_s
        else ("split" if r.throttled else "none"),
        "age": None if age is None else max(0, round(age)),
        "quiet": round(quiet),
        "stale": moving and progress.staleness(quiet, progress.EXPECTED_POLL_S),
        "lost": lost,
        "behind": behind,
        "estimates": progress.ESTIMATE_NOTE,
        "ledger": list(r.throttles.all()),
        "can_manage": can_manage,
        # the rest only for the controls, shown while the move runs to those who may manage it
        "gated": controls and gate.required(user, r.cluster, "throttle") is not None,
        "gate_label": gate.KINDS["throttle"],
        "can_break_glass": controls and access.ADMINISTER in granted,
        "throttle_form": ThrottleForm() if controls else None,
        "rollback": len(reassignment.rollback_plan(r)),
        # a paced move's queue; Pause / Resume beside Cancel for those who may cancel
        "queue": _queue_context(r),
        "can_pause": controls,
        "rates": _split_rates(r),
    }


def _queue_context(r: Reassignment) -> dict | None:
    state = queue.queue_state(r)
    if state is None:
        return None
    n = state["max_moves_per_broker"]
    per_broker = ", ".join(f"broker {b}: {k}/{n}" for b, k in state["in_flight_per_broker"].items())
    return {**state, "per_broker_text": per_broker or "none"}


def _split_rates(r: Reassignment) -> list[str]:
    """Leader / follower rates and per-broker rates set apart from the throttle, as words."""
    out = []
    if r.leader_throttle_bytes_per_s:
        out.append(f"leader {human_bytes(r.leader_throttle_bytes_per_s)}/s")
    if r.follower_throttle_bytes_per_s:
        out.append(f"follower {human_bytes(r.follower_throttle_bytes_per_s)}/s")
    for b, v in sorted((r.broker_throttles or {}).items(), key=lambda x: int(x[0])):
        out.append(f"broker {b} {human_bytes(v)}/s")
    return out


# The poller's per-partition JSON (10,000s of entries): the rows read what they show of it themselves.
_NOT_SHOWN = ("live", "offsets", "rate_samples")


@login_required
@require_GET
def reassign_detail(request, name: str, rid: int):
    r = _get_reassignment_for_user(request, name, rid, defer=_NOT_SHOWN)
    return render(
        request, "console/reassign_detail.html", {**_progress_context(r, request.user), "cluster": r.cluster}
    )


@login_required
@require_GET
def reassign_progress(request, name: str, rid: int):
    r = _get_reassignment_for_user(request, name, rid, defer=_NOT_SHOWN)
    # Polled once a second by every open tab: the fragment alone, without the page's context
    # processors (the navigation's cluster and role reads); {% csrf_token %} needs only the token.
    context = {**_progress_context(r, request.user), "csrf_token": get_token(request)}
    return htmx.polled_fragment(
        request, "console/_reassign_progress.html", context, finished=r.operation.finished, processors=False
    )


@login_required
@require_POST
def reassign_throttle(request, name: str, rid: int):
    r = _get_reassignment_for_user(request, name, rid, access.MANAGE_REASSIGNMENTS)
    form = ThrottleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give the new throttle in MiB/s.")
        return redirect("reassign_detail", name=name, rid=rid)
    posted = posting.run_or_hold(
        request,
        r.cluster,
        posting.gated_context(request, r.cluster, "throttle"),
        prepare=lambda user, cluster: reassignment_held.prepare_throttle(user, cluster, r, form.rate),
        run=lambda actor, cluster, source_ip: throttles.change_throttle(
            actor=actor, reassignment=r, rate=form.rate, source_ip=source_ip
        ),
        on_refusal=lambda exc: messages.error(request, refusals.text(exc)),
    )
    if posted.held is not None:
        return posted.held
    if posted.result is not None:
        outcomes = posted.result
        failed = [k for k, v in outcomes.items() if not v["ok"]]
        if failed:
            messages.warning(request, f"Throttle changed, except on {', '.join(failed)}.")
        else:
            messages.success(request, f"Throttle changed to {form.cleaned_data['throttle_mb']} MiB/s.")
    return redirect("reassign_detail", name=name, rid=rid)


@login_required
@require_POST
def reassign_cancel(request, name: str, rid: int):
    r = _get_reassignment_for_user(request, name, rid, access.MANAGE_REASSIGNMENTS)
    try:
        reassignment.cancel_reassignment(actor=request.user, reassignment=r, source_ip=client_ip(request))
    except refusals.SHOWN as exc:
        messages.error(request, refusals.text(exc))
    else:
        messages.success(
            request,
            "Cancelling: Kafka takes back the replicas it was adding; each partition below then says "
            "what Kafka has (the original brokers, possibly in another order).",
        )
    return redirect("reassign_detail", name=name, rid=rid)


def _pause_or_resume(request, name: str, rid: int, pause: bool):
    r = _get_reassignment_for_user(request, name, rid, access.MANAGE_REASSIGNMENTS)
    act = queue.pause_reassignment if pause else queue.resume_reassignment
    try:
        state = act(actor=request.user, reassignment=r, source_ip=client_ip(request))
    except refusals.SHOWN as exc:
        messages.error(request, refusals.text(exc))
    else:
        if pause:
            messages.success(
                request, f"Paused ({state['queued']} queued): the partitions in flight finish; none start."
            )
        else:
            messages.success(request, f"Resumed: {state['queued']} queued partitions start as others finish.")
    return redirect("reassign_detail", name=name, rid=rid)


@login_required
@require_POST
def reassign_pause(request, name: str, rid: int):
    """A paced move stops submitting queued partitions (those in flight finish)."""
    return _pause_or_resume(request, name, rid, pause=True)


@login_required
@require_POST
def reassign_resume(request, name: str, rid: int):
    return _pause_or_resume(request, name, rid, pause=False)


@login_required
@require_POST
def reassign_external_cancel(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_REASSIGNMENTS)
    chosen = []
    for key in request.POST.getlist("partition"):
        topic, _, part = key.rpartition("|")
        if topic and part.isdigit():
            chosen.append((topic, int(part)))
    try:
        outcomes = external.cancel_external(
            actor=request.user, cluster=cluster, partitions=chosen, source_ip=client_ip(request)
        )
    except refusals.SHOWN as exc:
        messages.error(request, refusals.text(exc))
    else:
        failed = {k: v for k, v in outcomes.items() if not v["ok"]}
        msg = f"Cancelled {len(outcomes) - len(failed)} of {len(outcomes)}."
        now = [f"{k} {v['replicas']}" for k, v in outcomes.items() if "replicas" in v]
        if now:
            msg += f" Kafka has now: {'; '.join(now[:10])}{'; …' if len(now) > 10 else ''}."
        if failed:
            msg += " Not cancelled: " + "; ".join(f"{k} ({v['error']})" for k, v in failed.items())
        messages.info(request, msg)
    return redirect("reassign_list", name=name)
