"""Audit tasks: the full hash-chain re-verification asked for from the audit page (ids in, one call)."""

from __future__ import annotations

from tasks.celery import app
from tasks.operations import worker_name


@app.task(name="tasks.audit.run_verify", acks_late=True)
def run_verify(op_id: int) -> None:
    from console.audit import review as audit_review

    audit_review.run_verify(op_id, worker=worker_name())
