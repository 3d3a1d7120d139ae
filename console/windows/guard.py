"""A cluster's windows as the logic reads them, and the one refusal they give.

``refusal(cluster, at)`` says why no change may run on the cluster at a moment (a freeze, or the
cluster's "maintenance windows only" rule outside one); ``check_frozen`` raises
``ChangeWindowClosed`` while a freeze is in force: change control's gate calls it for every
governed mutation on every path (page, API, CLI), break glass and approved runs excepted.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import PermissionDenied
from django.utils import timezone

from console.models import Cluster
from console.models.windows import ChangeWindow, WindowSettings
from console.windows import core


class ChangeWindowClosed(PermissionDenied):
    """No change may run on the cluster now (or at the time asked for): a freeze window is in
    force, or the cluster allows changes only inside maintenance windows. The text names the
    window and its end."""

    def __init__(self, text: str, *, window_id: int | None = None, until: datetime | None = None):
        super().__init__(text)
        self.window_id = window_id
        self.until = until


def spec(row: ChangeWindow) -> core.Spec:
    """A window row as ``core`` reads it."""
    ends = [t for t in (row.ends_at, row.ended_at) if t is not None]
    return core.Spec(
        id=row.pk,
        kind=row.kind,
        reason=row.reason,
        start=row.starts_at,
        until=min(ends) if ends else None,
        weekday=row.weekday,
        start_time=row.start_time,
        duration=None if row.duration_min is None else timezone.timedelta(minutes=row.duration_min),
        time_zone=row.time_zone,
    )


def specs(cluster: Cluster) -> list[core.Spec]:
    return [spec(w) for w in ChangeWindow.objects.filter(cluster=cluster)]


def maintenance_only(cluster: Cluster) -> bool:
    return WindowSettings.objects.filter(cluster=cluster, maintenance_only=True).exists()


def refusal(cluster: Cluster, at: datetime | None = None, *, rule: bool = True) -> ChangeWindowClosed | None:
    """Why no change may run on ``cluster`` at ``at`` (default now), as the refusal to raise; None
    when it may. ``rule=False``: only a freeze counts (a direct change is refused only by a freeze;
    the "maintenance windows only" rule is for scheduled and approved runs)."""
    at = at or timezone.now()
    why = core.refusal(specs(cluster), at, maintenance_only=rule and maintenance_only(cluster))
    if why is None:
        return None
    text = core.refusal_text(cluster.name, why)
    if isinstance(why, str):
        return ChangeWindowClosed(text)
    return ChangeWindowClosed(text, window_id=why.window.id, until=why.end)


def check_frozen(cluster: Cluster) -> None:
    """Raise ChangeWindowClosed while a freeze is in force on the cluster."""
    closed = refusal(cluster, rule=False)
    if closed is not None:
        raise closed


def next_allowed(cluster: Cluster, at: datetime, horizon_days: float) -> datetime | None:
    """The first moment from ``at`` when a change may run on the cluster (None within the horizon)."""
    return core.next_allowed(
        specs(cluster),
        at,
        maintenance_only=maintenance_only(cluster),
        horizon=timezone.timedelta(days=horizon_days),
    )
