"""Sending one delivery: an HTTP POST through ``egress`` (webhook, Slack) or Django's mail backend (e-mail).

Every call is bounded by NOTIFY_TIMEOUT_S (connect and each read). The POST goes only to an address
``egress`` allows, never follows a redirect (a 3xx counts as a failed attempt: a webhook must not be
bounced to another host) and never reads the answer: an error is a class of failure or "HTTP <status>",
never the receiver's words, nor the URL's path or query (they may carry a token). An e-mail goes only
when every recipient is in a domain NOTIFY_EMAIL_DOMAINS allows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMessage, get_connection

from console import crypto
from console.models.notify import ChannelKind, NotificationDelivery
from console.notify import core, egress

USER_AGENT = "kafka-operator-console-notify/1"


@dataclass(frozen=True)
class Sent:
    ok: bool
    status: int | None = None
    error: str = ""


def send(delivery: NotificationDelivery) -> Sent:
    channel = delivery.channel
    try:
        if channel.kind == ChannelKind.EMAIL:
            return _email(delivery)
        url = crypto.decrypt(channel.url_encrypted)
    except crypto.SecretUnreadable:
        return Sent(False, None, "the stored URL cannot be decrypted with any key; enter it again")
    except Exception as exc:  # noqa: BLE001 - the mail backend's errors vary by backend
        return Sent(False, None, f"{type(exc).__name__}: {exc}"[:2000])
    if channel.kind == ChannelKind.SLACK:
        p = delivery.payload
        body = core.webhook_body(
            core.slack_body(
                title=p["title"], text=p.get("text", ""), link=p.get("link"), cluster=p["cluster"]
            )
        )
        headers = {}
    else:
        body = core.webhook_body({"id": delivery.pk, **delivery.payload})
        secret = crypto.decrypt(channel.secret_encrypted) if channel.secret_encrypted else ""
        headers = {
            core.SIGNATURE_HEADER: core.signature_header(secret, int(time.time()), body),
            core.EVENT_HEADER: delivery.event,
            core.DELIVERY_HEADER: str(delivery.pk),
        }
    return _post(url, body, headers)


def _post(url: str, body: bytes, headers: dict[str, str]) -> Sent:
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers}
    answer = egress.post(url, body, headers, timeout=float(settings.NOTIFY_TIMEOUT_S))
    if answer.status is None:
        return Sent(False, None, answer.error)
    if 200 <= answer.status < 300:
        return Sent(True, answer.status)
    if 300 <= answer.status < 400:
        return Sent(False, answer.status, f"HTTP {answer.status}: redirect not followed")
    return Sent(False, answer.status, f"HTTP {answer.status}")


def _email(delivery: NotificationDelivery) -> Sent:
    channel, p = delivery.channel, delivery.payload
    recipients = list(channel.recipients or [])
    if not recipients:
        return Sent(False, None, "the channel has no recipients")
    if refused := core.recipients_refused(recipients, settings.NOTIFY_EMAIL_DOMAINS):
        return Sent(False, None, f"recipient domain not allowed (NOTIFY_EMAIL_DOMAINS): {', '.join(refused)}")
    message = EmailMessage(
        subject=f"[Kafka console] [{p['cluster']}] {p['title']}"[:250],
        body=core.email_body(
            title=p["title"],
            text=p.get("text", ""),
            link=p.get("link"),
            cluster=p["cluster"],
            event_label=p.get("event_label", delivery.event),
        ),
        from_email=settings.NOTIFY_EMAIL_FROM,
        to=recipients,
        connection=get_connection(fail_silently=False, timeout=float(settings.NOTIFY_TIMEOUT_S)),
        headers={core.EVENT_HEADER: delivery.event, core.DELIVERY_HEADER: str(delivery.pk)},
    )
    message.send(fail_silently=False)
    return Sent(True)
