"""What the pages, API and CLI show of a cluster's windows: the list, the windows in force, and the
calendar of the next weeks (the windows' occurrences and the changes scheduled to run), by day.
Authorised: anyone who may view the cluster."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from django.utils import timezone

from console import access
from console.models import Cluster
from console.models.requests import FINAL_STATES
from console.models.windows import ChangeWindow, ScheduledChange, ScheduleState
from console.windows import core
from console.windows.guard import maintenance_only, spec

CALENDAR_DAYS = 28


@dataclass(frozen=True)
class WindowRow:
    """A window as every door lists it."""

    id: int
    kind: str
    reason: str
    when: str
    weekly: bool
    starts_at: datetime
    ends_at: datetime | None
    ended_at: datetime | None
    created_by: str
    in_force: bool
    over: bool

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "kind": self.kind,
            "reason": self.reason,
            "when": self.when,
            "weekly": self.weekly,
            "starts_at": self.starts_at.isoformat(),
            "ends_at": self.ends_at.isoformat() if self.ends_at else None,
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "created_by": self.created_by,
            "in_force": self.in_force,
            "over": self.over,
        }


def _row(w: ChangeWindow, now: datetime) -> WindowRow:
    s = spec(w)
    return WindowRow(
        id=w.pk,
        kind=w.kind,
        reason=w.reason,
        when=core.describe(s),
        weekly=w.weekly,
        starts_at=w.starts_at,
        ends_at=w.ends_at,
        ended_at=w.ended_at,
        created_by=w.created_by_name,
        in_force=core.in_force([s], w.kind, now) is not None,
        over=s.until is not None and s.until <= now,
    )


def list_windows(*, actor, cluster: Cluster, include_over: bool = False) -> list[WindowRow]:
    """The cluster's windows (those over only when asked), soonest first."""
    access.require(actor, cluster, access.VIEW)
    now = timezone.now()
    rows = [_row(w, now) for w in ChangeWindow.objects.filter(cluster=cluster)]
    return [r for r in rows if include_over or not r.over]


@dataclass
class Day:
    """One day of the calendar: the windows in force that day and the changes due to run."""

    day: date
    windows: list[dict] = field(default_factory=list)
    changes: list[dict] = field(default_factory=list)


def scheduled(cluster: Cluster, since: datetime | None = None, before: datetime | None = None) -> list[dict]:
    """The cluster's changes waiting to run (or queued, or refused at their time) in [since, before);
    a schedule whose change was rejected before its time is not shown."""
    rows = ScheduledChange.objects.filter(request__cluster=cluster).select_related("request")
    if since is not None:
        rows = rows.filter(run_at__gte=since)
    if before is not None:
        rows = rows.filter(run_at__lt=before)
    return [
        {
            "request": s.request_id,
            "kind": s.request.kind,
            "resource": s.request.resource,
            "run_at": s.run_at,
            "state": s.state,
            "state_label": ScheduleState(s.state).label,
            "request_state": s.request.state,
            "note": s.note,
            "scheduled_by": s.scheduled_by_name,
        }
        for s in rows.exclude(state=ScheduleState.CANCELLED).exclude(
            state=ScheduleState.WAITING, request__state__in=FINAL_STATES
        )
    ]


def calendar(*, actor, cluster: Cluster, days: int = CALENDAR_DAYS, start: date | None = None) -> list[Day]:
    """The next ``days`` days (UTC) from ``start`` (today): each day's windows and scheduled changes."""
    access.require(actor, cluster, access.VIEW)
    first = start or timezone.now().date()
    since = datetime.combine(first, time(0), tzinfo=UTC)
    before = since + timedelta(days=days)
    out = [Day(first + timedelta(days=i)) for i in range(days)]
    specs = [spec(w) for w in ChangeWindow.objects.filter(cluster=cluster)]
    for o in core.calendar(specs, since, before):
        for i in range(days):
            day_start = since + timedelta(days=i)
            if o.start < day_start + timedelta(days=1) and o.end > day_start:
                out[i].windows.append(
                    {"id": o.window.id, "kind": o.window.kind, "reason": o.window.reason,
                     "start": max(o.start, day_start), "end": min(o.end, day_start + timedelta(days=1))}
                )  # fmt: skip
    for s in scheduled(cluster, since, before):
        out[(s["run_at"] - since).days].changes.append(s)
    return out


def status(*, actor, cluster: Cluster) -> dict:
    """What is in force now: the freeze (with its end) and whether changes need a maintenance window."""
    access.require(actor, cluster, access.VIEW)
    now = timezone.now()
    specs = [spec(w) for w in ChangeWindow.objects.filter(cluster=cluster)]
    frozen = core.in_force(specs, core.FREEZE, now)
    open_ = core.in_force(specs, core.MAINTENANCE, now)
    return {
        "frozen": frozen is not None,
        "freeze": _brief(frozen),
        "maintenance": _brief(open_),
        "maintenance_only": maintenance_only(cluster),
    }


def _brief(found: core.Occurrence | None) -> dict | None:
    return (
        None if found is None else {"id": found.window.id, "reason": found.window.reason, "until": found.end}
    )
