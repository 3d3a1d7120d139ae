"""Which task runs which Operation kind (used to enqueue and to re-queue stuck operations)."""

from __future__ import annotations

from tasks import audit, operations, reassignment, requests, telemetry

_TASKS = {
    "health.check": operations.run_health_check,
    "pipeline.run": telemetry.run_pipeline,
    "reassignment.execute": reassignment.run_reassignment,
    "election.run": reassignment.run_election,
    "request.execute": requests.run_request,
    "audit.verify": audit.run_verify,
}


def task_for(kind: str):
    try:
        return _TASKS[kind]
    except KeyError:
        raise LookupError(f"no task runs operations of kind '{kind}'") from None
