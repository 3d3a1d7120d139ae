"""Change control: per-cluster policy of which operator actions need approval, and approvals."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ChangePolicy(models.Model):
    """Which operator action kinds (console.changes.kinds) need approval on a cluster, for which
    roles (none listed: everyone), and by how many approvers (never the author)."""

    cluster = models.OneToOneField("console.Cluster", on_delete=models.CASCADE, related_name="change_policy")
    enabled = models.BooleanField(default=False)
    kinds = models.JSONField(default=list, blank=True)
    roles = models.JSONField(default=list, blank=True)
    approvers = models.PositiveSmallIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"change-control policy of {self.cluster.name}"


class ChangeApproval(models.Model):
    """One approver's yes to a gated change; counts while younger than APPROVAL_TTL_H."""

    request = models.ForeignKey("console.ChangeRequest", on_delete=models.CASCADE, related_name="approvals")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    user_name = models.CharField(max_length=150)
    payload_sha256 = models.CharField(max_length=64)
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["request", "user", "payload_sha256"], name="one_approval_per_review"
            )
        ]

    def __str__(self) -> str:
        return f"approval of request #{self.request_id} by {self.user_name}"
