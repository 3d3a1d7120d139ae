"""Console users of identity-provider accounts: found through their IdentityLink, created at the first
login, never taken over (a name that belongs to a local account or another provider's user is refused)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from console import system_actor as system
from console.audit import store
from console.identity import audit_names
from console.identity.core import FAILURES_ATTR, Refused
from console.models.identity import IdentityLink

PROFILE_FIELDS = ("first_name", "last_name", "email")


def note_failure(request, provider: str, reason: str, known: bool = False) -> None:
    """Leave why a password login failed at this provider, for the failed-login audit event."""
    if request is not None:
        notes = getattr(request, FAILURES_ATTR, None) or []
        notes.append({"provider": provider, "reason": reason, "known": known})
        setattr(request, FAILURES_ATTR, notes)


def noted(request, provider: str) -> bool:
    return any(note["provider"] == provider for note in getattr(request, FAILURES_ATTR, None) or [])


def is_linked(user, provider: str) -> bool:
    return IdentityLink.objects.filter(user=user, provider=provider).exists()


def refuse_reserved(username: str) -> None:
    """Raise Refused for a user name no login may use (the system actor's, and names like it)."""
    if system.is_reserved(username):
        raise Refused(system.reserved_reason(username), username)


def refuse_takeover(username: str, provider: str) -> None:
    """Raise Refused when the name is reserved, or belongs to a console user who is not this provider's."""
    refuse_reserved(username)
    existing = get_user_model().objects.filter(username__iexact=username).first()
    if existing is not None and not is_linked(existing, provider):
        raise Refused(
            f"the user name '{username}' belongs to a console account that is not a {provider} account",
            username,
        )


def link(*, user, provider: str, subject: str, issuer: str = "", source_ip: str | None = None) -> None:
    """Tie a user created at their first single sign-on login to the account, and audit the creation."""
    IdentityLink.objects.create(
        user=user, provider=provider, issuer=issuer, subject=subject, last_login_at=timezone.now()
    )
    store.record(
        actor=user,
        action=audit_names.USER_CREATE,
        targets=[f"user:{user.get_username()}"],
        params={"provider": provider, "issuer": issuer, "subject": subject},
        after={f: getattr(user, f) for f in PROFILE_FIELDS},
        outcome="success",
        source_ip=source_ip,
    )


def touch(user, provider: str) -> None:
    """Note a login through the provider: its groups were read now (API tokens count from here)."""
    IdentityLink.objects.filter(user=user, provider=provider).update(last_login_at=timezone.now())


def oidc_user(*, issuer: str, subject: str, username: str, profile: dict, source_ip: str | None = None):
    """The console user of an OIDC account: the linked one (profile refreshed), or a new one."""
    User = get_user_model()
    refuse_reserved(username)
    with transaction.atomic():
        found = (
            IdentityLink.objects.select_related("user")
            .select_for_update()
            .filter(provider="oidc", issuer=issuer, subject=subject)
            .first()
        )
        if found is None:
            refuse_takeover(username, "oidc")
            user = User(username=username[:150], **profile)
            user.set_unusable_password()
            user.save()
            link(user=user, provider="oidc", subject=subject, issuer=issuer, source_ip=source_ip)
            return user
        user = found.user
        refuse_reserved(user.get_username())
        if not user.is_active:
            raise Refused(f"the console account '{user.get_username()}' is disabled", username)
        changed = [f for f in PROFILE_FIELDS if profile.get(f) is not None and getattr(user, f) != profile[f]]
        for field in changed:
            setattr(user, field, profile[field])
        if changed:
            user.save(update_fields=changed)
        found.last_login_at = timezone.now()
        found.save(update_fields=["last_login_at"])
        return user


def oidc_profile(claims: dict) -> dict:
    return {
        "first_name": str(claims.get("given_name") or "")[:150],
        "last_name": str(claims.get("family_name") or "")[:150],
        "email": str(claims.get("email") or "")[:254],
    }
