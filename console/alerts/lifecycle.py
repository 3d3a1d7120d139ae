"""An alert's life, driven by what each evaluation round finds (``apply``).

- A condition found with no open alert of its cluster, rule and subject **fires**: a new alert,
  state firing, audited (``alert.fire``) and announced (``alert.firing``).
- Found again, the open alert (firing or acknowledged: an acknowledged one stays so until it
  resolves) is **updated**: last seen, value, threshold, severity, summary. Not audited, not sent.
- A rule evaluated this round that no longer finds the subject **resolves** its open alert
  (``alert.resolve`` / ``alert.resolved``). A rule not evaluated (its reads failed) keeps its alerts.
- A firing alert left unacknowledged ``escalate_after_min`` minutes after it fired is **escalated**
  once (``escalated_at``; ``alert.escalate`` / ``alert.escalated``).

Two evaluators racing cannot make two alerts or two notifications: a new alert is inserted under the
"one open alert per subject" constraint (the loser updates the winner's row instead), and every
transition is a conditional UPDATE whose one winner writes the audit event and the notification, in
the same transaction. An unexpired silence matching the alert (rule "" or the same, subject "" or the
same) keeps the notification from being sent; the audit event still says what happened, and that
it was silenced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from console import access, notify
from console.alerts import audit_names
from console.alerts.core import Finding
from console.alerts.rules import RULES, Effective
from console.audit import store as audit
from console.models import Cluster
from console.models.alerts import OPEN_STATES, Alert, AlertSilence, AlertState

SUMMARY_MAX = 300
EVENTS = {
    audit_names.ALERT_FIRE: notify.events.ALERT_FIRING,
    audit_names.ALERT_RESOLVE: notify.events.ALERT_RESOLVED,
    audit_names.ALERT_ESCALATE: notify.events.ALERT_ESCALATED,
}


@dataclass
class Changes:
    """What one round did to a cluster's alerts (alert ids)."""

    fired: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    escalated: list[int] = field(default_factory=list)


def apply(
    cluster: Cluster,
    *,
    evaluated: Iterable[str],
    found: Iterable[Finding],
    settings: Mapping[str, Effective],
    now: datetime | None = None,
    actor=None,
) -> Changes:
    """Bring the cluster's alerts in line with one round's findings (see the module docstring);
    ``actor``: the system actor, when the caller has it."""
    now = now or timezone.now()
    changes = Changes()
    evaluated = set(evaluated)
    seen: set[tuple[str, str]] = set()
    actor = actor or access.system_actor()
    for finding in found:
        seen.add((finding.rule, finding.subject))
        alert_id, fired = _fire_or_update(cluster, finding, now, actor)
        (changes.fired if fired else changes.updated).append(alert_id)
    gone = Alert.objects.filter(cluster=cluster, state__in=OPEN_STATES, rule__in=evaluated)
    for alert_id, rule, subject in gone.values_list("pk", "rule", "subject"):
        if (rule, subject) not in seen and _resolve(alert_id, now, actor):
            changes.resolved.append(alert_id)
    changes.escalated = escalate(cluster, settings, now=now, actor=actor)
    return changes


def _fire_or_update(cluster: Cluster, f: Finding, now: datetime, actor) -> tuple[int, bool]:
    values = {
        "severity": f.severity,
        "summary": f.summary[:SUMMARY_MAX],
        "value": f.value,
        "threshold": f.threshold,
        "details": f.details,
        "last_seen_at": now,
    }
    with transaction.atomic():
        open_alert = (
            Alert.objects.select_for_update()
            .filter(cluster=cluster, rule=f.rule, subject=f.subject, state__in=OPEN_STATES)
            .first()
        )
        if open_alert is None:
            try:
                with transaction.atomic():  # a savepoint: losing the race leaves the outer one usable
                    alert = Alert.objects.create(
                        cluster=cluster, rule=f.rule, subject=f.subject, fired_at=now, **values
                    )
            except IntegrityError:  # another evaluator fired it meanwhile: update theirs
                open_alert = Alert.objects.select_for_update().get(
                    cluster=cluster, rule=f.rule, subject=f.subject, state__in=OPEN_STATES
                )
            else:
                _announce(alert, audit_names.ALERT_FIRE, actor, now)
                return alert.pk, True
        Alert.objects.filter(pk=open_alert.pk).update(**values)
        return open_alert.pk, False


def _resolve(alert_id: int, now: datetime, actor) -> bool:
    """Resolve an open alert; False when another evaluator (or nobody: it was resolved) got there."""
    with transaction.atomic():
        if not Alert.objects.filter(pk=alert_id, state__in=OPEN_STATES).update(
            state=AlertState.RESOLVED, resolved_at=now
        ):
            return False
        _announce(Alert.objects.get(pk=alert_id), audit_names.ALERT_RESOLVE, actor, now)
        return True


def escalate(
    cluster: Cluster, settings: Mapping[str, Effective], *, now: datetime | None = None, actor=None
) -> list[int]:
    """Escalate, once each, the cluster's firing alerts unacknowledged past their rule's
    ``escalate_after_min`` (rules without one never escalate)."""
    now = now or timezone.now()
    due = Q()
    for name, effective in settings.items():
        if effective.escalate_after_min is not None:
            due |= Q(rule=name, fired_at__lte=now - timedelta(minutes=effective.escalate_after_min))
    if not due:
        return []
    candidates = Alert.objects.filter(
        due, cluster=cluster, state=AlertState.FIRING, escalated_at__isnull=True
    )
    escalated = []
    for alert_id in candidates.values_list("pk", flat=True):
        with transaction.atomic():
            if not Alert.objects.filter(
                pk=alert_id, state=AlertState.FIRING, escalated_at__isnull=True
            ).update(escalated_at=now):
                continue
            _announce(
                Alert.objects.get(pk=alert_id),
                audit_names.ALERT_ESCALATE,
                actor or access.system_actor(),
                now,
            )
            escalated.append(alert_id)
    return escalated


def silenced(alert: Alert, now: datetime) -> AlertSilence | None:
    """The unexpired silence that matches the alert, if any."""
    return (
        AlertSilence.objects.filter(cluster_id=alert.cluster_id, ended_at__isnull=True, expires_at__gt=now)
        .filter(Q(rule="") | Q(rule=alert.rule), Q(subject="") | Q(subject=alert.subject))
        .order_by("expires_at")
        .last()
    )


def facts(alert: Alert) -> dict:
    """An alert as its audit event and its notification describe it."""
    rule = RULES.get(alert.rule)
    out = {
        "alert": alert.pk,
        "rule": alert.rule,
        "rule_title": rule.title if rule else alert.rule,
        "subject": alert.subject,
        "severity": alert.severity,
        "state": alert.state,
        "value": alert.value,
        "threshold": alert.threshold,
        "unit": rule.unit if rule else "",
        "summary": alert.summary,
        "fired_at": alert.fired_at.isoformat(),
    }
    if alert.resolved_at:
        out["resolved_at"] = alert.resolved_at.isoformat()
    if alert.escalated_at:
        out["escalated_at"] = alert.escalated_at.isoformat()
    return out


_VERBS = {
    audit_names.ALERT_FIRE: "firing",
    audit_names.ALERT_RESOLVE: "resolved",
    audit_names.ALERT_ESCALATE: "escalated",
}


def _announce(alert: Alert, action: str, actor, now: datetime) -> None:
    """The transition's audit event and, unless silenced, its notification (inside its transaction)."""
    cluster = alert.cluster
    described = facts(alert)
    silence = silenced(alert, now)
    params = {"silenced_by": silence.pk} if silence else {}
    audit.record(
        actor=actor,
        action=action,
        cluster=cluster,
        targets=[f"alert:{alert.pk}"],
        params=params,
        after=described,
        outcome="success",
    )
    if silence is not None:
        return
    where = f" ({alert.subject})" if alert.subject else ""
    notify.emit(
        cluster,
        EVENTS[action],
        title=f"[{alert.severity}] {described['rule_title']}{where} {_VERBS[action]} on {cluster.name}",
        text=alert.summary,
        link=f"/c/{cluster.name}/alerts/",
        details=described,
        key=f"alert-{alert.pk}-{EVENTS[action]}",
    )
