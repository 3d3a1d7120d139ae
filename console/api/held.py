"""API: an action the cluster's change-control policy holds (console/changes) is submitted for review
with its dry run, as the pages do, instead of running; ``break_glass`` runs it at once (admins)."""

from __future__ import annotations

from collections.abc import Callable

from rest_framework.response import Response

from console.api.base import plain
from console.changes import approvals, door, schedule
from console.changes.kinds import Prepared
from console.models.requests import RequestState
from console.models.windows import ScheduleState


def schedule_json(req) -> dict:
    """When a request or held change runs: ``run_at`` (null when it is not scheduled, or its schedule
    was cancelled) and ``schedule_state`` (waiting, queued, refused, cancelled; null: never scheduled)."""
    row = schedule.of(req)
    return {
        "run_at": plain(row.run_at) if row is not None and row.state != ScheduleState.CANCELLED else None,
        "schedule_state": row.state if row is not None else None,
    }


def change_json(req) -> dict:
    """A held change as the API answers it: the review the approvers see, its digest and approvals."""
    return {
        "held": True,
        "id": req.pk,
        "kind": req.kind,
        "resource": req.resource,
        "state": req.state,
        "payload_sha256": req.payload_sha256,
        "approvals_required": req.approvals_required,
        "approvals": [a.user_name for a in approvals.fresh_approvals(req)],
        "review": req.review,
        "result": req.result or None,
        **schedule_json(req),
        "request": f"/api/v1/clusters/{req.cluster.name}/requests/{req.pk}",
    }


def hold(view, cluster, kind: str, prepare: Callable[[], Prepared]) -> Response | None:
    """None when ``kind`` is not held for the caller (run the action). Otherwise the action, prepared
    with its dry run, goes through the change-control door (``changes.door``): submitted for approval
    (202, with ``reason`` from the body), or with ``"break_glass": "<justification>"`` an admin runs it
    now (200; 207 when it failed; audited and announced)."""
    request = view.request
    if not door.is_held(request.user, cluster, kind):
        return None
    body = request.data if hasattr(request.data, "get") else {}
    justification = body.get("break_glass")
    req = door.hold(
        actor=request.user,
        cluster=cluster,
        prepared=prepare(),
        mode=door.BREAK_GLASS if justification else door.HOLD,
        text=str(justification or body.get("reason", "") or ""),
        source_ip=view.ip,
    )
    if not justification:
        return Response(change_json(req), status=202)
    return Response(change_json(req), status=200 if req.state == RequestState.SUCCEEDED else 207)
