"""Change windows: beat's tick that starts the scheduled changes whose time has come (poll queue)."""

from __future__ import annotations

from tasks.celery import app
from tasks.operations import worker_name


@app.task(name="tasks.windows.tick")
def tick() -> dict[int, str]:
    """Beat (every WINDOWS_TICK_S): each due scheduled change queued to run, or refused at its time
    when a change window forbids it (console/changes/schedule.py). Ids only; safe on several workers:
    each change is taken with a conditional UPDATE."""
    from console.changes import schedule

    return schedule.run_due(worker=worker_name())
