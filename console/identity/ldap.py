"""LDAP login through django-auth-ldap (python-ldap underneath), configured from the LDAP_* settings.

Imported only when LDAP_SERVER_URI is set (settings put this backend in AUTHENTICATION_BACKENDS then),
so a machine without python-ldap runs the console without it. The user is found by a search as the
bind DN, authenticated by binding as that user, and their groups found by the group search; the
group DNs become console groups (console.identity.groups) at every login.
"""

from __future__ import annotations

import ldap
from django.conf import settings
from django.db import transaction
from django.dispatch import receiver
from django_auth_ldap import backend as ldap_backend
from django_auth_ldap.config import (
    ActiveDirectoryGroupType,
    GroupOfNamesType,
    GroupOfUniqueNamesType,
    LDAPSearch,
    NestedActiveDirectoryGroupType,
    NestedGroupOfNamesType,
    PosixGroupType,
)

from console.identity import groups, users
from console.identity.core import Refused

PROVIDER = "ldap"
GROUP_TYPES = {  # keys: settings.LDAP_GROUP_TYPES
    "groupOfNames": GroupOfNamesType,  # OpenLDAP: member: <user DN>
    "nestedGroupOfNames": NestedGroupOfNamesType,
    "groupOfUniqueNames": GroupOfUniqueNamesType,
    "posixGroup": PosixGroupType,  # memberUid: <user name>
    "activeDirectory": ActiveDirectoryGroupType,  # AD: member: <user DN>
    "nestedActiveDirectory": NestedActiveDirectoryGroupType,
}


def directory_settings() -> dict:
    """django-auth-ldap's settings (without their AUTH_LDAP_ prefix), from the console's LDAP_* ones."""
    uri = settings.LDAP_SERVER_URI
    timeout = settings.LDAP_TIMEOUT_S
    # TLS options per connection, the new TLS context last: libldap's global context would keep the
    # first CA file it was given.
    tls_options = {ldap.OPT_X_TLS_REQUIRE_CERT: ldap.OPT_X_TLS_DEMAND}
    if settings.LDAP_CA_CERT_FILE:
        tls_options[ldap.OPT_X_TLS_CACERTFILE] = settings.LDAP_CA_CERT_FILE
    tls_options[ldap.OPT_X_TLS_NEWCTX] = 0
    group_search = None
    if settings.LDAP_GROUP_SEARCH_BASE:
        group_search = LDAPSearch(
            settings.LDAP_GROUP_SEARCH_BASE, ldap.SCOPE_SUBTREE, settings.LDAP_GROUP_FILTER
        )
    return {
        "SERVER_URI": uri,
        "START_TLS": settings.LDAP_START_TLS and uri.lower().startswith("ldap://"),
        "BIND_DN": settings.LDAP_BIND_DN,
        "BIND_PASSWORD": settings.LDAP_BIND_PASSWORD,
        "USER_SEARCH": LDAPSearch(
            settings.LDAP_USER_SEARCH_BASE, ldap.SCOPE_SUBTREE, settings.LDAP_USER_FILTER
        ),
        "GROUP_SEARCH": group_search,
        "GROUP_TYPE": GROUP_TYPES[settings.LDAP_GROUP_TYPE]() if group_search else None,
        "USER_ATTR_MAP": {
            "first_name": settings.LDAP_ATTR_FIRST_NAME,
            "last_name": settings.LDAP_ATTR_LAST_NAME,
            "email": settings.LDAP_ATTR_EMAIL,
        },
        "ALWAYS_UPDATE_USER": True,
        "MIRROR_GROUPS": None,  # the console mirrors groups itself, by DN (console.identity.groups)
        "FIND_GROUP_PERMS": False,
        "CACHE_TIMEOUT": 0,  # group memberships are read fresh at every login
        "CONNECTION_OPTIONS": {
            ldap.OPT_REFERRALS: 0,  # Active Directory's referrals would need another bind
            ldap.OPT_NETWORK_TIMEOUT: timeout,
            ldap.OPT_TIMEOUT: timeout,
            **tls_options,
        },
    }


class DirectoryBackend(ldap_backend.LDAPBackend):
    """django-auth-ldap's backend with the console's rules: no takeover of a local account, the
    user's group DNs recomputed at each login, why a login failed noted for the audit."""

    audit_method = "password"
    audit_provider = PROVIDER

    @property
    def default_settings(self) -> dict:
        return directory_settings()

    def get_or_build_user(self, username, ldap_user):
        try:
            users.refuse_takeover(username, PROVIDER)
        except Refused as exc:
            users.note_failure(ldap_user._request, PROVIDER, exc.reason, known=True)
            raise ldap_user.AuthenticationFailed(exc.reason) from exc
        user, built = super().get_or_build_user(username, ldap_user)
        ldap_user.console_built = built
        return user, built

    def authenticate_ldap_user(self, ldap_user, password):
        request = ldap_user._request
        ip = request.META.get("REMOTE_ADDR") if request is not None else None
        user = super().authenticate_ldap_user(ldap_user, password)
        if user is None:
            if not users.noted(request, PROVIDER):
                users.note_failure(request, PROVIDER, *self._why(ldap_user))
            return None
        try:
            group_dns = sorted(ldap_user.group_dns) if self.settings.GROUP_SEARCH else []
        except ldap.LDAPError as exc:
            users.note_failure(request, PROVIDER, f"group search failed: {_describe(exc)}", known=True)
            return None
        with transaction.atomic():
            if getattr(ldap_user, "console_built", False):
                users.link(user=user, provider=PROVIDER, subject=user.get_username(), source_ip=ip)
            else:
                users.touch(user, PROVIDER)
            groups.apply_idp_groups(user=user, provider=PROVIDER, idp_groups=group_dns, source_ip=ip)
        return user

    @staticmethod
    def _why(ldap_user) -> tuple[str, bool]:
        try:
            dn = ldap_user.dn
        except ldap.LDAPError as exc:
            return f"directory error: {_describe(exc)}", False
        return ("unknown user", False) if dn is None else ("wrong password", True)


def _describe(exc: Exception) -> str:
    detail = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
    return str(detail.get("desc") or type(exc).__name__)[:200]


@receiver(ldap_backend.ldap_error, sender=DirectoryBackend, dispatch_uid="console.identity.ldap_error")
def _ldap_error(sender, context, user=None, request=None, exception=None, **kwargs) -> None:
    """The directory failed (unreachable, StartTLS refused, bad bind DN): note it for the audit."""
    if request is not None and not users.noted(request, PROVIDER):
        users.note_failure(request, PROVIDER, f"directory error: {_describe(exception)}")
