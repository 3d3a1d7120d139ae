"""Reassignment beat job: the reconciler of errored moves and the throttle janitor, also for the
intra-broker throttle of moves between log dirs (the moves themselves run as operations)."""

from __future__ import annotations

from tasks.celery import app


@app.task(name="tasks.reassignment.sweep_throttles")
def sweep_throttles() -> list[int]:
    """Beat: take up again moves that ended errored while Kafka went on (they finish from what
    Kafka has), then take back throttles still owed by reassignments that ended."""
    from console.logdirs import worker as logdir_moves
    from console.reassignment import janitor

    janitor.reconcile_errored()
    logdir_moves.sweep_owed_throttles()  # moves between log dirs that ended errored owing their throttle
    return janitor.sweep_throttles()
