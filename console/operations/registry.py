"""Which kinds exist (declared by the areas' worker modules) and how an id reaches a worker.

The dispatcher is named in settings (``OPERATION_DISPATCHER``, by default the Celery task in
``tasks/operations.py``), so nothing under ``console/`` imports Celery or ``tasks``. The areas'
worker modules register their kinds when imported; ``console/apps.py`` imports them at start-up.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils.module_loading import import_string

from console.operations.core import Kind

log = logging.getLogger(__name__)

_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Declare a kind (module-level in an area's ``worker.py``); returns it for the module to keep."""
    _KINDS[kind.name] = kind
    return kind


def kind_for(name: str) -> Kind | None:
    return _KINDS.get(name)


def kinds() -> dict[str, Kind]:
    return dict(_KINDS)


def dispatch(op_id: int, *, countdown: float | None = None) -> str:
    """Hand the id to a worker; returns the task id, or "" when the queue is down (beat retries)."""
    try:
        return import_string(settings.OPERATION_DISPATCHER)(op_id, countdown=countdown) or ""
    except Exception as exc:  # the queue being down must not fail the request that created the work
        log.warning("could not enqueue operation %s (%s); beat will retry", op_id, exc)
        return ""
