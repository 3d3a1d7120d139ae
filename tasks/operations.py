"""Every Operation kind runs through one task (ids in, one runner call) plus two beat jobs."""

from __future__ import annotations

import os
import socket

from tasks.celery import app


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@app.task(name="tasks.operations.run_operation", acks_late=True)
def run_operation(op_id: int) -> None:
    from console import operations

    operations.run(op_id, worker=worker_name())


def enqueue(op_id: int, countdown: float | None = None) -> str:
    """The runner's dispatcher (settings.OPERATION_DISPATCHER): queue one run of the operation."""
    return run_operation.apply_async((op_id,), countdown=countdown).id or ""


@app.task(name="tasks.operations.tick")
def tick() -> list[int]:
    """Beat, every second: run due operations (reassignment polls, retries after backoff, recovery)."""
    from console import operations

    return operations.run_due(worker=worker_name())


@app.task(name="tasks.operations.requeue_pending")
def requeue_pending() -> list[int]:
    """Beat: queue again the pending operations nobody picked up (the queue was down at the time)."""
    from console import operations

    return operations.requeue_pending()
