"""Health alerts (console/alerts): per-cluster rule settings, the alerts the evaluator raises and
the silences people set. The rules themselves (what each checks, its default threshold) are code:
``console.alerts.rules``."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class AlertState(models.TextChoices):
    FIRING = "firing", "Firing"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    RESOLVED = "resolved", "Resolved"


class AlertSeverity(models.TextChoices):
    WARNING = "warning", "Warning"
    CRITICAL = "critical", "Critical"


OPEN_STATES = (AlertState.FIRING, AlertState.ACKNOWLEDGED)


class AlertRuleSetting(models.Model):
    """A cluster's own setting of one built-in rule; a rule without a row uses its defaults."""

    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="alert_settings")
    rule = models.CharField(max_length=40)
    enabled = models.BooleanField(default=True)
    threshold = models.FloatField(null=True, blank=True)  # None: the rule's default
    severity = models.CharField(max_length=10, choices=AlertSeverity.choices, blank=True)  # blank: default
    escalate_after_min = models.PositiveIntegerField(null=True, blank=True)  # None: never escalate
    updated_by_name = models.CharField(max_length=150, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cluster_id", "rule"]
        constraints = [models.UniqueConstraint(fields=["cluster", "rule"], name="one_setting_per_rule")]

    def __str__(self) -> str:
        return f"{self.rule} on {self.cluster_id}"


class Alert(models.Model):
    """One condition of one rule on one subject (``subject``: "" for the cluster, "broker 2",
    "group billing", ...). At most one open (firing or acknowledged) alert per cluster, rule and
    subject: a condition seen again updates it; once resolved, the next occurrence is a new alert."""

    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="alerts")
    rule = models.CharField(max_length=40)
    subject = models.CharField(max_length=300, blank=True)
    severity = models.CharField(max_length=10, choices=AlertSeverity.choices)
    state = models.CharField(max_length=12, choices=AlertState.choices, default=AlertState.FIRING)
    summary = models.CharField(max_length=300)
    value = models.FloatField(null=True, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)
    fired_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by_name = models.CharField(max_length=150, blank=True)
    ack_note = models.TextField(blank=True)
    escalated_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-fired_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "rule", "subject"],
                condition=Q(state__in=["firing", "acknowledged"]),
                name="one_open_alert_per_subject",
            )
        ]
        indexes = [models.Index(fields=["cluster", "state"], name="alert_cluster_state")]

    def __str__(self) -> str:
        return f"{self.rule} {self.subject or 'cluster'} on {self.cluster_id} ({self.state})"


class AlertSilence(models.Model):
    """While unexpired, alerts of ``rule`` ("" = every rule) on ``subject`` ("" = every subject) of
    the cluster are still recorded but notify nobody."""

    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="alert_silences")
    rule = models.CharField(max_length=40, blank=True)
    subject = models.CharField(max_length=300, blank=True)
    reason = models.TextField()
    created_by_name = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)  # ended early by someone

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"silence of {self.rule or 'every rule'} on {self.cluster_id} until {self.expires_at}"
