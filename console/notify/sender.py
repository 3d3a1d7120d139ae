"""Sending one delivery: an HTTP POST with `requests` (webhook, Slack) or Django's mail backend (e-mail).

Every call is bounded by NOTIFY_TIMEOUT_S (connect and each read), never follows a redirect (a 3xx
counts as a failed attempt: a webhook must not be bounced to another host), reads at most a few
hundred bytes of the answer, and reports errors without the URL's path or query (they may carry a token).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import requests
from django.conf import settings
from django.core.mail import EmailMessage, get_connection

from console import crypto
from console.models.notify import ChannelKind, NotificationDelivery
from console.notify import core

ANSWER_MAX = 300
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
    timeout = float(settings.NOTIFY_TIMEOUT_S)
    try:
        with requests.Session() as session:
            resp = session.post(
                url,
                data=body,
                headers=headers,
                timeout=(timeout, timeout),
                allow_redirects=False,
                stream=True,
            )
            with resp:
                answer = next(resp.iter_content(ANSWER_MAX), b"")[:ANSWER_MAX].decode(errors="replace")
    except requests.RequestException as exc:
        return Sent(False, None, core.scrub(f"{type(exc).__name__}: {exc}", url)[:2000])
    if 200 <= resp.status_code < 300:
        return Sent(True, resp.status_code)
    if 300 <= resp.status_code < 400:
        where = core.url_hint(resp.headers.get("Location", "")) if resp.headers.get("Location") else "?"
        return Sent(False, resp.status_code, f"HTTP {resp.status_code}: redirect to {where} not followed")
    return Sent(False, resp.status_code, core.scrub(f"HTTP {resp.status_code}: {answer}".strip(), url))


def _email(delivery: NotificationDelivery) -> Sent:
    channel, p = delivery.channel, delivery.payload
    recipients = list(channel.recipients or [])
    if not recipients:
        return Sent(False, None, "the channel has no recipients")
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
