"""Which console user an identity-provider account is."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class IdentityLink(models.Model):
    """Ties a console user to one account at an identity provider ("oidc": the ID token's issuer and
    ``sub``; "ldap": the directory user name). Created at the first single sign-on login; a user name
    that already belongs to a local account or to another provider's account is never taken over."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="identity_links"
    )
    provider = models.CharField(max_length=16)
    issuer = models.CharField(max_length=500, blank=True)
    subject = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True)
    last_login_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "issuer", "subject"], name="identitylink_unique_subject"
            ),
            models.UniqueConstraint(fields=["user", "provider"], name="identitylink_one_per_provider"),
        ]

    def __str__(self) -> str:
        return f"{self.user} via {self.provider} ({self.subject})"


class SystemActor(models.Model):
    """Marks the one console user that is the system actor (console/access.py): background and
    automatic work acts as it. The mark is this row, never the user name: no login creates it (a data
    migration does), and the reserved names it carries are refused to every login method."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    singleton = models.BooleanField(default=True, unique=True, editable=False)  # at most one row

    def __str__(self) -> str:
        return f"system actor {self.user}"
