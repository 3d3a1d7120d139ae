"""Operations: the one runner every long-running kind goes through (see ``runner.py``).

Areas declare a kind in their ``worker.py`` (``register(Kind(name, steps=(Step(...), ...)))``),
start it from an action with ``start(...)``, and never write claim, heartbeat or finish code.
Celery (``tasks/operations.py``) calls ``run`` with an id; beat calls ``run_due`` and
``requeue_pending``.
"""

from __future__ import annotations

from console.operations.actions import get_visible, request_cancel, start
from console.operations.core import Done, Kind, Step, Wait, backoff_s
from console.operations.reads import counts_by_kind_and_state, lost_contact, poll_lag
from console.operations.registry import dispatch, kind_for, register
from console.operations.runner import (
    Context,
    LostClaim,
    claim,
    due_ids,
    error_text,
    heartbeat,
    reopen,
    requeue_pending,
    run,
    run_due,
    set_item,
)

__all__ = [
    "Context",
    "Done",
    "Kind",
    "LostClaim",
    "Step",
    "Wait",
    "backoff_s",
    "claim",
    "counts_by_kind_and_state",
    "dispatch",
    "due_ids",
    "error_text",
    "get_visible",
    "heartbeat",
    "kind_for",
    "lost_contact",
    "poll_lag",
    "register",
    "request_cancel",
    "reopen",
    "requeue_pending",
    "run",
    "run_due",
    "set_item",
    "start",
]
