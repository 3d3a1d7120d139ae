"""The only writer of the audit trail, and its verifier (DESIGN D6)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from console.models import AuditChainHead, AuditEvent

GENESIS_HASH = "0" * 64
MASK = "******"
# Keys whose values never reach the trail (KIP-133: sensitive values are never returned or logged).
_SECRET_KEY = re.compile(r"(password|secret|token|sasl\.jaas|ssl\.key|credential|private)", re.IGNORECASE)


def mask_secrets(value: Any, sensitive_keys: Iterable[str] = ()) -> Any:
    """A copy of value with secret-looking keys (and the listed sensitive config names) masked."""
    extra = set(sensitive_keys)
    if isinstance(value, Mapping):
        return {
            k: (
                MASK
                if (isinstance(k, str) and (_SECRET_KEY.search(k) or k in extra))
                else mask_secrets(v, extra)
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [mask_secrets(v, extra) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    """What the JSON column will give back, so the hash computed now matches the one verified later."""
    return json.loads(json.dumps(value, default=str))


def _overall(outcomes: Mapping[str, Any]) -> str:
    if not outcomes:
        return "success"
    oks = [bool(o.get("ok")) if isinstance(o, Mapping) else bool(o) for o in outcomes.values()]
    if all(oks):
        return "success"
    return "failure" if not any(oks) else "partial"


def record(
    *,
    actor,
    action: str,
    cluster=None,
    targets: Iterable[str] = (),
    params: Mapping[str, Any] | None = None,
    before: Any = None,
    after: Any = None,
    outcomes: Mapping[str, Any] | None = None,
    outcome: str | None = None,
    operation=None,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
    sensitive_keys: Iterable[str] = (),
) -> AuditEvent:
    """Append one event to the chain. Must run inside the caller's transaction.atomic()."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.record() must run inside the transaction of the change it records")
    head, _ = AuditChainHead.objects.select_for_update().get_or_create(pk=1)
    outcomes = dict(outcomes or {})
    event = AuditEvent(
        created_at=timezone.now(),
        actor_id=getattr(actor, "pk", None),
        actor_name=getattr(actor, "get_username", lambda: str(actor or "system"))() if actor else "system",
        on_behalf_of=on_behalf_of,
        source_ip=source_ip,
        cluster_id=getattr(cluster, "pk", None),
        cluster_name=getattr(cluster, "name", "") or "",
        action=action,
        targets=list(targets),
        params=_jsonable(mask_secrets(dict(params or {}), sensitive_keys)),
        before=_jsonable(mask_secrets(before, sensitive_keys)),
        after=_jsonable(mask_secrets(after, sensitive_keys)),
        outcomes=_jsonable(mask_secrets(outcomes, sensitive_keys)),
        outcome=outcome or _overall(outcomes),
        operation_id=getattr(operation, "pk", operation),
        request_id=request_id,
        prev_hash=head.last_hash,
    )
    # Ids are assigned here, under the chain lock, so the hash can cover the id itself.
    event.pk = head.last_id + 1
    event.hash = event.compute_hash()
    event.save(force_insert=True)
    head.last_id = event.pk
    head.last_hash = event.hash
    head.save(update_fields=["last_id", "last_hash"])
    return event


@dataclass(frozen=True)
class ChainStatus:
    ok: bool
    verified_up_to: int  # id of the last event whose link and hash hold (0 if none)
    count: int
    broken_at: int | None = None
    reason: str = ""


def verify_chain(batch_size: int = 2000) -> ChainStatus:
    """Recompute every hash in id order; name the first event whose link or content is broken."""
    prev_hash = GENESIS_HASH
    prev_id = 0
    count = 0
    qs = AuditEvent.objects.order_by("id")
    for event in qs.iterator(chunk_size=batch_size):
        if event.prev_hash != prev_hash:
            gap = " (an earlier event is missing)" if event.pk != prev_id + 1 else ""
            return ChainStatus(
                False, prev_id, count, event.pk, f"event {event.pk} does not link to the event before it{gap}"
            )
        if event.compute_hash() != event.hash:
            return ChainStatus(
                False,
                prev_id,
                count,
                event.pk,
                f"event {event.pk} was edited: its hash does not match its content",
            )
        prev_hash, prev_id = event.hash, event.pk
        count += 1
    head = AuditChainHead.objects.filter(pk=1).first()
    if head is not None and (head.last_id != prev_id or head.last_hash != prev_hash):
        return ChainStatus(
            False,
            prev_id,
            count,
            head.last_id,
            f"the chain should end at event {head.last_id}, it ends at {prev_id} (events were removed)",
        )
    return ChainStatus(True, prev_id, count)
