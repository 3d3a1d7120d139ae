"""The delivery worker: claim a due delivery (conditional UPDATE), send it, record the attempt, retry later.

``deliver(id)`` is what the Celery task (tasks/notify.py) calls; beat's notify tick calls
``deliver_due()`` for retries whose backoff is over, deliveries whose task never arrived (queue down)
and sends whose worker died (taken longer than ``stale_after_s()`` ago). Each claim counts an
attempt, so a delivery ends "failed" after NOTIFY_MAX_ATTEMPTS whatever kills its sends.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from console.audit import store as audit
from console.models import AuditEvent
from console.models.notify import DeliveryState, NotificationDelivery
from console.notify import audit_names, core, emitter, sender

log = logging.getLogger(__name__)


def stale_after_s() -> float:
    """A send taken this long ago belongs to a dead worker: a live one is bounded by its timeouts."""
    return max(60.0, 6 * float(settings.NOTIFY_TIMEOUT_S))


def _claimable(now):
    due = Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    stale = now - timedelta(seconds=stale_after_s())
    return (Q(state=DeliveryState.PENDING) & due) | Q(state=DeliveryState.SENDING, taken_at__lt=stale)


def claim(delivery_id: int, *, worker: str) -> bool:
    now = timezone.now()
    return bool(
        NotificationDelivery.objects.filter(_claimable(now), pk=delivery_id).update(
            state=DeliveryState.SENDING, taken_by=worker, taken_at=now, attempts=F("attempts") + 1
        )
    )


def deliver(delivery_id: int, *, worker: str) -> NotificationDelivery | None:
    """One attempt at one delivery; None when it is not due or another worker holds it."""
    if not claim(delivery_id, worker=worker):
        return None
    delivery = NotificationDelivery.objects.select_related("channel__cluster").get(pk=delivery_id)
    if not delivery.channel.enabled and delivery.audit_requested_id is None:
        result = sender.Sent(False, None, "the channel was disabled before the delivery was sent")
        final = True
    else:
        try:
            result = sender.send(delivery)
        except Exception as exc:  # noqa: BLE001 - whatever went wrong is this attempt's error
            result = sender.Sent(False, None, f"{type(exc).__name__}: {exc}"[:2000])
        final = result.ok or delivery.attempts >= settings.NOTIFY_MAX_ATTEMPTS
    return _record(delivery, worker, result, final)


def _record(delivery: NotificationDelivery, worker: str, result: sender.Sent, final: bool):
    now = timezone.now()
    fields = {"taken_by": "", "last_status": result.status, "last_error": result.error[:4000]}
    delay = None
    if final:
        state = DeliveryState.DELIVERED if result.ok else DeliveryState.FAILED
        fields.update(state=state, finished_at=now, next_attempt_at=None)
    else:
        delay = core.backoff_s(
            delivery.attempts, float(settings.NOTIFY_BACKOFF_S), float(settings.NOTIFY_BACKOFF_MAX_S)
        )
        fields.update(state=DeliveryState.PENDING, next_attempt_at=now + timedelta(seconds=delay))
    with transaction.atomic():
        mine = NotificationDelivery.objects.filter(
            pk=delivery.pk, state=DeliveryState.SENDING, taken_by=worker
        ).update(**fields)
        if not mine:  # retaken as stale while this send was slow: the other worker records its own
            return None
        if final and delivery.audit_requested_id is not None:
            _audit_test_outcome(delivery, result)
    if delay is not None:
        log.info(
            "delivery %s attempt %s failed (%s); retrying in %.0f s",
            delivery.pk,
            delivery.attempts,
            result.error,
            delay,
        )
        emitter.dispatch(delivery.pk, countdown=delay)
    return NotificationDelivery.objects.get(pk=delivery.pk)


def _audit_test_outcome(delivery: NotificationDelivery, result: sender.Sent) -> None:
    """A test send's outcome event, naming its "requested" event and acting as whoever pressed the button."""
    requested = (
        AuditEvent.objects.filter(pk=delivery.audit_requested_id).only("actor_id", "actor_name").first()
    )
    actor = None
    if requested is not None and requested.actor_id:
        actor = get_user_model().objects.filter(pk=requested.actor_id).first()
    channel = delivery.channel
    audit.record(
        actor=actor,
        action=audit_names.CHANNEL_TEST,
        cluster=channel.cluster,
        targets=[f"notify-channel:{channel.pk}"],
        params={
            "requested_event": delivery.audit_requested_id,
            "delivery": delivery.pk,
            "attempts": delivery.attempts,
            "http_status": result.status,
            "error": result.error[:500],
        },
        outcome="success" if result.ok else "failure",
        request_id=f"notify-test-{delivery.pk}",
    )


def due_ids(limit: int = 500) -> list[int]:
    return list(
        NotificationDelivery.objects.filter(_claimable(timezone.now()))
        .order_by("next_attempt_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )


def deliver_due(*, worker: str) -> list[int]:
    """Beat's notify tick: one attempt at every due delivery; returns the ids attempted."""
    sent = []
    for delivery_id in due_ids():
        try:
            if deliver(delivery_id, worker=worker) is not None:
                sent.append(delivery_id)
        except Exception as exc:  # noqa: BLE001 - one delivery's trouble never stops the others
            log.warning("notify tick: delivery %s: %s", delivery_id, exc)
    return sent
