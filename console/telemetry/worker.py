"""The capacity pipeline on a worker: the ``pipeline.run`` kind (roll-up and reports, then publish).

The roll-up runs in pyarrow inside this worker for an hourly run and in Spark (``SPARK_MASTER``) for
a rebuild or a backfill of ``PIPELINE_SPARK_MIN_ROWS`` raw rows or more (``pipeline.jobs``); the
session is built only then. The run's result and its first step's message say which engine ran.
"""

from __future__ import annotations

import time
from datetime import datetime

from django.utils import timezone

from console import operations
from console.models import OperationState
from console.operations import Done, Kind, Step
from console.telemetry.capacity import KIND, STEPS
from pipeline import config as pipeline_config
from pipeline import lake, reports
from pipeline.reference import JobParams


def _run(ctx) -> Done:
    """Run every job over the window, publish the reports, record rows per report.

    Incremental (``pipeline.jobs.roll_up``): only closed hours not rolled up yet are read raw, plus
    the open hour; ``params["rebuild"]`` recomputes every rollup of the window (with Spark).
    Idempotent: a re-run of the same window publishes the same reports again. A failing job
    ends the run "failed" with the reason (the next scheduled run is the retry).
    """
    op = ctx.op
    cfg = pipeline_config.load()
    since, until = datetime.fromisoformat(op.params["since"]), datetime.fromisoformat(op.params["until"])
    name = op.params["cluster"]
    params = JobParams(
        idle_days=cfg.idle_days,
        forecast_window_days=cfg.forecast_window_days,
        capacity_bytes=cfg.broker_capacity_bytes,
        min_history_h=cfg.min_history_h,
    )
    started = time.perf_counter()
    rolled: dict = {}
    try:
        from pipeline.jobs import run_jobs
        from pipeline.spark import build_session

        ctx.set_item(STEPS[0], state=OperationState.RUNNING)
        out = run_jobs(
            lambda: build_session(cfg),
            cfg.lake_dir,
            name,
            since,
            until,
            params,
            progress=lambda f, text: ctx.heartbeat(progress=0.9 * f, text=text),
            rebuild=bool(op.params.get("rebuild")),
            stats=rolled,
        )
        ctx.set_item(
            STEPS[0],
            state=OperationState.SUCCEEDED,
            progress=1.0,
            message=f"{sum(len(v) for v in out.values())} report rows; "
            f"{rolled.get('rolled_hours', 0)} of {rolled.get('closed_hours', 0)} closed hours rolled up "
            f"with {_engine_text(rolled, cfg)}",
        )
        rows = {k: len(v) for k, v in out.items()}
        meta = {
            "cluster": name,
            "since": since.isoformat(),
            "until": until.isoformat(),
            "rows": rows,
            "generated_at": timezone.now().isoformat(),
            "operation": op.pk,
            "schema_version": lake.SCHEMA_VERSION,
            "params": params.__dict__,
            "engine": rolled.get("engine"),  # what rolled up this run's new hours: pyarrow or spark
        }
        run_dir = reports.publish(cfg.lake_dir, name, out, meta)
        ctx.set_item(STEPS[1], state=OperationState.SUCCEEDED, progress=1.0, message=run_dir.name)
    except operations.LostClaim:
        raise
    except Exception as exc:  # Spark and Java raise many types; the operation must record the reason
        return Done(
            OperationState.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            outcomes={"pipeline": {"ok": False, "message": str(exc)[:500]}},
        )
    result = {
        "rows": rows,
        "run": run_dir.name,
        "seconds": round(time.perf_counter() - started, 1),
        "rolled_hours": rolled.get("rolled_hours", 0),
        "engine": rolled.get("engine"),
        "raw_rows": rolled.get("raw_rows", 0),
        **({"spark_master": cfg.spark_master} if rolled.get("engine") == "spark" else {}),
    }
    return Done(
        OperationState.SUCCEEDED,
        result=result,
        outcomes={"pipeline": {"ok": True, "message": f"{run_dir.name} published"}},
    )


def _engine_text(rolled: dict, cfg) -> str:
    """'pyarrow (12,072 raw rows)' or 'Spark on local[*] (8,692,000 raw rows)'."""
    rows = f"{rolled.get('raw_rows', 0):,} raw rows"
    if rolled.get("engine") == "spark":
        return f"Spark on {cfg.spark_master} ({rows})"
    return f"pyarrow ({rows})"


operations.register(Kind(KIND, (Step("run", _run),)))
