"""``manage.py kafka windows list|calendar|add|end|settings|schedule|unschedule``: a cluster's change windows and
scheduling a held change, through the same actions as the calendar page and the API.

``add --kind freeze --reason "year end" --start 2026-12-20T00:00 --end 2027-01-04T08:00 --tz Europe/Paris``
(one-off), or ``--weekday 1 --at 02:00 --duration 120 --tz Europe/Paris`` (weekly); times without an
offset are read in ``--tz``. ``schedule ID --at 2026-12-01T02:00 --tz Europe/Paris``: the held change
#ID runs then, never before (refused inside a freeze, exit 4).
"""

from __future__ import annotations

from datetime import datetime, time

from django.core.management.base import CommandError

from console.changes import schedule
from console.management.cli.base import NOT_FOUND, OK, USAGE, common
from console.models.windows import WindowKind
from console.requests import actions as requests
from console.windows import actions as windows
from console.windows import core
from console.windows import reads as window_reads

COLUMNS = ["id", "kind", "when", "reason", "in_force", "created_by"]


def add_parsers(area) -> None:
    w = area.add_parser("windows", help="change windows: freezes, maintenance windows, scheduled changes")
    sub = w.add_subparsers(dest="action", required=True)
    p = sub.add_parser("list", help="the cluster's windows and what is in force now")
    common(p)
    p.add_argument("--all", action="store_true", help="also the windows that are over")
    p = sub.add_parser("calendar", help="the windows and scheduled changes of the next days, by day")
    common(p)
    p.add_argument("--days", type=int, default=window_reads.CALENDAR_DAYS)
    p = sub.add_parser("add", help="admins: a freeze or maintenance window, one-off or weekly")
    common(p)
    p.add_argument("--kind", required=True, choices=WindowKind.values)
    p.add_argument("--reason", required=True)
    p.add_argument("--start", help="one-off start (ISO 8601); weekly: from when (default now)")
    p.add_argument("--end", help="one-off end; weekly: until when (default for ever)")
    p.add_argument("--weekday", type=int, choices=range(7), help="weekly: 0 = Monday ... 6 = Sunday")
    p.add_argument("--at", dest="time_of_day", help="weekly: HH:MM in --tz")
    p.add_argument("--duration", type=int, help="weekly: minutes")
    p.add_argument("--tz", default="UTC", help="the time zone (IANA name) of the times given")
    p = sub.add_parser("end", help="admins: end a window now")
    common(p)
    p.add_argument("id", type=int)
    p = sub.add_parser("settings", help="admins: changes only inside maintenance windows, or not")
    common(p)
    p.add_argument("--maintenance-only", required=True, choices=("on", "off"))
    p = sub.add_parser("schedule", help="the held change ID runs at --at, never before")
    common(p)
    p.add_argument("id", type=int)
    p.add_argument("--at", dest="run_at", required=True, help="ISO 8601; without an offset read in --tz")
    p.add_argument("--tz", default="UTC")
    p = sub.add_parser(
        "unschedule", help="take the held change ID off its schedule (an approved one is cancelled)"
    )
    common(p)
    p.add_argument("id", type=int)


def moment(text: str | None, tz: str, option: str) -> datetime | None:
    """An ISO 8601 option's moment; without an offset it is read in ``tz`` (exit 2 when malformed)."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=core.zone(tz))
    except ValueError as exc:
        raise CommandError(f"{option}: {exc}", returncode=USAGE) from None


def _time_of_day(text: str | None) -> time | None:
    if not text:
        return None
    try:
        return time.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--at: {text!r} is not a time of day (HH:MM)", returncode=USAGE) from None


class Commands:
    """The ``windows`` handlers (``self`` is the kafka BaseCommand)."""

    def _status_line(self, cluster, actor) -> dict:
        now = window_reads.status(actor=actor, cluster=cluster)
        if self.opts["output"] == "table":
            frozen = now["freeze"]
            self._say(
                f"{cluster.name}: "
                + (f"FROZEN by window #{frozen['id']} ({frozen['reason']}) until {frozen['until']:%Y-%m-%d %H:%M} UTC" if frozen else "not frozen")
                + ("; changes only inside maintenance windows" if now["maintenance_only"] else "")
            )  # fmt: skip
        return {
            k: (v if not isinstance(v, dict) else {**v, "until": v["until"].isoformat()})
            for k, v in now.items()
        }

    def _windows_list(self, cluster, actor) -> int:
        rows = window_reads.list_windows(actor=actor, cluster=cluster, include_over=self.opts["all"])
        extra = self._status_line(cluster, actor)
        self._emit([r.as_dict() for r in rows], COLUMNS, extra)
        return OK

    def _windows_calendar(self, cluster, actor) -> int:
        days = window_reads.calendar(actor=actor, cluster=cluster, days=max(1, min(self.opts["days"], 92)))
        rows = [
            {"day": d.day.isoformat(), "what": f"{w['kind']} #{w['id']}", "time": f"{w['start']:%H:%M}-{w['end']:%H:%M} UTC", "detail": w["reason"]}
            for d in days for w in d.windows
        ] + [
            {"day": d.day.isoformat(), "what": f"change #{c['request']}", "time": f"{c['run_at']:%H:%M} UTC", "detail": f"{c['kind']} {c['resource']} ({c['state_label'].lower()})"}
            for d in days for c in d.changes
        ]  # fmt: skip
        rows.sort(key=lambda r: (r["day"], r["time"]))
        self._emit(rows, ["day", "time", "what", "detail"], self._status_line(cluster, actor))
        return OK

    def _windows_add(self, cluster, actor) -> int:
        o = self.opts
        row = windows.add_window(
            actor=actor, cluster=cluster, kind=o["kind"], reason=o["reason"],
            starts_at=moment(o["start"], o["tz"], "--start"), ends_at=moment(o["end"], o["tz"], "--end"),
            weekday=o["weekday"], start_time=_time_of_day(o["time_of_day"]), duration_min=o["duration"],
            time_zone=o["tz"],
        )  # fmt: skip
        listed = window_reads.list_windows(actor=actor, cluster=cluster, include_over=True)
        self._emit([r.as_dict() for r in listed if r.id == row.pk], COLUMNS)
        return OK

    def _windows_end(self, cluster, actor) -> int:
        row = windows.end_window(actor=actor, cluster=cluster, window_id=self.opts["id"])
        self._say(f"Window #{row.pk} ended at {row.ended_at:%Y-%m-%d %H:%M:%S} UTC by {row.ended_by_name}.")
        return OK

    def _windows_settings(self, cluster, actor) -> int:
        on = self.opts["maintenance_only"] == "on"
        windows.set_maintenance_only(actor=actor, cluster=cluster, maintenance_only=on)
        self._status_line(cluster, actor)
        return OK

    def _windows_unschedule(self, cluster, actor) -> int:
        req = requests.get_request(actor=actor, cluster=cluster, request_id=self.opts["id"])
        if req is None:
            raise CommandError(f"No change #{self.opts['id']} that you may see.", returncode=NOT_FOUND)
        req = schedule.cancel_schedule(actor=actor, request=req)
        self._say(f"Change #{req.pk} is off its schedule: {req.get_state_display().lower()}.")
        return OK

    def _windows_schedule(self, cluster, actor) -> int:
        o = self.opts
        req = requests.get_request(actor=actor, cluster=cluster, request_id=o["id"])
        if req is None:
            raise CommandError(f"No change #{o['id']} that you may see.", returncode=NOT_FOUND)
        row = schedule.schedule_change(actor=actor, request=req, run_at=moment(o["run_at"], o["tz"], "--at"))
        self._emit(
            [{"change": req.pk, "run_at": row.run_at.isoformat(), "state": row.state, "scheduled_by": row.scheduled_by_name}],
            ["change", "run_at", "state", "scheduled_by"],
        )  # fmt: skip
        return OK
