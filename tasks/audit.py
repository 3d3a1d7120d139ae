"""Audit beat job: settle outcomes the database could not take when the change ran."""

from __future__ import annotations

from tasks.celery import app


@app.task(name="tasks.audit.reconcile_outcomes")
def reconcile_outcomes() -> int:
    """Beat: record owed outcomes as "unknown", then with the state re-read from Kafka."""
    from console.audit import outcomes

    return outcomes.reconcile()
