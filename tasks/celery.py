"""The Celery app: Redis broker from settings, Django-aware tasks, the beat schedule."""

from __future__ import annotations

import logging
import os

from celery import Celery
from celery.signals import task_postrun, worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = (
    "tasks.alerts",
    "tasks.audit",
    "tasks.notify",
    "tasks.operations",
    "tasks.reassignment",
    "tasks.telemetry",
    "tasks.windows",
)


def _beat_schedule() -> dict:
    from django.conf import settings

    from pipeline.config import load

    telemetry = load()
    return {
        "operation tick": {"task": "tasks.operations.tick", "schedule": 1.0},
        "pending-operation recovery": {
            "task": "tasks.operations.requeue_pending",
            "schedule": float(settings.OPERATION_RECOVERY_INTERVAL_S),
        },
        "telemetry collector": {
            "task": "tasks.telemetry.collect_snapshots",
            "schedule": float(telemetry.snapshot_interval_s),
        },
        "telemetry pipeline": {
            "task": "tasks.telemetry.schedule_pipeline_runs",
            "schedule": float(telemetry.pipeline_interval_s),
        },
        "throttle janitor": {"task": "tasks.reassignment.sweep_throttles", "schedule": 10.0},
        "audit outcome reconciler": {"task": "tasks.audit.reconcile_outcomes", "schedule": 30.0},
        "audit anchor": {
            "task": "tasks.audit.write_anchor",
            "schedule": float(settings.CONSOLE_AUDIT_ANCHOR_EVERY_S),
        },
        "notify tick": {"task": "tasks.notify.tick", "schedule": 5.0},  # retries and lost dispatches
        "scheduled changes": {"task": "tasks.windows.tick", "schedule": float(settings.WINDOWS_TICK_S)},
        "alert evaluation": {
            "task": "tasks.alerts.evaluate",
            "schedule": float(settings.ALERTS_EVAL_INTERVAL_S),
        },
    }


app.conf.beat_schedule = _beat_schedule()


@worker_init.connect
def _import_before_the_pool_forks(**_kwargs) -> None:
    """In a worker's main process, before its prefork pool forks the children that run the tasks:
    import Django and every task module (which the main process imports anyway, later) and freeze
    them out of the cyclic collector, so the children share those pages with the main process
    instead of each importing its own copy. Idempotent: Celery's own import later finds them."""
    import gc

    app.loader.import_default_modules()
    gc.freeze()


@task_postrun.connect
def _give_back_a_grown_heap(**_kwargs) -> None:
    """After each task, in the process that ran it: the C heap's free pages back to the OS once it
    grew more than 64 MB since it last gave back (``heap.trim_when_grown``: a progress poll or a
    step at 1M partitions does not leave its peak resident in a worker that then idles)."""
    from console.kafka import heap

    heap.trim_when_grown()


# The beat schedule is housekeeping: an idle console logs nothing for it. Celery logs each task's
# "received" (celery.worker.strategy) and "succeeded" (celery.app.trace) at INFO with the task's name
# in the record's `data` (passed "for custom handlers"); those two INFO lines are dropped for the
# scheduled tasks only. Their warnings and failures still show, and so does every other task.
# Beat sends nothing but this schedule, so its INFO lines ("Sending due task") are all housekeeping.
QUIET_TASKS = frozenset(entry["task"] for entry in app.conf.beat_schedule.values())


class QuietHousekeeping(logging.Filter):
    """Drops Celery's INFO lines about the tasks in QUIET_TASKS."""

    def filter(self, record: logging.LogRecord) -> bool:
        data = getattr(record, "data", None)
        name = data.get("name") if isinstance(data, dict) else None
        return record.levelno > logging.INFO or name not in QUIET_TASKS


for _logger in ("celery.worker.strategy", "celery.app.trace"):
    logging.getLogger(_logger).addFilter(QuietHousekeeping())
logging.getLogger("celery.beat").setLevel(logging.WARNING)
