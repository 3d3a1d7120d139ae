"""Every Operation kind runs through one task (ids in, one runner call) plus two beat jobs."""

from __future__ import annotations

import os
import socket

from django.conf import settings

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


# A due batch operation handed to the batch queue by the tick is dropped unclaimed after this
# long (the next tick hands it again), so a busy batch worker does not pile up copies.
BATCH_HANDOFF_EXPIRES_S = 30.0


@app.task(name="tasks.operations.tick")
def tick() -> list[int]:
    """Beat, every second, on the poll queue: hand the due operations (reassignment polls, retries
    after backoff, recovery) to this worker's pool (``tasks/poller.py``: POLL_THREADS threads, an
    operation's next poll run when due) and return at once. A due operation of a batch kind (a
    pipeline run whose worker died) is handed to its queue instead, so a Spark run never runs on -
    and stalls - the poller. Returns the ids the pool took (not those it holds already)."""
    from console import health, operations
    from console.models import Operation
    from tasks.poller import poller
    from tasks.routing import queue_for_kind

    health.record_tick()  # /readyz: beat is ticking (a key in Redis, never raises)
    ids = operations.due_ids()
    kinds = dict(Operation.objects.filter(pk__in=ids).values_list("pk", "kind"))
    here = []
    for op_id in ids:
        queue = queue_for_kind(kinds.get(op_id))
        if queue == settings.QUEUE_BATCH:
            run_operation.apply_async((op_id,), queue=queue, expires=BATCH_HANDOFF_EXPIRES_S)
        else:
            here.append(op_id)
    if not here:  # an idle console starts no threads
        return []
    pool = poller(settings.POLL_THREADS, worker_name())
    return [op_id for op_id in here if pool.submit(op_id)]


@app.task(name="tasks.operations.requeue_pending")
def requeue_pending() -> list[int]:
    """Beat: queue again the pending operations nobody picked up (the queue was down at the time)."""
    from console import operations

    return operations.requeue_pending()
