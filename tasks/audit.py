"""Audit beat jobs: settle outcomes the database could not take when the change ran; anchor the chain."""

from __future__ import annotations

from tasks.celery import app


@app.task(name="tasks.audit.reconcile_outcomes")
def reconcile_outcomes() -> int:
    """Beat: record owed outcomes as "unknown", then with the state re-read from Kafka."""
    from console.audit import outcomes

    return outcomes.reconcile()


@app.task(name="tasks.audit.write_anchor")
def write_anchor() -> str:
    """Beat: append the checked chain's signed head to the anchor file outside the database (when it
    moved); returns "written", "unchanged", "refused" or "unwritable" and never raises for the file."""
    from console.integrity import chain

    return chain.append_anchor().outcome
