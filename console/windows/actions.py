"""Managing a cluster's change windows: add one, end one early, set the cluster's
"changes only in maintenance windows" rule. Cluster admins only (``access.ADMINISTER``); each change
is one audit event in the transaction that makes it; refusals are audited as refused."""

from __future__ import annotations

from datetime import datetime, time

from django.db import transaction
from django.utils import timezone

from console import access
from console.audit import recorded
from console.audit.refusals import refused_as
from console.models import Cluster
from console.models.windows import ChangeWindow, WindowKind, WindowSettings
from console.windows import audit_names as names
from console.windows import core
from console.windows.guard import spec

REASON_MAX = 500
MAX_DURATION_MIN = 7 * 24 * 60  # a weekly window lasts a week at most


class WindowInvalid(ValueError):
    """The window cannot be saved as it is; ``errors`` name every problem."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def _after(row: ChangeWindow) -> dict:
    return {
        "id": row.pk,
        "kind": row.kind,
        "reason": row.reason,
        "when": core.describe(spec(row)),
        "ended_at": row.ended_at.isoformat() if row.ended_at else None,
    }


def _problems(
    kind: str,
    reason: str,
    starts_at: datetime | None,
    ends_at: datetime | None,
    weekday: int | None,
    start_time: time | None,
    duration_min: int | None,
    time_zone: str,
) -> list[str]:
    errors = []
    if kind not in WindowKind.values:
        errors.append(f"kind must be one of {', '.join(WindowKind.values)}")
    if not reason.strip():
        errors.append("a window needs a reason")
    elif len(reason) > REASON_MAX:
        errors.append(f"the reason is longer than {REASON_MAX} characters")
    try:
        core.zone(time_zone)
    except ValueError as exc:
        errors.append(str(exc))
    if weekday is None:
        if starts_at is None or ends_at is None:
            errors.append("a one-off window needs a start and an end")
        elif ends_at <= starts_at:
            errors.append("the end must be after the start")
        if start_time is not None or duration_min is not None:
            errors.append("a time of day and a duration are for a weekly window (give a weekday)")
    else:
        if weekday not in range(7):
            errors.append("weekday must be 0 (Monday) to 6 (Sunday)")
        if start_time is None:
            errors.append("a weekly window needs a time of day")
        if not duration_min or not 0 < duration_min <= MAX_DURATION_MIN:
            errors.append("a weekly window needs a duration of 1 minute to 7 days")
        if starts_at is not None and ends_at is not None and ends_at <= starts_at:
            errors.append("the end must be after the start")
    for label, moment in (("start", starts_at), ("end", ends_at)):
        if moment is not None and timezone.is_naive(moment):
            errors.append(f"the {label} must carry its time zone")
    return errors


@refused_as(names.WINDOW_CREATE, WindowInvalid)
def add_window(
    *,
    actor,
    cluster: Cluster,
    kind: str,
    reason: str,
    starts_at: datetime | None = None,
    ends_at: datetime | None = None,
    weekday: int | None = None,
    start_time: time | None = None,
    duration_min: int | None = None,
    time_zone: str = "UTC",
    source_ip: str | None = None,
) -> ChangeWindow:
    """A freeze or maintenance window on the cluster: one-off (``starts_at``..``ends_at``) or weekly
    (``weekday``, ``start_time``, ``duration_min`` in ``time_zone``; from ``starts_at``, default now,
    until ``ends_at`` if given)."""
    access.require(actor, cluster, access.ADMINISTER)
    reason = (reason or "").strip()
    errors = _problems(kind, reason, starts_at, ends_at, weekday, start_time, duration_min, time_zone)
    if errors:
        raise WindowInvalid(errors)
    row = ChangeWindow(
        cluster=cluster,
        kind=kind,
        reason=reason,
        starts_at=starts_at or timezone.now(),
        ends_at=ends_at,
        weekday=weekday,
        start_time=start_time,
        duration_min=duration_min if weekday is not None else None,
        time_zone=time_zone,
        created_by=actor,
        created_by_name=actor.get_username(),
    )
    return recorded.save(
        row,
        actor=actor,
        action=names.WINDOW_CREATE,
        after=_after,
        targets=lambda r: [f"window:{r.pk}", f"cluster:{cluster.name}"],
        cluster=cluster,
        source_ip=source_ip,
    )


@refused_as(names.WINDOW_END, WindowInvalid, targets=lambda k: [f"window:{k.get('window_id')}"])
def end_window(*, actor, cluster: Cluster, window_id: int, source_ip: str | None = None) -> ChangeWindow:
    """End a window now: a freeze lifts, a maintenance window closes, a weekly one recurs no more."""
    access.require(actor, cluster, access.ADMINISTER)
    with transaction.atomic():
        row = ChangeWindow.objects.select_for_update().filter(cluster=cluster, pk=window_id).first()
        if row is None:
            raise WindowInvalid([f"no window #{window_id} on {cluster.name}"])
        if row.ended_at is not None:
            raise WindowInvalid([f"window #{window_id} was already ended by {row.ended_by_name}"])
        before = _after(row)
        row.ended_at, row.ended_by_name = timezone.now(), actor.get_username()
        return recorded.save(
            row,
            actor=actor,
            action=names.WINDOW_END,
            before=before,
            after=_after,
            targets=[f"window:{row.pk}", f"cluster:{cluster.name}"],
            cluster=cluster,
            source_ip=source_ip,
        )


@refused_as(names.WINDOW_SETTINGS)
def set_maintenance_only(
    *, actor, cluster: Cluster, maintenance_only: bool, source_ip: str | None = None
) -> WindowSettings:
    """Whether changes on the cluster may be scheduled (or run from an approval) only inside a
    maintenance window."""
    access.require(actor, cluster, access.ADMINISTER)
    with transaction.atomic():
        row, _ = WindowSettings.objects.select_for_update().get_or_create(cluster=cluster)
        return recorded.set_fields(
            row,
            {"maintenance_only": maintenance_only, "updated_by_name": actor.get_username()},
            ("maintenance_only",),
            actor=actor,
            action=names.WINDOW_SETTINGS,
            targets=[f"cluster:{cluster.name}"],
            cluster=cluster,
            source_ip=source_ip,
        )
