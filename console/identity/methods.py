"""The login methods the login page offers, from the settings, and the same rules for API tokens."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from console import system_actor as system
from console.identity import oidc
from console.identity.backends import LOCAL_OFF, LOCAL_SUPERUSERS, local_mode
from console.models import IdentityLink, SystemActor


@dataclass(frozen=True)
class LoginMethods:
    password: bool  # the user-name/password form (local accounts and/or LDAP)
    password_label: str
    oidc: bool
    oidc_label: str

    @property
    def any(self) -> bool:
        return self.password or self.oidc


def login_methods() -> LoginMethods:
    ldap_on = bool(settings.LDAP_SERVER_URI)
    local_on = local_mode() != LOCAL_OFF
    label = "User name"
    if ldap_on:
        label = (
            f"{settings.LDAP_LABEL} user name"
            if not local_on
            else f"User name ({settings.LDAP_LABEL} or local)"
        )
    return LoginMethods(
        password=ldap_on or local_on,
        password_label=label,
        oidc=oidc.configured(),
        oidc_label=settings.OIDC_LABEL,
    )


def _provider_on(provider: str) -> bool:
    return oidc.configured() if provider == "oidc" else bool(settings.LDAP_SERVER_URI)


def token_refusal(user, now=None) -> str | None:
    """Why this user may not act through an API token now, or None: a token follows the rules of the
    login it stands for, checked at every use.

    Local accounts: CONSOLE_LOCAL_LOGIN (off: nobody; superusers: superusers only). Single sign-on
    users: their provider must still be configured, and their groups (so their group roles) must have
    been read at a login no longer ago than API_TOKEN_SSO_MAX_AGE_S (by default the session's maximum
    age): someone removed from a group at the provider loses its role through their tokens when a
    session of theirs would have ended. Inactive users and the system actor never.
    """
    if not user.is_active:
        return "its user is inactive"
    if system.is_reserved(user.get_username()) or SystemActor.objects.filter(user_id=user.pk).exists():
        return "the system actor and reserved user names have no API access"
    links = list(IdentityLink.objects.filter(user_id=user.pk))
    if not links:
        mode = local_mode()
        if mode == LOCAL_OFF:
            return "local accounts are switched off (CONSOLE_LOCAL_LOGIN=off)"
        if mode == LOCAL_SUPERUSERS and not user.is_superuser:
            return "local accounts are for superusers only (CONSOLE_LOCAL_LOGIN=superusers)"
        return None
    live = [link for link in links if _provider_on(link.provider)]
    if not live:
        providers = ", ".join(sorted(link.provider for link in links))
        return f"its single sign-on provider ({providers}) is no longer configured"
    synced = max((link.last_login_at for link in live if link.last_login_at), default=None)
    limit = timedelta(seconds=settings.API_TOKEN_SSO_MAX_AGE_S)
    if synced is None or (now or timezone.now()) - synced > limit:
        return (
            "its user's groups were last read from the identity provider more than "
            f"{settings.API_TOKEN_SSO_MAX_AGE_S} s ago: log in to the console again to use it"
        )
    return None
