"""Log-dir pages: a broker's dirs (replicas per dir with search, the moves in progress, the move
form), the plan-file page, and a move's progress (polled by htmx). Moves are held for review where
the cluster holds ``logdir.move``."""

from __future__ import annotations

from functools import partial

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console import access, refusals
from console.addresses import client_ip
from console.forms.logdirs import MoveForm, PlanForm
from console.kafka import KafkaOperationError
from console.logdirs import actions, held, reads
from console.models import Operation
from console.views import htmx, posting
from console.views._helpers import get_cluster_for_user
from console.views.posting import gated_context

RUN_ACTIONS = ("apply",)


def _started(request, name: str, posted) -> object | None:
    if posted.held:
        return posted.held
    if posted.result is not None:
        return htmx.redirect_to(
            request, reverse("log_dir_move", kwargs={"name": name, "op_id": posted.result.pk})
        )
    return None


def _post_moves(request, cluster, context, form, moves, throttle):
    """Dry run, or the move (or its hold); the answer when it redirects, else None (page re-rendered)."""
    if request.POST.get("action") in (*RUN_ACTIONS, "break_glass"):
        posted = posting.run_or_hold(
            request,
            cluster,
            context,
            form=form,
            run_actions=RUN_ACTIONS,
            prepare=partial(held.prepare, moves=moves, throttle=throttle),
            run=partial(actions.move_replicas, moves=moves, throttle=throttle),
        )
        answer = _started(request, cluster.name, posted)
        if answer is not None:
            return answer
    try:
        context["plan"] = reads.dry_run(actor=request.user, cluster=cluster, moves=moves)
    except refusals.SHOWN as exc:
        posting.refused(form, exc)
    return None


@login_required
@require_http_methods(["GET", "POST"])
def broker_log_dirs(request, name: str, broker: int):
    """GET: the broker's dirs and replicas (``q``: topics containing it), moves in progress, the move
    form. POST ``dry_run``: each replica's dir now -> target and the bytes; ``apply``: the move."""
    cluster = get_cluster_for_user(request, name)
    search = request.GET.get("q", "")[:249]
    context = {
        "cluster": cluster,
        "broker": broker,
        "view": None,
        "error": None,
        "search": search,
        "plan": None,
    }
    try:
        context["view"] = reads.describe(actor=request.user, cluster=cluster, broker=broker, search=search)
    except KafkaOperationError as exc:
        if exc.name == "BROKER_NOT_AVAILABLE":
            raise Http404(f"Broker {broker} is not live.") from None
        context["error"] = exc
    can_move = access.can(request.user, cluster, access.MANAGE_REASSIGNMENTS)
    context["can_move"] = can_move
    dirs = context["view"].paths if context["view"] else []
    form = MoveForm(request.POST or None, broker=broker, dirs=dirs) if can_move else None
    context["form"] = form
    if can_move:
        context.update(gated_context(request, cluster, held.GATE))
    if request.method == "POST":
        if not can_move:
            get_cluster_for_user(request, name, access.MANAGE_REASSIGNMENTS)  # 403
        if form.is_valid():
            d = form.cleaned_data
            answer = _post_moves(request, cluster, context, form, d["moves"], d["throttle"])
            if answer is not None:
                return answer
    context["moves"] = Operation.objects.filter(cluster=cluster, kind=actions.KIND).order_by("-id")[:10]
    return render(request, "console/log_dirs.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def log_dir_plan(request, name: str):
    """kafka-reassign-partitions' plan file with ``log_dirs``: its dry run, then the move."""
    cluster = get_cluster_for_user(request, name, access.MANAGE_REASSIGNMENTS)
    form = PlanForm(request.POST or None, request.FILES or None)
    context = {"cluster": cluster, "form": form, "plan": None}
    context.update(gated_context(request, cluster, held.GATE))
    if request.method == "POST" and form.is_valid():
        try:
            moves = reads.plan_file_moves(cluster, form.cleaned_data["doc"])
        except refusals.SHOWN as exc:
            posting.refused(form, exc)
        else:
            answer = _post_moves(request, cluster, context, form, moves, form.cleaned_data["throttle"])
            if answer is not None:
                return answer
    return render(request, "console/log_dir_plan.html", context)


def _move_for_user(request, name: str, op_id: int, perm: str = access.VIEW) -> Operation:
    cluster = get_cluster_for_user(request, name, perm)
    try:
        return actions.get_move(actor=request.user, cluster=cluster, op_id=op_id)
    except Operation.DoesNotExist:
        raise Http404("No such move.") from None


def _progress_context(request, op: Operation) -> dict:
    return {
        "cluster": op.cluster,
        "op": op,
        "move": reads.move_json(op),
        "can_cancel": not op.finished and access.can(request.user, op.cluster, access.MANAGE_REASSIGNMENTS),
    }


@login_required
@require_GET
def log_dir_move(request, name: str, op_id: int):
    op = _move_for_user(request, name, op_id)
    return render(request, "console/log_dir_move.html", _progress_context(request, op))


@login_required
@require_GET
def log_dir_move_progress(request, name: str, op_id: int):
    op = _move_for_user(request, name, op_id)
    context = {**_progress_context(request, op), "csrf_token": get_token(request)}
    return htmx.polled_fragment(request, "console/_log_dir_move_progress.html", context, finished=op.finished)


@login_required
@require_POST
def log_dir_move_cancel(request, name: str, op_id: int):
    op = _move_for_user(request, name, op_id, access.MANAGE_REASSIGNMENTS)
    actions.cancel(actor=request.user, op=op, source_ip=client_ip(request))
    return htmx.redirect_to(request, reverse("log_dir_move", kwargs={"name": name, "op_id": op.pk}))
