"""Operation pages: the detail page and the htmx progress fragment it polls."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from console import access, operations
from console.clusters import worker as health
from console.views import htmx
from console.views._helpers import client_ip, get_cluster_for_user, get_operation_for_user


@login_required
@require_POST
def health_check_start(request, name: str):
    cluster = get_cluster_for_user(request, name, access.RUN_OPERATIONS)
    op = health.start_health_check(actor=request.user, cluster=cluster, source_ip=client_ip(request))
    return redirect("operation_detail", op_id=op.pk)


def _context(op) -> dict:
    return {
        "op": op,
        "items": list(op.items.all()),
        "polling": not op.finished,
        "lost": operations.lost_contact(op),  # a step watching Kafka cannot reach it (not a failure)
    }


@login_required
@require_GET
def operation_detail(request, op_id: int):
    op = get_operation_for_user(request, op_id)
    return render(request, "console/operation.html", {**_context(op), "cluster": op.cluster})


@login_required
@require_GET
def operation_progress(request, op_id: int):
    op = get_operation_for_user(request, op_id)
    return htmx.polled_fragment(
        request, "console/_operation_progress.html", _context(op), finished=op.finished
    )
