"""Self-service change requests: the request, its timeline, notifications, per-cluster auto-approve rules."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from console.crypto import EncryptedJSONField


class RequestKind(models.TextChoices):
    TOPIC_CREATE = "topic.create", "New topic"
    TOPIC_CONFIG = "topic.config", "Topic config change"
    TOPIC_PARTITIONS = "topic.partitions", "Partition increase"
    TOPIC_DELETE = "topic.delete", "Topic deletion"
    ACL_CREATE = "acl.create", "ACL for a principal"
    GROUP_OFFSETS_RESET = "group.offsets.reset", "Consumer group offset reset"
    # Operator actions held for approval by the cluster's change-control policy (console/changes).
    CHANGE_CONFIG = "change.config", "Config change (held for approval)"
    CHANGE_TOPIC_DELETE = "change.topic.delete", "Topic deletion (held for approval)"
    CHANGE_ACL = "change.acl", "ACL change (held for approval)"
    CHANGE_GROUP_RESET = "change.group.reset", "Offset reset (held for approval)"
    CHANGE_REASSIGNMENT = "change.reassignment", "Reassignment (held for approval)"
    CHANGE_TOPIC_CREATE = "change.topic.create", "Topic creation (held for approval)"
    CHANGE_PARTITIONS = "change.topic.partitions", "Partition increase (held for approval)"
    CHANGE_THROTTLE = "change.throttle", "Throttle change (held for approval)"
    CHANGE_ELECTION = "change.election", "Leader election (held for approval)"
    CHANGE_GROUP_DELETE = "change.group.delete", "Consumer group deletion (held for approval)"
    CHANGE_GROUP_OFFSETS_DELETE = (
        "change.group.offsets.delete",
        "Committed offsets deletion (held for approval)",
    )
    ESTATE_APPLY = "estate.apply", "Estate plan (always held for approval)"


class RequestState(models.TextChoices):
    PENDING = "pending", "Waiting for approval"
    APPROVED = "approved", "Approved, queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Done"
    FAILED = "failed", "Failed"
    REJECTED = "rejected", "Rejected"
    CANCELLED = "cancelled", "Cancelled"


OPEN_STATES = (RequestState.PENDING,)
FINAL_STATES = (RequestState.SUCCEEDED, RequestState.FAILED, RequestState.REJECTED, RequestState.CANCELLED)


class ChangeRequest(models.Model):
    """A requester's change, validated on submit, decided by someone else, executed as an Operation."""

    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="change_requests")
    kind = models.CharField(max_length=32, choices=RequestKind.choices)
    resource = models.CharField(max_length=300)  # the topic name, or the principal for ACLs
    # A held config change keeps a secret value as a token under "value_encrypted" (console/changes).
    payload = EncryptedJSONField(
        default=dict, encrypted_keys=("value_encrypted",), on_rotate="console.changes.approvals.repin"
    )
    reason = models.TextField(blank=True)
    state = models.CharField(max_length=16, choices=RequestState.choices, default=RequestState.PENDING)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="change_requests"
    )
    requested_by_name = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_by_name = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_comment = models.TextField(blank=True)
    auto_approved = models.BooleanField(default=False)
    operation = models.ForeignKey(
        "console.Operation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    result = models.JSONField(default=dict, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Gated operator actions (console/changes): the reviewed payload is pinned by its digest, the
    # dry run shown to approvers is kept, and it may need two approvals.
    gated = models.BooleanField(default=False)
    payload_sha256 = models.CharField(max_length=64, blank=True)
    review = models.JSONField(default=dict, blank=True)
    approvals_required = models.PositiveSmallIntegerField(default=1)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["cluster", "state", "-id"]),
            models.Index(fields=["requested_by", "-id"]),
        ]

    def __str__(self) -> str:
        return f"request #{self.pk} {self.kind} {self.resource} ({self.state})"


class RequestEvent(models.Model):
    """One step of a request's timeline (submitted, approved by, executed, result)."""

    request = models.ForeignKey(ChangeRequest, on_delete=models.CASCADE, related_name="events")
    created_at = models.DateTimeField(auto_now_add=True)
    actor_name = models.CharField(max_length=150)
    step = models.CharField(max_length=32)
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.step} by {self.actor_name}"


class Notification(models.Model):
    """An in-app message for one user (e.g. "your request was approved")."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    request = models.ForeignKey(
        ChangeRequest, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    text = models.CharField(max_length=300)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["user", "read_at"])]

    def __str__(self) -> str:
        return self.text


class AutoApproveRule(models.Model):
    """Per-cluster rule: low-risk requests of these kinds are approved without a human (still audited)."""

    cluster = models.OneToOneField("console.Cluster", on_delete=models.CASCADE, related_name="auto_approve")
    enabled = models.BooleanField(default=False)
    kinds = models.JSONField(default=list, blank=True)  # RequestKind values
    max_partitions = models.PositiveIntegerField(null=True, blank=True)  # topic.create / topic.partitions
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"auto-approve rule of {self.cluster.name}"
