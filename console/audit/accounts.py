"""Accounts in the audit trail: log-ins (with the method and provider), log-outs, failed log-ins (with
each backend's reason), refused single sign-on logins, and every change made in Django's admin (users,
groups, role bindings, anything registered there). Users created and groups changed by single sign-on
are recorded by console/identity where the change is made.

Admin changes are taken from the admin's own LogEntry rows, which carry the acting user, the
object and what changed; the event is written in the same transaction as the change. Connected
in ``console/apps.py``.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth import BACKEND_SESSION_KEY, get_user_model, load_backend
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.db import transaction
from django.db.models.signals import post_save

from console.addresses import client_ip
from console.audit import audit_names, store

_ADMIN_ACTIONS = {
    ADDITION: audit_names.ADMIN_ADD,
    CHANGE: audit_names.ADMIN_CHANGE,
    DELETION: audit_names.ADMIN_DELETE,
}


def _ip(request) -> str | None:
    return client_ip(request)


# Where console/identity's backends leave why a password login failed (console.identity.core.FAILURES_ATTR).
_FAILURES_ATTR = "console_login_failures"


def _method(request, user) -> dict:
    """How the user logged in: the backend's audit_method and audit_provider (password/local by default)."""
    session = getattr(request, "session", None)
    path = getattr(user, "backend", "") or (
        session.get(BACKEND_SESSION_KEY, "") if session is not None else ""
    )
    try:
        backend = load_backend(path) if path else None
    except ImportError:
        backend = None
    method = getattr(backend, "audit_method", "password")
    provider = getattr(backend, "audit_provider", "local")
    if method == "oidc":
        provider = getattr(settings, "OIDC_ISSUER", "") or provider
    return {"method": method, "provider": provider}


def _logged_in(sender, request, user, **kwargs) -> None:
    with transaction.atomic():
        store.record(
            actor=user, action=audit_names.LOGIN, targets=[f"user:{user.get_username()}"],
            params=_method(request, user), outcome="success", source_ip=_ip(request),
        )  # fmt: skip


def _logged_out(sender, request, user, **kwargs) -> None:
    if user is None:  # the session had already expired
        return
    with transaction.atomic():
        store.record(
            actor=user, action=audit_names.LOGOUT, targets=[f"user:{user.get_username()}"],
            outcome="success", source_ip=_ip(request),
        )  # fmt: skip


def _login_failed(sender, credentials, request=None, **kwargs) -> None:
    # Only a user name that exists (here, or in the directory) is recorded: people type passwords into
    # the user name field.
    name = str(credentials.get("username") or "")
    notes = list(getattr(request, _FAILURES_ATTR, None) or [])
    known = bool(name) and (
        any(note.get("known") for note in notes) or get_user_model().objects.filter(username=name).exists()
    )
    params = {"username": name if known else "(no such user)", "method": "password"}
    if notes:
        params["providers"] = [note["provider"] for note in notes]
        params["reasons"] = {note["provider"]: note["reason"] for note in notes}
    with transaction.atomic():
        store.record(
            actor=None,
            action=audit_names.LOGIN_FAILED,
            targets=[f"user:{name}"] if known else [],
            params=params,
            outcome="failure",
            source_ip=_ip(request),
        )


def login_refused(request, *, method: str, provider: str, reason: str, username: str = "") -> None:
    """A single sign-on login refused before any password check (a tampered or expired ID token, a
    provider error, a user name taken by a local account): auth.login_failed with the reason."""
    # The user name here comes from a validated token, never from a typed field: it is kept as given.
    with transaction.atomic():
        store.record(
            actor=None,
            action=audit_names.LOGIN_FAILED,
            targets=[f"user:{username}"[:200]] if username else [],
            params={
                "username": username or "(unknown)",
                "method": method,
                "provider": provider,
                "reason": reason,
            },
            outcome="failure",
            source_ip=_ip(request),
        )


def _admin_change(sender, instance: LogEntry, created: bool, **kwargs) -> None:
    if not created:
        return
    model = instance.content_type.model if instance.content_type_id else "object"
    with transaction.atomic():
        store.record(
            actor=instance.user,
            action=_ADMIN_ACTIONS.get(instance.action_flag, audit_names.ADMIN_CHANGE),
            targets=[f"{model}:{instance.object_repr}"[:200]],
            params={"model": model, "object_id": instance.object_id, "change": instance.get_change_message()},
            outcome="success",
        )


def connect() -> None:
    user_logged_in.connect(_logged_in, dispatch_uid="console.audit.login")
    user_logged_out.connect(_logged_out, dispatch_uid="console.audit.logout")
    user_login_failed.connect(_login_failed, dispatch_uid="console.audit.login_failed")
    post_save.connect(_admin_change, sender=LogEntry, dispatch_uid="console.audit.admin")
