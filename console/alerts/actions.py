"""What people do with alerts: acknowledge an open alert with a note, silence a rule or a subject
for a while (with a reason), end a silence early, and set a cluster's own setting of a rule.

These change only the console's own rows, so each change is its row saved together with one
"success" audit event with before and after (``console.audit.recorded``), in one transaction;
refusals (permission, bad input, an alert already resolved) are audited by ``@refused_as`` and
raised as ``AlertInvalid`` (a ValidationError: 400 / exit 4 / the form's error) or
``AlertNotFound`` (an Http404: 404 / exit 6). Acknowledging and silences need ``alert.manage``
(operators and admins); a rule's setting needs ``cluster.admin``.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from console import access
from console.alerts import audit_names
from console.alerts.rules import RULES
from console.audit import recorded
from console.audit.refusals import refused_as
from console.models import Cluster
from console.models.alerts import Alert, AlertRuleSetting, AlertSeverity, AlertSilence, AlertState

NOTE_MAX = 2000
REASON_MAX = 1000
SUBJECT_MAX = 300
SILENCE_MIN = timedelta(minutes=1)
SILENCE_MAX = timedelta(days=30)
ESCALATE_MAX_MIN = 7 * 24 * 60
# Largest threshold per unit: beyond these a rule would never fire (a typo, not a choice).
_THRESHOLD_MAX = {"days": 3650.0, "seconds": 30 * 86400.0}
_COUNT_MAX = 1e12
_DURATION = re.compile(r"(\d+)\s*([smhdw])", re.IGNORECASE)
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class AlertInvalid(ValidationError):
    """Input the alerts area refuses (one sentence per problem), or an alert no longer open."""


class AlertNotFound(Http404):
    """No such alert, silence or rule on this cluster."""


def parse_duration(text: str) -> timedelta:
    """ "2h", "90m", "1d12h", "1w" as a duration; anything else is refused."""
    cleaned = (text or "").strip().lower().replace(" ", "")
    parts = _DURATION.findall(cleaned)
    if not cleaned or "".join(n + u for n, u in parts) != cleaned:
        raise AlertInvalid([f"'{cleaned[:40]}' is not a duration: write e.g. 30m, 2h, 1d12h or 1w."])
    return timedelta(seconds=sum(int(n) * _SECONDS[u] for n, u in parts))


def describe_alert(alert: Alert) -> dict[str, Any]:
    """What pages, the API, the command line and the audit show of an alert."""
    rule = RULES.get(alert.rule)
    return {
        "id": alert.pk,
        "rule": alert.rule,
        "title": rule.title if rule else alert.rule,
        "unit": rule.unit if rule else "",
        "subject": alert.subject,
        "severity": alert.severity,
        "state": alert.state,
        "summary": alert.summary,
        "value": alert.value,
        "threshold": alert.threshold,
        "fired_at": alert.fired_at,
        "last_seen_at": alert.last_seen_at,
        "acknowledged_at": alert.acknowledged_at,
        "acknowledged_by": alert.acknowledged_by_name,
        "note": alert.ack_note,
        "escalated_at": alert.escalated_at,
        "resolved_at": alert.resolved_at,
    }


def describe_silence(silence: AlertSilence) -> dict[str, Any]:
    return {
        "id": silence.pk,
        "rule": silence.rule,
        "subject": silence.subject,
        "reason": silence.reason,
        "created_by": silence.created_by_name,
        "created_at": silence.created_at,
        "expires_at": silence.expires_at,
        "ended_at": silence.ended_at,
    }


def _alert_target(kwargs: dict) -> list[str]:
    return [f"alert:{kwargs.get('alert_id')}"]


@refused_as(audit_names.ALERT_ACKNOWLEDGE, AlertInvalid, AlertNotFound, targets=_alert_target)
def acknowledge_alert(
    *, actor, cluster: Cluster, alert_id: int, note: str, source_ip: str | None = None
) -> Alert:
    """Acknowledge an open (firing) alert with a note: it stays open until its condition clears, and
    is no longer escalated. An alert already acknowledged or resolved is refused."""
    access.require(actor, cluster, access.MANAGE_ALERTS)
    note = (note or "").strip()
    if not note or len(note) > NOTE_MAX:
        raise AlertInvalid([f"Write a note of 1 to {NOTE_MAX} characters: what is being done about it."])
    with transaction.atomic():
        alert = Alert.objects.select_for_update().filter(cluster=cluster, pk=alert_id).first()
        if alert is None:
            raise AlertNotFound(f"No alert #{alert_id} on cluster '{cluster.name}'.")
        if alert.state == AlertState.RESOLVED:
            raise AlertInvalid([f"Alert #{alert.pk} was resolved at {alert.resolved_at:%Y-%m-%d %H:%M} UTC."])
        if alert.state == AlertState.ACKNOWLEDGED:
            raise AlertInvalid(
                [f"Alert #{alert.pk} is already acknowledged by {alert.acknowledged_by_name}."]
            )
        before = {"state": alert.state}
        alert.state = AlertState.ACKNOWLEDGED
        alert.acknowledged_at = timezone.now()
        alert.acknowledged_by_name = actor.get_username()
        alert.ack_note = note
        return recorded.save(
            alert,
            actor=actor,
            action=audit_names.ALERT_ACKNOWLEDGE,
            cluster=cluster,
            targets=[f"alert:{alert.pk}"],
            before=before,
            after=lambda a: {"state": a.state, "rule": a.rule, "subject": a.subject, "note": a.ack_note},
            source_ip=source_ip,
        )


def _expiry(duration: timedelta | str | None, until: datetime | None, now: datetime) -> datetime:
    if (duration is None) == (until is None):
        raise AlertInvalid(["Give the silence either a duration (e.g. 2h) or an end time, not both."])
    if duration is not None:
        until = now + (parse_duration(duration) if isinstance(duration, str) else duration)
    assert until is not None
    if timezone.is_naive(until):
        until = until.replace(tzinfo=UTC)
    if until < now + SILENCE_MIN:
        raise AlertInvalid(["A silence ends in the future: at least a minute from now."])
    if until > now + SILENCE_MAX:
        raise AlertInvalid([f"A silence lasts at most {SILENCE_MAX.days} days."])
    return until


def _silence_target(kwargs: dict) -> list[str]:
    if kwargs.get("silence_id"):
        return [f"alert-silence:{kwargs['silence_id']}"]
    return [f"alert-rule:{kwargs.get('rule') or '*'}"]


@refused_as(audit_names.SILENCE_CREATE, AlertInvalid, targets=_silence_target)
def create_silence(
    *,
    actor,
    cluster: Cluster,
    reason: str,
    rule: str = "",
    subject: str = "",
    duration: timedelta | str | None = None,
    until: datetime | None = None,
    source_ip: str | None = None,
) -> AlertSilence:
    """Silence ``rule`` ("" = every rule) on ``subject`` ("" = every subject) until ``until`` or for
    ``duration`` (at most SILENCE_MAX): the alerts are still recorded but notify nobody."""
    access.require(actor, cluster, access.MANAGE_ALERTS)
    rule, subject, reason = (rule or "").strip(), (subject or "").strip(), (reason or "").strip()
    errors = []
    if rule and rule not in RULES:
        errors.append(f"Unknown rule '{rule[:40]}' (one of {', '.join(RULES)}).")
    if len(subject) > SUBJECT_MAX:
        errors.append(f"A subject has at most {SUBJECT_MAX} characters.")
    if not reason or len(reason) > REASON_MAX:
        errors.append(f"Give a reason of 1 to {REASON_MAX} characters.")
    if errors:
        raise AlertInvalid(errors)
    expires_at = _expiry(duration, until, timezone.now())
    silence = AlertSilence(
        cluster=cluster, rule=rule, subject=subject, reason=reason, expires_at=expires_at,
        created_by_name=actor.get_username(),
    )  # fmt: skip
    return recorded.save(
        silence,
        actor=actor,
        action=audit_names.SILENCE_CREATE,
        cluster=cluster,
        targets=lambda s: [f"alert-silence:{s.pk}"],
        after=describe_silence,
        source_ip=source_ip,
    )


@refused_as(audit_names.SILENCE_END, AlertInvalid, AlertNotFound, targets=_silence_target)
def end_silence(*, actor, cluster: Cluster, silence_id: int, source_ip: str | None = None) -> AlertSilence:
    """End an active silence now (one already over is refused)."""
    access.require(actor, cluster, access.MANAGE_ALERTS)
    with transaction.atomic():
        silence = AlertSilence.objects.select_for_update().filter(cluster=cluster, pk=silence_id).first()
        if silence is None:
            raise AlertNotFound(f"No silence #{silence_id} on cluster '{cluster.name}'.")
        now = timezone.now()
        if silence.ended_at is not None or silence.expires_at <= now:
            raise AlertInvalid([f"Silence #{silence.pk} is already over."])
        before = describe_silence(silence)
        silence.ended_at = now
        return recorded.save(
            silence,
            actor=actor,
            action=audit_names.SILENCE_END,
            cluster=cluster,
            targets=[f"alert-silence:{silence.pk}"],
            before=before,
            after=describe_silence,
            source_ip=source_ip,
        )


def _threshold_problem(rule, threshold: float) -> str:
    if not rule.unit:
        return f"'{rule.name}' has no threshold: it fires whenever its condition holds."
    if not math.isfinite(threshold) or threshold < 0:
        return f"The threshold of '{rule.name}' is a number of {rule.unit}, 0 or more."
    if rule.unit in _THRESHOLD_MAX:
        if threshold <= 0 and rule.below:
            return f"The threshold of '{rule.name}' is a number of {rule.unit} above 0."
        if threshold > _THRESHOLD_MAX[rule.unit]:
            return f"The threshold of '{rule.name}' is at most {_THRESHOLD_MAX[rule.unit]:g} {rule.unit}."
    elif threshold != int(threshold) or threshold > _COUNT_MAX:
        return f"The threshold of '{rule.name}' is a whole number of {rule.unit}."
    return ""


def _rule_target(kwargs: dict) -> list[str]:
    return [f"alert-rule:{kwargs.get('rule')}"]


_SETTING_FIELDS = ("enabled", "threshold", "severity", "escalate_after_min")


@refused_as(audit_names.RULE_UPDATE, AlertInvalid, AlertNotFound, targets=_rule_target)
def set_rule(
    *,
    actor,
    cluster: Cluster,
    rule: str,
    enabled: bool = True,
    threshold: float | None = None,
    severity: str = "",
    escalate_after_min: int | None = None,
    source_ip: str | None = None,
) -> AlertRuleSetting:
    """Set the cluster's own setting of a built-in rule (all four fields at once: ``threshold``
    None and ``severity`` "" mean the rule's defaults, ``escalate_after_min`` None never escalates)."""
    access.require(actor, cluster, access.ADMINISTER)
    found = RULES.get(rule)
    if found is None:
        raise AlertNotFound(f"No alert rule '{str(rule)[:40]}' (one of {', '.join(RULES)}).")
    errors = []
    if threshold is not None and (problem := _threshold_problem(found, float(threshold))):
        errors.append(problem)
    if severity and severity not in AlertSeverity.values:
        errors.append(f"Unknown severity '{str(severity)[:20]}' (one of {', '.join(AlertSeverity.values)}).")
    if escalate_after_min is not None and not (1 <= escalate_after_min <= ESCALATE_MAX_MIN):
        errors.append(f"Escalate after 1 to {ESCALATE_MAX_MIN} minutes unacknowledged, or never.")
    if errors:
        raise AlertInvalid(errors)
    with transaction.atomic():
        row = AlertRuleSetting.objects.select_for_update().filter(cluster=cluster, rule=rule).first()
        row = row or AlertRuleSetting(cluster=cluster, rule=rule)
        row.updated_by_name = actor.get_username()
        values = {
            "enabled": bool(enabled),
            "threshold": None if threshold is None else float(threshold),
            "severity": severity or "",
            "escalate_after_min": escalate_after_min,
        }
        return recorded.set_fields(
            row,
            values,
            _SETTING_FIELDS,
            actor=actor,
            action=audit_names.RULE_UPDATE,
            cluster=cluster,
            targets=[f"alert-rule:{rule}"],
            source_ip=source_ip,
        )
