"""API tokens: create (shown once), revoke, authenticate. Every creation, first use and revocation is audited.

A token is ``kc_<prefix>_<secret>``: the prefix (12 hex characters) finds the row, the secret (256
random bits) proves it; only the SHA-256 of the whole string is stored, compared in constant time.
A request made with a token acts as its user under another name in the audit trail
(``alice [token 1a2b3c4d5e6f 'ci']``), so every event the area actions write names the token.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from console.audit import store as audit
from console.identity import audit_names, methods
from console.models import ApiToken
from console.models.api import TokenScope

PREFIX_LEN = 12
ACTOR_NAME_MAX = 150


class TokenInvalid(Exception):
    """The presented token is malformed, unknown, revoked or expired (the reason is for the audit only)."""


class TokenRefused(TokenInvalid):
    """A genuine, live token whose user may not act through it now (the login rules of
    ``identity.methods.token_refusal``): the reason is told to the caller, who proved they hold it."""


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    secret: str  # the whole token string: shown once, never stored


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def target(token: ApiToken) -> str:
    return f"api-token:{token.prefix}"


def create_token(*, actor, name: str, scope: str, days: int, source_ip: str | None = None) -> NewToken:
    """A new token of the actor's own, valid for ``days`` days (at most API_TOKEN_MAX_DAYS)."""
    name = (name or "").strip()
    errors = []
    if not name or len(name) > 100:
        errors.append("Name the token (1 to 100 characters).")
    if scope not in TokenScope.values:
        errors.append(f"Scope is one of {', '.join(TokenScope.values)}.")
    if not isinstance(days, int) or not 1 <= days <= settings.API_TOKEN_MAX_DAYS:
        errors.append(f"Expiry is 1 to {settings.API_TOKEN_MAX_DAYS} days.")
    if errors:
        raise ValidationError(errors)
    prefix = secrets.token_hex(PREFIX_LEN // 2)
    raw = f"kc_{prefix}_{secrets.token_urlsafe(32)}"
    now = timezone.now()
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=actor,
            name=name,
            prefix=prefix,
            digest=_digest(raw),
            scope=scope,
            created_at=now,
            expires_at=now + timedelta(days=days),
        )
        _record(actor, token, audit_names.TOKEN_CREATE, source_ip, expires_at=token.expires_at.isoformat())
    return NewToken(token, raw)


def _record(
    actor, token: ApiToken, action: str, source_ip: str | None, *, outcome="success", **params
) -> None:
    """A token's event: the token by its prefix, its name and scope, and what else is said."""
    audit.record(
        actor=actor,
        action=action,
        targets=[target(token)],
        params={"name": token.name, "scope": token.scope, **params},
        outcome=outcome,
        source_ip=source_ip,
    )


def revoke_token(*, actor, token_id: int, source_ip: str | None = None) -> ApiToken | None:
    """Revoke one of the actor's own live tokens; None when there is no such token of theirs."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(pk=token_id, user=actor).first()
        if token is None or token.revoked_at is not None:
            return None
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        _record(actor, token, audit_names.TOKEN_REVOKE, source_ip)
    return token


def tokens_of(user) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user))


def authenticate(raw: str, *, source_ip: str | None = None) -> ApiToken:
    """The live token this string is, its user loaded; raises TokenInvalid otherwise.

    The first use is audited (``api.token.use``); ``last_used_at`` is refreshed at most once a
    minute, so reads do not write on every request.
    """
    parts = raw.split("_")
    if len(parts) < 3 or parts[0] != "kc" or len(parts[1]) != PREFIX_LEN:
        raise TokenInvalid("malformed")
    token = ApiToken.objects.select_related("user").filter(prefix=parts[1]).first()
    if token is None or not hmac.compare_digest(token.digest, _digest(raw)):
        raise TokenInvalid("unknown")
    now = timezone.now()
    if not token.is_live(now):
        raise TokenInvalid("revoked or expired")
    refusal = methods.token_refusal(token.user, now)
    if refusal is not None:
        with transaction.atomic():
            _record(
                token.user, token, audit_names.TOKEN_REFUSED, source_ip, outcome="refused", reason=refusal
            )
        raise TokenRefused(f"The {token.label} cannot be used: {refusal}.")
    if token.last_used_at is None:
        with transaction.atomic():
            first = ApiToken.objects.filter(pk=token.pk, last_used_at__isnull=True).update(last_used_at=now)
            if first:
                _record(token.user, token, audit_names.TOKEN_USE, source_ip, first_use=True)
    elif (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def acting_user(token: ApiToken):
    """The token's user, named in the audit trail with the token: a copy whose ``get_username`` says so."""
    user = copy.copy(token.user)
    name = f" [{token.label}]"
    user.get_username = lambda: token.user.get_username()[: ACTOR_NAME_MAX - len(name)] + name
    return user
