"""The login methods the login page offers, from the settings."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from console.identity import oidc
from console.identity.backends import LOCAL_OFF, local_mode


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
