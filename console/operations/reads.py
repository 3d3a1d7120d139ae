"""Reads over operations: for monitoring (/metrics, console/health) counts and how late due work is;
for the doors (page, API, CLI) an operation's lost contact with Kafka."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, Min
from django.utils import timezone

from console.models import Operation, OperationState
from console.operations.core import LOST_CONTACT, lost_contact_text


def since_text(iso: str | None) -> str:
    """HH:MM (the console's time zone) of a stored ISO timestamp."""
    return timezone.localtime(datetime.fromisoformat(iso)).strftime("%H:%M") if iso else "?"


def lost_contact(op: Operation) -> dict[str, Any] | None:
    """The operation's lost contact for display: since (ISO), attempts, retry every (s), error,
    and the text the page, the API and the CLI show; None while Kafka answers (or it has ended)."""
    lost = (
        (op.data or {}).get(LOST_CONTACT)
        if op.state in (OperationState.PENDING, OperationState.RUNNING)
        else None
    )
    if not lost:
        return None
    attempts, every, error = (
        int(lost.get("attempts") or 0),
        float(lost.get("retry_every_s") or 0),
        lost.get("error", ""),
    )
    return {
        "since": lost.get("since"),
        "attempts": attempts,
        "retry_every_s": every,
        "error": error,
        "text": lost_contact_text(since_text(lost.get("since")), attempts, every, error),
    }


def counts_by_kind_and_state() -> dict[tuple[str, str], int]:
    """How many operations there are of each kind in each state."""
    rows = Operation.objects.order_by().values_list("kind", "state").annotate(n=Count("pk"))
    return {(kind, state): n for kind, state, n in rows}


def poll_lag() -> tuple[int, float]:
    """Waiting operations whose next step is due and nobody has taken yet, and how late the oldest is
    (seconds past its ``next_run_at``): the tick runs them every second, so a growing lag means the poll
    worker or beat is behind or gone."""
    now = timezone.now()
    due = Operation.objects.filter(state=OperationState.RUNNING, claimed_by="", next_run_at__lte=now)
    found = due.aggregate(n=Count("pk"), oldest=Min("next_run_at"))
    oldest = found["oldest"]
    return found["n"], (now - oldest).total_seconds() if oldest is not None else 0.0
