"""Telemetry tasks: the snapshot collector and the Spark pipeline (beat and the pipeline Operation)."""

from __future__ import annotations

from tasks.celery import app


@app.task(name="tasks.telemetry.collect_snapshots")
def collect_snapshots() -> dict[str, str]:
    """Beat: one snapshot per cluster per interval (a repeated run in the same interval is a no-op)."""
    from console.telemetry import snapshots as telemetry

    results = telemetry.collect_all_snapshots()
    return {
        name: r if isinstance(r, str) else ("skipped" if r.skipped else "ok") for name, r in results.items()
    }


@app.task(name="tasks.telemetry.schedule_pipeline_runs")
def schedule_pipeline_runs() -> list[int]:
    """Beat: start a pipeline run for every cluster with snapshots (not while one is in flight)."""
    from console.telemetry import capacity

    return capacity.start_scheduled_runs()
