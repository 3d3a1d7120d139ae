"""API: an action the cluster's change-control policy holds (console/changes) is submitted for review
with its dry run, as the pages do, instead of running; ``break_glass`` runs it at once (admins)."""

from __future__ import annotations

from collections.abc import Callable

from rest_framework.response import Response

from console.changes import actions as changes
from console.changes import approvals, gate
from console.changes.kinds import Prepared
from console.models.requests import RequestState


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
        "request": f"/api/v1/clusters/{req.cluster.name}/requests/{req.pk}",
    }


def hold(view, cluster, kind: str, prepare: Callable[[], Prepared]) -> Response | None:
    """None when ``kind`` is not held for the caller (run the action). Otherwise the action, prepared
    with its dry run, is submitted for approval (202, with ``reason`` from the body), or with
    ``"break_glass": "<justification>"`` an admin runs it now (200; audited and announced)."""
    request = view.request
    if gate.required(request.user, cluster, kind) is None:
        return None
    prepared = prepare()
    justification = request.data.get("break_glass") if hasattr(request.data, "get") else None
    if justification:
        req = changes.break_glass(
            actor=request.user,
            cluster=cluster,
            prepared=prepared,
            justification=str(justification),
            source_ip=view.ip,
        )
        return Response(change_json(req), status=200 if req.state == RequestState.SUCCEEDED else 207)
    reason = request.data.get("reason", "") if hasattr(request.data, "get") else ""
    req = changes.submit_change(
        actor=request.user, cluster=cluster, prepared=prepared, reason=str(reason or ""), source_ip=view.ip
    )
    return Response(change_json(req), status=202)
