"""Data access (console/messages): who may read and write messages of which topics, and what is
masked before a message leaves the server."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import models


class DataGrant(models.Model):
    """The ``data.read`` / ``data.write`` permission on the topics of one cluster whose names start
    with ``prefix`` ("" = every topic), for a user or a group. ``unmasked``: may ask for unmasked
    reads, each with a reason. Roles never grant data access; only these rows do."""

    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="data_grants")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="data_grants"
    )
    group = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.CASCADE, related_name="data_grants"
    )
    prefix = models.CharField(max_length=249, blank=True)
    read = models.BooleanField(default=True)
    write = models.BooleanField(default=False)
    unmasked = models.BooleanField(default=False)
    created_by_name = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["prefix", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(user__isnull=False, group__isnull=True))
                | (models.Q(user__isnull=True, group__isnull=False)),
                name="datagrant_user_xor_group",
            )
        ]

    def __str__(self) -> str:
        return f"{self.holder} on {self.cluster_id} prefix '{self.prefix}'"

    @property
    def holder(self) -> str:
        return self.user.username if self.user_id else f"group:{self.group.name}"

    def clean(self) -> None:
        if bool(self.user_id) == bool(self.group_id):
            raise ValidationError("A data grant names a user or a group, not both and not neither.")
        if not (self.read or self.write):
            raise ValidationError("A data grant gives read, write or both.")
        if self.unmasked and not self.read:
            raise ValidationError("Unmasked reads need the read permission in the same grant.")


class MaskKind(models.TextChoices):
    JSON_PATH = "json_path", "JSON path (the matched value becomes ***)"
    HEADER = "header", "Header (its value becomes ***)"
    REGEX = "regex", "Regular expression over the value (each match becomes ***)"


class MaskingRule(models.Model):
    """A masking rule of one cluster's topics whose names start with ``prefix`` ("" = every topic),
    applied on the server to every masked read before anything leaves it."""

    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="masking_rules")
    prefix = models.CharField(max_length=249, blank=True)
    kind = models.CharField(max_length=16, choices=MaskKind.choices)
    expression = models.CharField(max_length=500)
    note = models.CharField(max_length=500, blank=True)
    created_by_name = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["prefix", "id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.expression} on '{self.prefix}'"
