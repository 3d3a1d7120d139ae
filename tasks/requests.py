"""Approved self-service requests run here: ids in, one service call."""

from __future__ import annotations

from tasks.celery import app
from tasks.operations import worker_name


@app.task(name="tasks.requests.run_request", acks_late=True)
def run_request(op_id: int) -> None:
    from console.requests import actions as requests

    requests.run_request(op_id, worker=worker_name())
