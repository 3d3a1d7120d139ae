"""The one router that needs more than a task's name: an operation runs on its kind's queue.

``settings.CELERY_TASK_ROUTES`` lists this first, then routes every other task by name. A
pipeline run (Spark, minutes) must not wait behind - or hold up - a reassignment's steps, so
``run_operation`` looks the operation's kind up and picks ``settings.OPERATION_QUEUES[kind]``
(``admin`` for every kind not named there).
"""

from __future__ import annotations


def queue_for_kind(kind: str | None) -> str:
    from django.conf import settings

    return settings.OPERATION_QUEUES.get(kind or "", settings.QUEUE_ADMIN)


def queue_for_operation(op_id: int) -> str:
    from console.models import Operation

    kind = Operation.objects.filter(pk=op_id).values_list("kind", flat=True).first()
    return queue_for_kind(kind)


def route_operation(name, args, kwargs, options, task=None, **kw):
    """Celery router: the queue of the operation's kind for run_operation, None (next route) else."""
    if name != "tasks.operations.run_operation" or not args:
        return None
    return {"queue": queue_for_operation(int(args[0]))}
