"""emit(): one delivery row per subscribed channel, handed to a worker when the caller's transaction commits.

It never raises into its caller and never waits on a network: the caller's action has happened (or is
about to commit) whatever becomes of its notifications. Rows are written in a savepoint of the caller's
transaction, so a rolled-back action leaves no delivery behind and a failing insert leaves the
caller's transaction usable.
"""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from console.models import Cluster
from console.models.notify import DeliveryState, NotificationChannel, NotificationDelivery
from console.notify import events

log = logging.getLogger(__name__)
TITLE_MAX = 300
TEXT_MAX = 4000
KEY_MAX = 200


def dispatch(delivery_id: int, *, countdown: float | None = None) -> None:
    """Hand a delivery to a worker (settings.NOTIFY_DISPATCHER); a queue that is down is logged, and
    beat's notify tick sends the delivery when it is due."""
    try:
        import_string(settings.NOTIFY_DISPATCHER)(delivery_id, countdown=countdown)
    except Exception as exc:  # noqa: BLE001 - the queue being down must not fail anybody
        log.warning("could not enqueue notification delivery %s (%s); beat will send it", delivery_id, exc)


def _dispatch_all(ids: list[int]) -> None:
    for delivery_id in ids:
        dispatch(delivery_id)


def absolute(link: str | None) -> str | None:
    if not link:
        return None
    if link.startswith("/") and settings.CONSOLE_BASE_URL:
        return settings.CONSOLE_BASE_URL + link
    return link


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _subscribed(cluster: Cluster | None, event: str) -> list[NotificationChannel]:
    channels = NotificationChannel.objects.filter(enabled=True).select_related("cluster")
    if cluster is not None:
        channels = channels.filter(cluster=cluster)
    return [c for c in channels if event in (c.events or [])]


def payload_for(
    channel: NotificationChannel, event: str, *, title: str, text: str, link, details, cluster_name: str = ""
) -> dict[str, Any]:
    return {
        "event": event,
        "event_label": events.label(event),
        "cluster": cluster_name or channel.cluster.name,
        "title": title[:TITLE_MAX],
        "text": text[:TEXT_MAX],
        "link": absolute(link),
        "details": _plain(details or {}),
        "occurred_at": timezone.now().isoformat(),
    }


def queue(channel: NotificationChannel, event: str, payload: dict, *, key: str = "", **extra) -> int:
    """Inside a transaction: one delivery row, sent once the transaction commits."""
    delivery = NotificationDelivery.objects.create(
        channel=channel,
        event=event,
        title=payload["title"],
        payload=payload,
        dedupe_key=key[:KEY_MAX],
        state=DeliveryState.PENDING,
        next_attempt_at=timezone.now(),
        **extra,
    )
    transaction.on_commit(partial(_dispatch_all, [delivery.pk]), robust=True)
    return delivery.pk


def emit(
    cluster: Cluster | None,
    event: str,
    *,
    title: str,
    text: str,
    link: str | None = None,
    details: dict | None = None,
    key: str = "",
) -> int:
    """Queue event for every enabled channel of cluster subscribed to it (cluster None: every
    cluster's channels, for console-wide events such as a broken audit chain). With a key, a channel
    that already has a delivery of this event with that key gets no second one (a janitor seeing the
    same leftovers every sweep). Returns how many deliveries were queued; never raises."""
    try:
        with transaction.atomic():
            queued = 0
            for channel in _subscribed(cluster, event):
                if (
                    key
                    and NotificationDelivery.objects.filter(
                        channel=channel, event=event, dedupe_key=key[:KEY_MAX]
                    ).exists()
                ):
                    continue
                payload = payload_for(channel, event, title=title, text=text, link=link, details=details)
                queue(channel, event, payload, key=key)
                queued += 1
            return queued
    except Exception as exc:  # noqa: BLE001 - a notification never breaks the action that caused it
        log.warning("notification %s for cluster %s not queued: %s", event, cluster, exc)
        return 0


def operation_ended(op, state: str, error: str = "", result: dict | None = None) -> int:
    """The runner's hook, inside the transaction that ends an operation: its events, if any."""
    try:
        found = events.for_operation_end(op.kind, state)
        if not found:
            return 0
        link = f"/operations/{op.pk}/"
        details = {"operation": op.pk, "kind": op.kind, "state": state, "error": error or ""}
        if result:
            details["result"] = {
                k: v for k, v in result.items() if k in ("outcome", "partitions", "bytes_moved")
            }
        cluster_name = op.cluster.name if op.cluster_id else "no cluster"
        title = f"{op.kind} #{op.pk} {state} on {cluster_name}"
        text = error or f"Operation #{op.pk} ({op.kind}) ended {state}."
        return sum(
            emit(op.cluster, event, title=title, text=text, link=link, details=details) for event in found
        )
    except Exception as exc:  # noqa: BLE001
        log.warning("notification of the end of operation %s not queued: %s", getattr(op, "pk", "?"), exc)
        return 0
