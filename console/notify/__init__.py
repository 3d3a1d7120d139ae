"""Notifications: per-cluster channels (signed webhook, Slack-compatible webhook, e-mail) and their deliveries.

``emit(cluster, event, *, title, text, link=None, details=None, key="")`` is what other areas call:
it writes one delivery row per subscribed channel in a savepoint of the caller's transaction, hands
them to a worker when it commits, and never raises. ``events`` names what can be subscribed to
(``events.BREAK_GLASS``, …). ``core`` is pure (the webhook signature and how a receiver verifies it,
the bodies, URL, address and e-mail domain checks); ``emitter`` queues; ``sender`` sends one delivery
(``egress``, the only HTTP client, which sends to public or operator-allowed addresses only / Django mail);
``worker`` claims, sends, retries with backoff and gives up (the Celery task and beat tick in
tasks/notify.py call it); ``actions`` is the admins' channel management, test send and delivery log.
"""

from __future__ import annotations

from console.notify import events
from console.notify.emitter import emit, operation_ended

__all__ = ["actions", "core", "egress", "emit", "emitter", "events", "operation_ended", "sender", "worker"]
