"""Requested → outcome, with nothing lost when the database fails in between.

Every change that reaches Kafka first writes its "requested" event together with an OwedOutcome
row (one transaction; if that write fails, Kafka is never called). The outcome event and the
row's deletion are the second transaction. When that one fails (the database is locked or
gone after Kafka acted), the change stays owed: the reconciler (`reconcile`, run by beat and by
``manage.py audit_reconcile``) records it, once older than AUDIT_OUTCOME_GRACE_S, first as
outcome ``unknown`` and then, re-reading Kafka through the area's registered reader, as
``reconciled`` with the state it found. Both are written by the system actor on behalf of the
person who asked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from console import access
from console.audit import store
from console.models import Cluster
from console.models.outcomes import OwedOutcome

log = logging.getLogger(__name__)

# action -> reader(cluster, targets, params) -> {target: state}; filled by the areas' action modules.
Reader = Callable[[Cluster, list[str], Mapping[str, Any]], Mapping[str, Any]]
_READERS: dict[str, Reader] = {}


def register_reader(action: str, reader: Reader) -> None:
    """How the reconciler re-reads Kafka for an owed ``action``."""
    _READERS[action] = reader


class AuditUnavailable(Exception):
    """The "requested" event could not be written, so the change was not sent to Kafka."""


@dataclass(frozen=True)
class Requested:
    """A written "requested" event and the outcome it owes; ``context`` (who, what, where) is what
    the outcome event repeats unless the caller says otherwise."""

    event_id: int
    owed_id: int
    context: dict[str, Any] = field(default_factory=dict)


def requested(
    *,
    actor,
    action: str,
    cluster: Cluster | None,
    targets: Iterable[str],
    params: Mapping[str, Any],
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
    sensitive_keys: Iterable[str] = (),
    operation=None,
) -> Requested:
    """Write the "requested" event and the owed outcome; AuditUnavailable (and nothing reaches Kafka)
    when the database refuses."""
    targets = list(targets)
    try:
        return _requested(
            actor,
            action,
            cluster,
            targets,
            params,
            source_ip,
            on_behalf_of,
            request_id,
            sensitive_keys,
            operation,
        )
    except DatabaseError as exc:
        raise AuditUnavailable(
            f"The audit trail could not be written ({exc}), so nothing was sent to Kafka. "
            "Try again when the console's database is available."
        ) from exc


def _requested(
    actor, action, cluster, targets, params, source_ip, on_behalf_of, request_id, sensitive_keys, operation
) -> Requested:
    with transaction.atomic():
        event = store.record(
            actor=actor,
            action=action,
            cluster=cluster,
            targets=targets,
            params=params,
            outcome="requested",
            source_ip=source_ip,
            on_behalf_of=on_behalf_of,
            request_id=request_id,
            sensitive_keys=sensitive_keys,
            operation=operation,
        )
        owed = OwedOutcome.objects.create(
            requested_event_id=event.pk,
            cluster=cluster,
            cluster_name=getattr(cluster, "name", "") or "",
            action=action,
            targets=targets,
            params=event.params,
            actor_name=event.actor_name,
        )
    context = {
        "actor": actor,
        "action": action,
        "cluster": cluster,
        "source_ip": source_ip,
        "on_behalf_of": on_behalf_of,
        "request_id": request_id,
        "sensitive_keys": sensitive_keys,
        "operation": operation,
    }
    return Requested(event.pk, owed.pk, context)


class _Named(Protocol):
    name: str


def change_outcome(error: _Named | None, *, dry_run: bool) -> dict[str, Any]:
    """A change's entry in its outcome event: ``ok``, the status word every area uses ("valid (dry
    run)", "applied", "failed") and, when it failed, Kafka's error name."""
    ok = error is None
    outcome: dict[str, Any] = {
        "ok": ok,
        "status": ("valid (dry run)" if dry_run else "applied") if ok else "failed",
    }
    if error is not None:
        outcome["error"] = error.name
    return outcome


def settle(req: Requested, **record: Any) -> int | None:
    """Write the outcome event (linked to its request) and drop the debt; None when the database
    refused: the reconciler then records it."""
    ids = settle_all(req, [record])
    return ids[0] if ids else None


def settle_change(
    req: Requested, *, target: str, params: Mapping[str, Any], before: Any, after: Any, error, key: str = ""
) -> int | None:
    """``settle`` for a change to one target: before and after under ``key`` (the target by default),
    after only when Kafka accepted it, and the target's outcome entry from ``error`` (with its message)."""
    key = key or target
    entry = change_outcome(error, dry_run=False)
    if error is not None:
        entry["message"] = getattr(error, "message", "")
    return settle(
        req,
        targets=[target],
        params=params,
        before={key: before},
        after={key: after} if error is None else None,
        outcome="success" if error is None else "failed",
        outcomes={target: entry},
    )


def settle_or_record(req: Requested | None, **record: Any) -> int | None:
    """The outcome event of a change: settled against its "requested" event, or recorded on its own
    when nothing was requested (a dry run, or a change refused before it was sent)."""
    if req is not None:
        return settle(req, **record)
    with transaction.atomic():
        return store.record(**record).pk


def settle_all(req: Requested, records: list[dict[str, Any]]) -> list[int]:
    """``settle`` for a change with several outcome events (all or none are written); each record
    repeats the request's context unless it names those fields itself."""
    records = [{**req.context, **record} for record in records]
    try:
        with transaction.atomic():
            ids = []
            for record in records:
                params = {**dict(record.get("params") or {}), "requested_event": req.event_id}
                ids.append(store.record(**{**record, "params": params}).pk)
            OwedOutcome.objects.filter(pk=req.owed_id).delete()
    except DatabaseError:
        log.exception(
            "audit outcome of event %s (%s) not written; the reconciler will record it",
            req.event_id,
            ", ".join(str(r.get("action")) for r in records),
        )
        return []
    return ids


def _record_unknown(owed: OwedOutcome, system) -> None:
    with transaction.atomic():
        event = store.record(
            actor=system,
            action=owed.action,
            cluster=owed.cluster,
            targets=owed.targets,
            params={
                "requested_event": owed.requested_event_id,
                "reason": "the outcome could not be written when the change ran; Kafka is re-read",
            },
            outcome="unknown",
            on_behalf_of=owed.actor_name,
        )
        OwedOutcome.objects.filter(pk=owed.pk).update(unknown_event_id=event.pk)
    owed.unknown_event_id = event.pk


def _reread(owed: OwedOutcome) -> tuple[Mapping[str, Any] | None, str]:
    reader = _READERS.get(owed.action)
    if owed.cluster is None:
        return None, f"cluster '{owed.cluster_name}' was removed; its state cannot be re-read"
    if reader is None:
        return None, f"no re-reader for {owed.action}"
    return reader(owed.cluster, list(owed.targets), owed.params), ""


def reconcile(*, grace_s: float | None = None, limit: int = 100) -> int:
    """Settle owed outcomes older than the grace period; returns how many were settled."""
    grace = settings.AUDIT_OUTCOME_GRACE_S if grace_s is None else grace_s
    cutoff = timezone.now() - timedelta(seconds=grace)
    settled = 0
    system = None
    for owed in OwedOutcome.objects.filter(created_at__lte=cutoff).select_related("cluster")[:limit]:
        system = system or access.system_actor()
        if owed.unknown_event_id is None:
            _record_unknown(owed, system)
        try:
            state, note = _reread(owed)
        except Exception as exc:  # noqa: BLE001 - Kafka unreachable etc.: kept owed, retried next time
            OwedOutcome.objects.filter(pk=owed.pk).update(last_error=str(exc)[:2000])
            log.warning("re-reading owed outcome %s failed: %s", owed, exc)
            continue
        with transaction.atomic():
            store.record(
                actor=system,
                action=owed.action,
                cluster=owed.cluster,
                targets=owed.targets,
                params={"requested_event": owed.requested_event_id, "note": note},
                after=state,
                outcome="reconciled" if state is not None else "unknown",
                on_behalf_of=owed.actor_name,
            )
            OwedOutcome.objects.filter(pk=owed.pk).delete()
        settled += 1
    return settled
