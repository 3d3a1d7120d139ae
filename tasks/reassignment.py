"""Reassignment beat job: the throttle janitor (the moves themselves run as operations)."""

from __future__ import annotations

from tasks.celery import app


@app.task(name="tasks.reassignment.sweep_throttles")
def sweep_throttles() -> list[int]:
    """Beat: take back throttles still owed by reassignments that ended (errored, or crashed out)."""
    from console.reassignment import janitor

    return janitor.sweep_throttles()
