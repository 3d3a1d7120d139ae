"""Notification deliveries: one task per delivery (an id in, one worker call) and beat's notify tick."""

from __future__ import annotations

from tasks.celery import app
from tasks.operations import worker_name


@app.task(name="tasks.notify.deliver", acks_late=True)
def deliver(delivery_id: int) -> None:
    from console.notify import worker

    worker.deliver(delivery_id, worker=worker_name())


def enqueue(delivery_id: int, countdown: float | None = None) -> str:
    """The notify dispatcher (settings.NOTIFY_DISPATCHER): queue one attempt at the delivery."""
    return deliver.apply_async((delivery_id,), countdown=countdown).id or ""


@app.task(name="tasks.notify.tick")
def tick() -> list[int]:
    """Beat: send due deliveries (retries after their backoff, ones whose task never arrived)."""
    from console.notify import worker

    return worker.deliver_due(worker=worker_name())
