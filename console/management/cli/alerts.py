"""``manage.py kafka alerts list|ack|silence|silences|unsilence|rules|set-rule``: a cluster's alerts
through the alerts area's actions (same permission checks, refusals and audit as the page and the
API). Exit codes are the CLI's (console/management/cli/base.py): 3 not allowed, 4 refused (a note
missing, an alert already resolved, a silence too long, a threshold of the wrong sign), 6 no such
alert, silence or rule."""

from __future__ import annotations

from datetime import datetime

from django.core.management.base import CommandError

from console import access
from console.alerts import actions
from console.alerts import reads as alert_reads
from console.management.cli.base import OK, USAGE, common

STATES = ("open", "firing", "acknowledged", "resolved", "all")
ALERT_COLUMNS = [
    "id",
    "severity",
    "state",
    "rule",
    "subject",
    "summary",
    "fired_at",
    "acknowledged_by",
    "note",
]
SILENCE_COLUMNS = ["id", "rule", "subject", "expires_at", "created_by", "reason", "ended_at"]
RULE_COLUMNS = ["name", "enabled", "threshold", "unit", "severity", "escalate_after_min", "customised"]


def add_parsers(area) -> None:
    g = area.add_parser("alerts", help="a cluster's alerts, silences and rule settings")
    sub = g.add_subparsers(dest="action", required=True)
    p = sub.add_parser("list", help="alerts in a state (open: firing or acknowledged)")
    common(p)
    p.add_argument("--state", default="open", choices=STATES)
    p = sub.add_parser("ack", help="acknowledge an open alert with a note")
    common(p)
    p.add_argument("alert_id", type=int, metavar="ID")
    p.add_argument("--note", required=True, help="what is being done about it")
    p = sub.add_parser("silence", help="silence a rule and/or subject (default: all) for a while")
    common(p)
    p.add_argument("--rule", default="", help="a rule's name (see 'alerts rules'); default: every rule")
    p.add_argument("--subject", default="", help='e.g. "broker 2", "group billing"; default: every subject')
    until = p.add_mutually_exclusive_group(required=True)
    until.add_argument("--for", dest="duration", help="30m, 2h, 1d12h, 1w (at most 30 days)")
    until.add_argument("--until", help="an ISO time, e.g. 2026-12-01T06:00 (UTC unless a zone is given)")
    p.add_argument("--reason", required=True)
    p = sub.add_parser("silences", help="the active silences")
    common(p)
    p = sub.add_parser("unsilence", help="end a silence now")
    common(p)
    p.add_argument("silence_id", type=int, metavar="ID")
    p = sub.add_parser("rules", help="every rule with the cluster's setting")
    common(p)
    p = sub.add_parser("set-rule", help="change the cluster's setting of a rule (admins); other fields kept")
    common(p)
    p.add_argument("rule", metavar="RULE")
    on = p.add_mutually_exclusive_group()
    on.add_argument("--enable", dest="enabled", action="store_const", const=True, default=None)
    on.add_argument("--disable", dest="enabled", action="store_const", const=False)
    p.add_argument("--threshold", help="a number in the rule's unit, or 'default'")
    p.add_argument("--severity", choices=["warning", "critical", "default"])
    p.add_argument("--escalate-after", dest="escalate", help="minutes unacknowledged, or 'never'")


def _plain(row: dict) -> dict:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _number(text: str, what: str, kind=float):
    try:
        return kind(text)
    except ValueError:
        raise CommandError(f"{what} is a number: '{text[:20]}'", returncode=USAGE) from None


class Commands:
    """The ``alerts`` handlers of ``manage.py kafka`` (``self`` is that BaseCommand)."""

    def _alerts_list(self, cluster, actor) -> int:
        access.require(actor, cluster, access.VIEW)
        state = self.opts["state"]
        rows = alert_reads.alerts(cluster, state="" if state == "all" else state)
        self._emit([_plain(actions.describe_alert(a)) for a in rows], ALERT_COLUMNS)
        return OK

    def _alerts_ack(self, cluster, actor) -> int:
        o = self.opts
        alert = actions.acknowledge_alert(
            actor=actor, cluster=cluster, alert_id=o["alert_id"], note=o["note"]
        )
        self._emit([_plain(actions.describe_alert(alert))], ALERT_COLUMNS)
        return OK

    def _alerts_silence(self, cluster, actor) -> int:
        o = self.opts
        until = None
        if o["until"]:
            try:
                until = datetime.fromisoformat(o["until"])
            except ValueError:
                raise CommandError(f"--until is an ISO time: '{o['until'][:40]}'", returncode=USAGE) from None
        silence = actions.create_silence(
            actor=actor, cluster=cluster, rule=o["rule"], subject=o["subject"], duration=o["duration"],
            until=until, reason=o["reason"],
        )  # fmt: skip
        self._emit([_plain(actions.describe_silence(silence))], SILENCE_COLUMNS)
        return OK

    def _alerts_silences(self, cluster, actor) -> int:
        access.require(actor, cluster, access.VIEW)
        rows = [_plain(actions.describe_silence(s)) for s in alert_reads.active_silences(cluster)]
        self._emit(rows, SILENCE_COLUMNS)
        return OK

    def _alerts_unsilence(self, cluster, actor) -> int:
        silence = actions.end_silence(actor=actor, cluster=cluster, silence_id=self.opts["silence_id"])
        self._emit([_plain(actions.describe_silence(silence))], SILENCE_COLUMNS)
        return OK

    def _alerts_rules(self, cluster, actor) -> int:
        access.require(actor, cluster, access.VIEW)
        rows = [_plain(vars(r)) for r in alert_reads.rule_rows(cluster)]
        self._emit(rows, RULE_COLUMNS)
        return OK

    def _alerts_set_rule(self, cluster, actor) -> int:
        o = self.opts
        setting = alert_reads.stored_setting(cluster, o["rule"])
        if o["enabled"] is not None:
            setting["enabled"] = o["enabled"]
        if o["threshold"] is not None:
            t = o["threshold"]
            setting["threshold"] = None if t == "default" else _number(t, "--threshold")
        if o["severity"] is not None:
            setting["severity"] = "" if o["severity"] == "default" else o["severity"]
        if o["escalate"] is not None:
            e = o["escalate"]
            setting["escalate_after_min"] = None if e == "never" else _number(e, "--escalate-after", int)
        actions.set_rule(actor=actor, cluster=cluster, rule=o["rule"], **setting)
        row = alert_reads.rule_row(cluster, o["rule"])
        self._emit([_plain(vars(row))], RULE_COLUMNS)
        return OK
