"""Alerts made as the evaluator makes them (rows on a cluster nobody listens on: the alerts area's
actions and reads never speak to Kafka), and the audit events of the alerts area in order."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from console.models import AuditEvent
from console.models.alerts import Alert


def make_alert(cluster, rule: str = "under_replicated", subject: str = "", **fields) -> Alert:
    """An alert firing since five minutes ago (fields override)."""
    fired = timezone.now() - timedelta(minutes=5)
    values = {
        "severity": "warning", "state": "firing", "summary": f"{rule} on {subject or 'the cluster'}",
        "value": 3.0, "threshold": 0.0, "fired_at": fired, "last_seen_at": fired, **fields,
    }  # fmt: skip
    return Alert.objects.create(cluster=cluster, rule=rule, subject=subject, **values)


def alert_events() -> list[tuple]:
    """(action, outcome, actor, targets) of every alerts-area audit event, oldest first."""
    rows = AuditEvent.objects.filter(action__startswith="alert.").order_by("pk")
    return list(rows.values_list("action", "outcome", "actor_name", "targets"))
