"""Notifications (console/notify): per-cluster channels and the delivery log a worker works through."""

from __future__ import annotations

from django.db import models

from console.crypto import EncryptedTextField


class ChannelKind(models.TextChoices):
    WEBHOOK = "webhook", "Webhook (signed JSON)"
    SLACK = "slack", "Slack-compatible incoming webhook"
    EMAIL = "email", "E-mail"


class NotificationChannel(models.Model):
    """Where a cluster's events go. The URL (which may carry a token: Slack's always does) and the
    webhook's signing secret are stored encrypted (console/crypto.py) and never shown back in full;
    `url_hint` is what pages show."""

    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="notify_channels")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=ChannelKind.choices)
    enabled = models.BooleanField(default=True)
    events = models.JSONField(default=list, blank=True)
    url_encrypted = EncryptedTextField(blank=True)
    url_hint = models.CharField(max_length=200, blank=True)
    secret_encrypted = EncryptedTextField(blank=True)
    recipients = models.JSONField(default=list, blank=True)
    created_by_name = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="one_channel_name_per_cluster")
        ]

    def __str__(self) -> str:
        return f"{self.kind} channel {self.name!r} of {self.cluster.name}"


class DeliveryState(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class NotificationDelivery(models.Model):
    """One event for one channel: written by notify.emit() in the caller's transaction, sent by a
    worker (claimed by a conditional UPDATE), retried with backoff up to NOTIFY_MAX_ATTEMPTS."""

    channel = models.ForeignKey(NotificationChannel, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=60)
    title = models.CharField(max_length=300)
    payload = models.JSONField(default=dict)
    dedupe_key = models.CharField(max_length=200, blank=True, db_index=True)
    state = models.CharField(max_length=10, choices=DeliveryState.choices, default=DeliveryState.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    taken_by = models.CharField(max_length=200, blank=True)
    taken_at = models.DateTimeField(null=True, blank=True)
    last_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    audit_requested_id = models.BigIntegerField(null=True, blank=True)  # a test send's "requested" event
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="notify_delivery_due")]

    def __str__(self) -> str:
        return f"delivery #{self.pk} of {self.event} to channel {self.channel_id}"
