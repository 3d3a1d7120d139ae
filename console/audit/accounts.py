"""Accounts in the audit trail: log-ins, log-outs, failed log-ins, and every change made in
Django's admin (users, groups, role bindings, anything registered there).

Admin changes are taken from the admin's own LogEntry rows, which carry the acting user, the
object and what changed; the event is written in the same transaction as the change. Connected
in ``console/apps.py``.
"""

from __future__ import annotations

from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.db import transaction
from django.db.models.signals import post_save

from console.audit import store

_ADMIN_ACTIONS = {ADDITION: "admin.add", CHANGE: "admin.change", DELETION: "admin.delete"}


def _ip(request) -> str | None:
    return request.META.get("REMOTE_ADDR") if request is not None else None


def _logged_in(sender, request, user, **kwargs) -> None:
    with transaction.atomic():
        store.record(
            actor=user, action="auth.login", targets=[f"user:{user.get_username()}"],
            outcome="success", source_ip=_ip(request),
        )  # fmt: skip


def _logged_out(sender, request, user, **kwargs) -> None:
    if user is None:  # the session had already expired
        return
    with transaction.atomic():
        store.record(
            actor=user, action="auth.logout", targets=[f"user:{user.get_username()}"],
            outcome="success", source_ip=_ip(request),
        )  # fmt: skip


def _login_failed(sender, credentials, request=None, **kwargs) -> None:
    # Only a user name that exists is recorded: people type passwords into the user name field.
    name = str(credentials.get("username") or "")
    known = bool(name) and get_user_model().objects.filter(username=name).exists()
    with transaction.atomic():
        store.record(
            actor=None,
            action="auth.login_failed",
            targets=[f"user:{name}"] if known else [],
            params={"username": name if known else "(no such user)"},
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
            action=_ADMIN_ACTIONS.get(instance.action_flag, "admin.change"),
            targets=[f"{model}:{instance.object_repr}"[:200]],
            params={"model": model, "object_id": instance.object_id, "change": instance.get_change_message()},
            outcome="success",
        )


def connect() -> None:
    user_logged_in.connect(_logged_in, dispatch_uid="console.audit.login")
    user_logged_out.connect(_logged_out, dispatch_uid="console.audit.logout")
    user_login_failed.connect(_login_failed, dispatch_uid="console.audit.login_failed")
    post_save.connect(_admin_change, sender=LogEntry, dispatch_uid="console.audit.admin")
