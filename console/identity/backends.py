"""Authentication backends: local accounts (break-glass, can be switched off) and OpenID Connect
sessions. The LDAP backend is ``console.identity.ldap`` (imported only when LDAP is configured).

Each backend names its login method and provider for the login audit event (``audit_method``,
``audit_provider``, read by console/audit/accounts.py from the session's backend).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from console import system_actor as system
from console.identity.users import note_failure

LOCAL_ALL, LOCAL_SUPERUSERS, LOCAL_OFF = "all", "superusers", "off"


def local_mode() -> str:
    mode = str(getattr(settings, "CONSOLE_LOCAL_LOGIN", LOCAL_ALL)).strip().lower()
    return mode if mode in (LOCAL_ALL, LOCAL_SUPERUSERS, LOCAL_OFF) else LOCAL_OFF  # unknown: safe side


class LocalBackend(ModelBackend):
    """Django's password check on console accounts, refused (and the reason noted for the audit) when
    CONSOLE_LOCAL_LOGIN is "off", or "superusers" and the account is not one."""

    audit_method = "password"
    audit_provider = "local"

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None or password is None:
            return None  # not a password login (another backend's credentials)
        mode = local_mode()
        if mode == LOCAL_OFF:
            note_failure(request, "local", "local accounts are switched off (CONSOLE_LOCAL_LOGIN=off)")
            return None
        if system.is_reserved(username):
            note_failure(request, "local", system.reserved_reason(username))
            return None
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None and mode == LOCAL_SUPERUSERS and not user.is_superuser:
            note_failure(request, "local", "local accounts are for superusers only", known=True)
            return None
        if user is None:
            note_failure(request, "local", *self._why(username))
        return user

    @staticmethod
    def _why(username: str) -> tuple[str, bool]:
        account = get_user_model().objects.filter(username=username).first()
        if account is None:
            return "unknown user", False
        if not account.has_usable_password():
            return "not a local account (no password here)", True
        if not account.is_active:
            return "account disabled", True
        return "wrong password", True

    def get_user(self, user_id):
        user = super().get_user(user_id)
        mode = local_mode()
        if user is None or mode == LOCAL_OFF or (mode == LOCAL_SUPERUSERS and not user.is_superuser):
            return None  # a session opened before local accounts were switched off ends
        return user


class OIDCBackend(ModelBackend):
    """Holds OpenID Connect sessions: the login itself happens in console.identity.actions (the code
    flow is no user-name/password check), which logs the user in with this backend."""

    audit_method = "oidc"
    audit_provider = "oidc"

    def authenticate(self, request, **credentials):
        return None
