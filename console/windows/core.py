"""Change windows as plain data: when a window is in force, which one covers a moment, and the
next moment a change may run. No database, no Django: the callers hand in ``Spec`` rows.

A one-off window is the interval [start, until). A weekly one recurs on ``weekday`` at
``start_time`` for ``duration`` in its named time zone (zoneinfo: 02:00 stays 02:00 local across a
daylight-saving change), its occurrences clipped to [start, until). ``until`` is the earlier of the
window's end and the moment it was ended early; None: for ever.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

FREEZE, MAINTENANCE = "freeze", "maintenance"
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class Spec:
    """One window as the logic reads it."""

    id: int
    kind: str
    reason: str
    start: datetime
    until: datetime | None = None
    weekday: int | None = None
    start_time: time | None = None
    duration: timedelta | None = None
    time_zone: str = "UTC"


@dataclass(frozen=True)
class Occurrence:
    """A window in force from ``start`` to ``end`` (aware datetimes)."""

    window: Spec
    start: datetime
    end: datetime


def zone(name: str) -> ZoneInfo:
    """The named time zone; ValueError naming it when zoneinfo does not know it."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r} (use an IANA name such as Europe/Paris)") from exc


def _clip(spec: Spec, start: datetime, end: datetime) -> Occurrence | None:
    start, end = max(start, spec.start), min(end, spec.until) if spec.until is not None else end
    return Occurrence(spec, start, end) if start < end else None


def occurrences(spec: Spec, since: datetime, before: datetime) -> Iterator[Occurrence]:
    """The window's times in force that overlap [since, before), in order."""
    if spec.weekday is None:
        if spec.until is not None:
            found = _clip(spec, spec.start, spec.until)
            if found is not None and found.start < before and found.end > since:
                yield found
        return
    tz = zone(spec.time_zone)
    length = spec.duration or timedelta(0)
    # start a week (plus the duration) early: an occurrence that began before ``since`` may still run
    day: date = (since - length).astimezone(tz).date() - timedelta(days=7)
    day += timedelta(days=(spec.weekday - day.weekday()) % 7)
    while True:
        local = datetime.combine(day, spec.start_time or time(0), tzinfo=tz)
        begin = local.astimezone(UTC)
        if begin >= before or (spec.until is not None and begin >= spec.until):
            return
        found = _clip(spec, begin, begin + length)
        if found is not None and found.end > since:
            yield found
        day += timedelta(days=7)


def in_force(specs: Iterable[Spec], kind: str, at: datetime) -> Occurrence | None:
    """The window of ``kind`` in force at ``at`` (the one ending last when several overlap)."""
    found = [o for s in specs if s.kind == kind for o in occurrences(s, at, at + timedelta(microseconds=1))]
    return max(found, key=lambda o: o.end) if found else None


def refusal(specs: Iterable[Spec], at: datetime, *, maintenance_only: bool) -> Occurrence | str | None:
    """Why no change may run at ``at``: the freeze in force, or (``maintenance_only``) a sentence
    saying it is outside every maintenance window; None when it may."""
    specs = list(specs)
    frozen = in_force(specs, FREEZE, at)
    if frozen is not None:
        return frozen
    if maintenance_only and in_force(specs, MAINTENANCE, at) is None:
        return "changes on this cluster run only inside a maintenance window, and none is in force then"
    return None


def next_allowed(
    specs: Iterable[Spec], at: datetime, *, maintenance_only: bool, horizon: timedelta
) -> datetime | None:
    """The first moment from ``at`` (within ``horizon``) when a change may run; None: none."""
    specs = list(specs)
    moment, last = at, at + horizon
    while moment <= last:
        why = refusal(specs, moment, maintenance_only=maintenance_only)
        if why is None:
            return moment
        if isinstance(why, Occurrence):
            moment = why.end
            continue
        upcoming = [
            o.start
            for s in specs
            if s.kind == MAINTENANCE
            for o in occurrences(s, moment, last)
            if o.start > moment
        ]
        if not upcoming:
            return None
        moment = min(upcoming)
    return None


def calendar(specs: Iterable[Spec], since: datetime, before: datetime) -> list[Occurrence]:
    """Every occurrence of the windows overlapping [since, before), by start."""
    return sorted(
        (o for s in specs for o in occurrences(s, since, before)), key=lambda o: (o.start, o.window.id)
    )


def describe(spec: Spec) -> str:
    """How pages, the API and the CLI say when a window is in force."""
    if spec.weekday is None:
        end = f"{spec.until:%Y-%m-%d %H:%M} UTC" if spec.until is not None else "open"
        return f"{spec.start:%Y-%m-%d %H:%M} UTC to {end}"
    minutes = int((spec.duration or timedelta(0)).total_seconds() // 60)
    at = (spec.start_time or time(0)).strftime("%H:%M")
    return f"every {WEEKDAYS[spec.weekday]} {at} {spec.time_zone} for {minutes} min"


def refusal_text(cluster: str, why: Occurrence | str) -> str:
    """The refusal every door shows: the window by name and its end."""
    if isinstance(why, str):
        return f"Cluster '{cluster}': {why}."
    return (
        f"Cluster '{cluster}' is frozen by window #{why.window.id} ({why.window.reason}) until "
        f"{why.end:%Y-%m-%d %H:%M} UTC: no changes until then, except break glass by an admin with a "
        "written justification."
    )
