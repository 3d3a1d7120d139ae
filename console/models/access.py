"""Per-cluster role bindings for users and groups."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import models


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    REQUESTER = "requester", "Requester"
    OPERATOR = "operator", "Operator"
    ADMIN = "admin", "Admin"
    AUDITOR = "auditor", "Auditor"


class RoleBinding(models.Model):
    """Grants one role on one cluster to a user or a group; requester bindings carry namespaces."""

    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="bindings")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="bindings"
    )
    group = models.ForeignKey(Group, null=True, blank=True, on_delete=models.CASCADE, related_name="bindings")
    role = models.CharField(max_length=16, choices=Role.choices)
    # Topic-name prefixes and Kafka principals a requester may request for.
    namespaces = models.JSONField(default=list, blank=True)
    principals = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(user__isnull=False, group__isnull=True))
                | (models.Q(user__isnull=True, group__isnull=False)),
                name="rolebinding_user_xor_group",
            )
        ]

    def __str__(self) -> str:
        who = self.user.username if self.user_id else f"group:{self.group.name}"
        return f"{who} is {self.role} on {self.cluster.name}"

    def clean(self) -> None:
        if bool(self.user_id) == bool(self.group_id):
            raise ValidationError("A role binding names a user or a group, not both and not neither.")
