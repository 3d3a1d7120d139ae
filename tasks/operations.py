"""Operation plumbing tasks: stuck-operation recovery (beat) and the health check."""

from __future__ import annotations

import os
import socket

from tasks.celery import app


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@app.task(name="tasks.operations.requeue_stale_operations")
def requeue_stale_operations() -> list[int]:
    from console.services import operations

    return operations.requeue_stale()


@app.task(name="tasks.operations.run_health_check", acks_late=True)
def run_health_check(op_id: int) -> None:
    from console.clusters import worker as health

    health.run_health_check(op_id, worker=worker_name())
