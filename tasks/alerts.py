"""Health alerts' beat job: one evaluation round every ALERTS_EVAL_INTERVAL_S, on the poll queue.

The task only hands each cluster to this worker process's evaluation threads and returns at once
(``console.alerts.evaluate.start_round``), so the poll worker's one slot is free for the 1 s
operation tick; a slow or unreachable cluster is bounded there and never delays the others.
"""

from __future__ import annotations

from tasks.celery import app


@app.task(name="tasks.alerts.evaluate")
def evaluate() -> list[int]:
    """Beat: start an evaluation round; returns the ids of the clusters handed to the evaluator."""
    from console.alerts import evaluate as evaluation

    return evaluation.start_round()
