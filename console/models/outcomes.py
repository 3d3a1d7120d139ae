"""Outcomes owed to the audit trail: a change whose "requested" event is written but whose outcome
event is not (the database refused the write after Kafka was called). Written in the same
transaction as the "requested" event, deleted with the outcome; the reconciler settles the rest."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class OwedOutcome(models.Model):
    requested_event_id = models.BigIntegerField(unique=True)
    cluster = models.ForeignKey("console.Cluster", null=True, blank=True, on_delete=models.SET_NULL)
    cluster_name = models.CharField(max_length=64, blank=True)
    action = models.CharField(max_length=64)
    targets = models.JSONField(default=list)
    params = models.JSONField(default=dict)  # as recorded (secrets masked)
    actor_name = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    unknown_event_id = models.BigIntegerField(null=True, blank=True)  # the "unknown" event, once written
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.action} (event {self.requested_event_id})"
