"""Channel management (cluster admins only): create, change, delete, send a test; read the delivery log.

Every change is one audit event written in the transaction that makes it (`notify.channel.create`,
`.update`, `.delete`); a test send is "requested" when queued and gets its outcome event when the
worker has delivered it or given up (console/notify/worker.py). Refusals (permission, bad input) are
audited by ``@refused_as``. URLs and secrets are encrypted at rest and never returned: a webhook's
signing secret is returned once, by the create (or rotate) that made it.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction

from console import access, crypto
from console.audit import recorded
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.models import Cluster
from console.models.notify import ChannelKind, NotificationChannel, NotificationDelivery
from console.notify import audit_names, core, egress, emitter, events

NAME_MAX = 100
RECIPIENTS_MAX = 20
SECRET_MIN = 16
SECRET_MAX = 200


class ChannelInvalid(Exception):
    """Bad channel settings; errors are sentences for the form or the API."""

    def __init__(self, errors: Iterable[str]):
        self.errors = list(errors)
        super().__init__("; ".join(self.errors))


class ChannelNotFound(Exception):
    """No such channel on this cluster."""


def describe(channel: NotificationChannel) -> dict[str, Any]:
    """What pages, the API and the audit show of a channel: never the URL's path or a secret."""
    return {
        "id": channel.pk,
        "name": channel.name,
        "kind": channel.kind,
        "enabled": channel.enabled,
        "events": list(channel.events or []),
        "url_hint": channel.url_hint,
        "signed": bool(channel.secret_encrypted),
        "recipients": list(channel.recipients or []),
    }


def list_channels(*, actor, cluster: Cluster) -> list[NotificationChannel]:
    access.require(actor, cluster, access.ADMINISTER)
    return list(NotificationChannel.objects.filter(cluster=cluster).order_by("name"))


def get_channel(*, actor, cluster: Cluster, channel_id: int) -> NotificationChannel:
    access.require(actor, cluster, access.ADMINISTER)
    channel = NotificationChannel.objects.filter(cluster=cluster, pk=channel_id).first()
    if channel is None:
        raise ChannelNotFound(f"No notification channel #{channel_id} on cluster '{cluster.name}'.")
    return channel


def _clean(
    *, kind: str, name: str, events_: list[str], url: str | None, recipients, secret: str, creating: bool
) -> tuple[str, list[str], list[str]]:
    errors = []
    name = (name or "").strip()
    if not name or len(name) > NAME_MAX:
        errors.append(f"give the channel a name of 1 to {NAME_MAX} characters")
    if kind not in ChannelKind.values:
        errors.append(f"unknown channel kind {kind!r} (one of {', '.join(ChannelKind.values)})")
    unknown = [e for e in events_ if e not in events.SUBSCRIBABLE]
    if unknown:
        errors.append(f"unknown events: {', '.join(map(str, unknown))}")
    wanted = [e for e in events.SUBSCRIBABLE if e in events_]
    cleaned: list[str] = []
    if kind == ChannelKind.EMAIL:
        cleaned = sorted({str(r).strip() for r in recipients or [] if str(r).strip()})
        if not cleaned or len(cleaned) > RECIPIENTS_MAX:
            errors.append(f"give 1 to {RECIPIENTS_MAX} e-mail recipients")
        for r in cleaned:
            try:
                validate_email(r)
            except ValidationError:
                errors.append(f"{r[:100]!r} is not an e-mail address")
        errors += _domain_problems(cleaned)
    elif kind in ChannelKind.values:
        if url is None and creating:
            errors.append("give the URL to send to")
        elif url is not None and (problem := core.url_problem(url) or egress.url_refusal(url)):
            errors.append(problem)
    if secret and not (SECRET_MIN <= len(secret) <= SECRET_MAX):
        errors.append(f"a signing secret has {SECRET_MIN} to {SECRET_MAX} characters")
    if errors:
        raise ChannelInvalid(errors)
    return name, wanted, cleaned


def _domain_problems(recipients: list[str]) -> list[str]:
    allowed = settings.NOTIFY_EMAIL_DOMAINS
    if recipients and not allowed:
        return ["e-mail channels are off: the operator names the allowed domains in NOTIFY_EMAIL_DOMAINS"]
    return [
        f"{r[:100]!r} is not in an allowed domain (NOTIFY_EMAIL_DOMAINS: {', '.join(allowed)})"
        for r in core.recipients_refused(recipients, allowed)
    ]


def _targets(kwargs: dict) -> list[str]:
    return [f"notify-channel:{kwargs.get('channel_id') or kwargs.get('name', '')}"]


def _saved_target(channel: NotificationChannel) -> list[str]:
    return [f"notify-channel:{channel.pk}"]


def _save(
    channel: NotificationChannel, actor, cluster, action: str, source_ip, *, before=None, **changed
) -> None:
    """Save the channel with its event (what it is now, plus what ``changed`` says); its name is
    unique on the cluster."""
    try:
        recorded.save(
            channel,
            actor=actor,
            action=action,
            cluster=cluster,
            targets=_saved_target,
            before=before,
            after=lambda c: {**describe(c), **changed},
            source_ip=source_ip,
        )
    except IntegrityError as exc:
        raise ChannelInvalid([f"a channel named {channel.name!r} already exists on this cluster"]) from exc


@refused_as(audit_names.CHANNEL_CREATE, ChannelInvalid, targets=_targets)
def create_channel(
    *,
    actor,
    cluster: Cluster,
    name: str,
    kind: str,
    events: list[str],
    enabled: bool = True,
    url: str | None = None,
    recipients: list[str] | None = None,
    secret: str = "",
    source_ip: str | None = None,
) -> tuple[NotificationChannel, str]:
    """A new channel; returns it and, for a webhook, its signing secret (shown this once)."""
    access.require(actor, cluster, access.ADMINISTER)
    name, wanted, cleaned = _clean(
        kind=kind,
        name=name,
        events_=list(events),
        url=url,
        recipients=recipients,
        secret=secret,
        creating=True,
    )
    channel = NotificationChannel(
        cluster=cluster, name=name, kind=kind, enabled=enabled, events=wanted, recipients=cleaned,
        created_by_name=actor.get_username(),
    )  # fmt: skip
    if kind != ChannelKind.EMAIL:
        channel.url_encrypted, channel.url_hint = crypto.encrypt(url), core.url_hint(url)
    if kind == ChannelKind.WEBHOOK:
        secret = secret or secrets.token_urlsafe(32)
        channel.secret_encrypted = crypto.encrypt(secret)
    _save(channel, actor, cluster, audit_names.CHANNEL_CREATE, source_ip)
    return channel, (secret if kind == ChannelKind.WEBHOOK else "")


@refused_as(audit_names.CHANNEL_UPDATE, ChannelInvalid, ChannelNotFound, targets=_targets)
def update_channel(
    *,
    actor,
    cluster: Cluster,
    channel_id: int,
    name: str,
    events: list[str],
    enabled: bool,
    url: str | None = None,
    recipients: list[str] | None = None,
    rotate_secret: bool = False,
    secret: str = "",
    source_ip: str | None = None,
) -> tuple[NotificationChannel, str]:
    """Change a channel (url None or "": keep the stored one); returns it and a new secret if rotated."""
    channel = get_channel(actor=actor, cluster=cluster, channel_id=channel_id)
    url = url or None
    name, wanted, cleaned = _clean(
        kind=channel.kind, name=name, events_=list(events), url=url, recipients=recipients,
        secret=secret, creating=False,
    )  # fmt: skip
    before = describe(channel)
    channel.name, channel.events, channel.enabled = name, wanted, enabled
    if channel.kind == ChannelKind.EMAIL:
        channel.recipients = cleaned
    elif url is not None:
        channel.url_encrypted, channel.url_hint = crypto.encrypt(url), core.url_hint(url)
    new_secret = ""
    if channel.kind == ChannelKind.WEBHOOK and (rotate_secret or secret):
        new_secret = secret or secrets.token_urlsafe(32)
        channel.secret_encrypted = crypto.encrypt(new_secret)
    changed = {"url_changed": url is not None, "signing_key_rotated": bool(new_secret)}
    _save(channel, actor, cluster, audit_names.CHANNEL_UPDATE, source_ip, before=before, **changed)
    return channel, new_secret


@refused_as(audit_names.CHANNEL_DELETE, ChannelNotFound, targets=_targets)
def delete_channel(*, actor, cluster: Cluster, channel_id: int, source_ip: str | None = None) -> None:
    """Remove a channel and its delivery log (pending deliveries are not sent)."""
    channel = get_channel(actor=actor, cluster=cluster, channel_id=channel_id)
    recorded.delete(
        channel,
        actor=actor,
        action=audit_names.CHANNEL_DELETE,
        cluster=cluster,
        targets=_saved_target(channel),
        before=describe(channel),
        source_ip=source_ip,
    )


@refused_as(audit_names.CHANNEL_TEST, ChannelNotFound, targets=_targets)
def send_test(
    *, actor, cluster: Cluster, channel_id: int, source_ip: str | None = None
) -> NotificationDelivery:
    """Queue a test notification to one channel (enabled or not): "requested" now, the outcome when
    the worker has delivered it or given up."""
    channel = get_channel(actor=actor, cluster=cluster, channel_id=channel_id)
    with transaction.atomic():
        requested = audit.record(
            actor=actor,
            action=audit_names.CHANNEL_TEST,
            cluster=cluster,
            targets=_saved_target(channel),
            params={"channel": describe(channel)},
            outcome="requested",
            source_ip=source_ip,
        )
        payload = emitter.payload_for(
            channel,
            events.TEST,
            title=f"Test notification from {actor.get_username()}",
            text=f"Channel '{channel.name}' of cluster '{cluster.name}' works.",
            link=f"/c/{cluster.name}/notifications/",
            details={"channel": channel.name},
        )
        delivery_id = emitter.queue(channel, events.TEST, payload, audit_requested_id=requested.pk)
    return NotificationDelivery.objects.get(pk=delivery_id)


def list_deliveries(
    *, actor, cluster: Cluster, channel_id: int | None = None, limit: int = 100
) -> list[NotificationDelivery]:
    """The newest deliveries of the cluster's channels (or of one), newest first."""
    access.require(actor, cluster, access.ADMINISTER)
    rows = NotificationDelivery.objects.filter(channel__cluster=cluster).select_related("channel")
    if channel_id is not None:
        rows = rows.filter(channel_id=channel_id)
    return list(rows.order_by("-id")[: max(1, min(limit, 1000))])
