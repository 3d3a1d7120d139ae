"""Reassignment and election tasks (thin: ids in, one service call) and their beat jobs."""

from __future__ import annotations

from tasks.celery import app
from tasks.operations import worker_name


@app.task(name="tasks.reassignment.run_reassignment", acks_late=True)
def run_reassignment(op_id: int) -> None:
    from console.reassignment import worker as reassign_run

    reassign_run.run_reassignment(op_id, worker=worker_name())


@app.task(name="tasks.reassignment.poll_reassignment", acks_late=True)
def poll_reassignment(reassignment_id: int) -> None:
    """One poll cycle now (after a cancel, so the operator does not wait for beat)."""
    from console.models.reassignment import Reassignment
    from console.reassignment import poll as reassign_poll

    r = Reassignment.objects.select_related("cluster", "operation").get(pk=reassignment_id)
    reassign_poll.poll_once(r)


@app.task(name="tasks.reassignment.poll_reassignments")
def poll_reassignments() -> list[int]:
    """Beat: one cycle for every moving reassignment (the worker that started it may be gone)."""
    from console.reassignment import poll as reassign_poll

    return reassign_poll.poll_due()


@app.task(name="tasks.reassignment.sweep_throttles")
def sweep_throttles() -> list[int]:
    """Beat: the throttle janitor removes ledger throttles of reassignments no longer running."""
    from console.reassignment import janitor as reassign_janitor

    return reassign_janitor.sweep_throttles()


@app.task(name="tasks.reassignment.run_election", acks_late=True)
def run_election(op_id: int) -> None:
    from console.reassignment import elections

    elections.run_election(op_id, worker=worker_name())
