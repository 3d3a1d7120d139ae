"""REST API state: per-user API tokens (stored hashed) and the idempotency records of POSTs."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from console.crypto import EncryptedTextField


class TokenScope(models.TextChoices):
    READ = "read", "Read-only"
    WRITE = "write", "Read-write"


class ApiToken(models.Model):
    """A user's API token. Only the SHA-256 of the secret is kept; ``prefix`` finds the row.

    The token string is ``kc_<prefix>_<secret>``, shown once when created. A read-only token never
    changes anything, whatever the user's roles; a revoked or expired token authenticates nobody.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    digest = models.CharField(max_length=64)  # hex SHA-256 of the whole token string
    scope = models.CharField(max_length=8, choices=TokenScope.choices, default=TokenScope.READ)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix})"

    @property
    def label(self) -> str:
        """How the token is named in the audit trail."""
        return f"token {self.prefix} '{self.name[:40]}'"

    def is_live(self, now=None) -> bool:
        return self.revoked_at is None and self.expires_at > (now or timezone.now())


class IdempotencyRecord(models.Model):
    """A POST sent with an ``Idempotency-Key``: the first answer, replayed for the same key and body.

    ``status`` 0 means the first request is still running (a concurrent retry is told so). The answer
    is kept encrypted (``console/crypto.py``): some carry a secret shown once (a webhook's signing key).
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    route = models.CharField(max_length=300)  # method and path
    body_hash = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField(default=0)
    response_encrypted = EncryptedTextField(blank=True, default="")  # the answer's JSON, encrypted
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key", "route"], name="idempotency_user_key_route")
        ]

    def __str__(self) -> str:
        return f"{self.route} {self.key}"
