"""Reads over all operations for monitoring (/metrics, console/health): counts and how late due work is."""

from __future__ import annotations

from django.db.models import Count, Min
from django.utils import timezone

from console.models import Operation, OperationState


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
