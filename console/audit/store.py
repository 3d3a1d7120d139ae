"""The only writer of the audit trail, and its verifier (DESIGN D6)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from console.kafka import KafkaOperationError
from console.models import AuditChainHead, AuditEvent, AuditTarget
from console.models.audit import TARGET_MAX

GENESIS_HASH = "0" * 64
ARCHIVE_ACTION = "audit.archive"
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


def result_outcome(value: Any) -> dict[str, Any]:
    """One resource's gateway result as an audit outcome: ``{"ok": True}`` or the error's name and text."""
    if isinstance(value, KafkaOperationError):
        return {"ok": False, "error": value.name, "message": value.operator_text}
    return {"ok": True}


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
    # The resource index: one row per distinct target, in the same transaction as the event.
    names = dict.fromkeys(str(t)[:TARGET_MAX] for t in event.targets)
    AuditTarget.objects.bulk_create(
        AuditTarget(event_id=event.pk, target=t, name=AuditTarget.name_of(t)) for t in names
    )
    head.last_id = event.pk
    head.last_hash = event.hash
    head.save(update_fields=["last_id", "last_hash"])
    return event


@dataclass(frozen=True)
class ChainStatus:
    ok: bool
    verified_up_to: int  # id of the last event whose link and hash hold (the anchor if none)
    count: int
    broken_at: int | None = None
    reason: str = ""
    archived_up_to: int = 0  # events up to this id were archived (audit_archive); 0 when none were


@dataclass(frozen=True)
class _Walk:
    ok: bool
    last_id: int
    last_hash: str
    count: int
    broken_at: int | None = None
    reason: str = ""


def walk(
    start_id: int,
    start_hash: str,
    *,
    batch_size: int = 2000,
    progress: Callable[[int, int], None] | None = None,
) -> _Walk:
    """Check every event after start_id: it links to the one before and its hash matches its content.

    progress(count, last_id) is called after each batch of events (for a worker's heartbeat).
    """
    prev_id, prev_hash, count = start_id, start_hash, 0
    qs = AuditEvent.objects.filter(id__gt=start_id).order_by("id")
    for event in qs.iterator(chunk_size=batch_size):
        if event.prev_hash != prev_hash:
            gap = " (an earlier event is missing)" if event.pk != prev_id + 1 else ""
            reason = f"event {event.pk} does not link to the event before it{gap}"
            return _Walk(False, prev_id, prev_hash, count, event.pk, reason)
        if event.compute_hash() != event.hash:
            reason = f"event {event.pk} was edited: its hash does not match its content"
            return _Walk(False, prev_id, prev_hash, count, event.pk, reason)
        prev_id, prev_hash = event.pk, event.hash
        count += 1
        if progress is not None and count % batch_size == 0:
            progress(count, prev_id)
    if progress is not None:
        progress(count, prev_id)
    return _Walk(True, prev_id, prev_hash, count)


def head_problem(head: AuditChainHead | None, last_id: int, last_hash: str) -> tuple[int, str] | None:
    """After a clean walk: (event id, reason) when the head or the archive anchor disagree with it."""
    if head is None:
        return None
    if head.last_id != last_id or head.last_hash != last_hash:
        return head.last_id, (
            f"the chain should end at event {head.last_id}, it ends at {last_id} (events were removed)"
        )
    if head.anchor_id:
        # The anchor is only trusted when the newest archive event (chained, so unforgeable) names it.
        archive = (
            AuditEvent.objects.filter(action=ARCHIVE_ACTION, id__gt=head.anchor_id).order_by("-id").first()
        )
        named = archive.params.get("anchor") if archive is not None else None
        if named != {"id": head.anchor_id, "hash": head.anchor_hash}:
            return head.anchor_id, (
                f"the archive anchor at event {head.anchor_id} is not the one an audit.archive event recorded"
            )
    return None


def chain_start(head: AuditChainHead | None) -> tuple[int, str]:
    """Where verification begins: the archive anchor, or the genesis hash."""
    if head is None or not head.anchor_id:
        return 0, GENESIS_HASH
    return head.anchor_id, head.anchor_hash


def verify_chain(batch_size: int = 2000, progress: Callable[[int, int], None] | None = None) -> ChainStatus:
    """Recompute every kept hash in id order from the archive anchor; name the first broken event."""
    head = AuditChainHead.objects.filter(pk=1).first()
    start_id, start_hash = chain_start(head)
    archived = start_id
    result = walk(start_id, start_hash, batch_size=batch_size, progress=progress)
    if not result.ok:
        return ChainStatus(False, result.last_id, result.count, result.broken_at, result.reason, archived)
    problem = head_problem(head, result.last_id, result.last_hash)
    if problem is not None:
        return ChainStatus(False, result.last_id, result.count, problem[0], problem[1], archived)
    return ChainStatus(True, result.last_id, result.count, archived_up_to=archived)


class AuditArchiveError(Exception):
    """The archive was refused (nothing to archive, a broken chain, an existing output file)."""


@dataclass(frozen=True)
class ArchiveResult:
    first_id: int
    last_id: int  # the new anchor
    count: int
    anchor_hash: str
    path: str
    sha256: str
    event: AuditEvent  # the audit.archive event


def _archive_cut(start_id: int, before_id: int | None, before_time: datetime | None) -> int:
    qs = AuditEvent.objects.filter(id__gt=start_id)
    if before_id is not None:
        qs = qs.filter(id__lt=before_id)
    if before_time is not None:
        qs = qs.filter(created_at__lt=before_time)
    cut = qs.order_by("-id").values_list("id", flat=True).first()
    if cut is None:
        raise AuditArchiveError("No events to archive before that point (older ones are already archived).")
    return cut


def _write_archive(path: Path, start_id: int, start_hash: str, cut: int) -> tuple[int, str, str]:
    """Write events start_id+1..cut as JSON Lines (payload and hash), checking the chain as it goes.

    Returns (count, hash of the last event, sha256 of the file). The file appears only when complete.
    """
    tmp = path.with_name(path.name + ".partial")
    digest = hashlib.sha256()
    prev_id, prev_hash, count = start_id, start_hash, 0
    try:
        with tmp.open("x", encoding="utf-8") as out:
            qs = AuditEvent.objects.filter(id__gt=start_id, id__lte=cut).order_by("id")
            for event in qs.iterator(chunk_size=2000):
                if (
                    event.prev_hash != prev_hash
                    or event.pk != prev_id + 1
                    or event.compute_hash() != event.hash
                ):
                    raise AuditArchiveError(
                        f"The chain is broken at event {event.pk}; archiving is refused (run audit_verify)."
                    )
                line = json.dumps({**event.payload(), "hash": event.hash}, sort_keys=True, default=str) + "\n"
                out.write(line)
                digest.update(line.encode())
                prev_id, prev_hash, count = event.pk, event.hash, count + 1
            out.flush()
            os.fsync(out.fileno())
        if prev_id != cut:
            raise AuditArchiveError(f"Events {prev_id + 1} to {cut} are missing; archiving is refused.")
        tmp.rename(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count, prev_hash, digest.hexdigest()


def archive_events(
    *, out: str | os.PathLike, before_id: int | None = None, before_time: datetime | None = None, actor=None
) -> ArchiveResult:
    """Retention: export the oldest events to JSON Lines, then delete them and move the anchor.

    The file is written (and synced) before anything is deleted. The deletion, the new anchor on the
    chain head and the audit.archive event (which names the anchor, so it cannot be moved silently)
    are one transaction. Events are never edited; this is the only way out of the trail.
    """
    if before_id is None and before_time is None:
        raise AuditArchiveError("Say which events to archive: before an event id or a date.")
    path = Path(out)
    if path.exists():
        raise AuditArchiveError(f"{path} exists; archives are never overwritten.")
    head = AuditChainHead.objects.filter(pk=1).first()
    start_id, start_hash = chain_start(head)
    cut = _archive_cut(start_id, before_id, before_time)
    count, anchor_hash, sha = _write_archive(path, start_id, start_hash, cut)
    with transaction.atomic():
        locked = AuditChainHead.objects.select_for_update().get(pk=1)
        if chain_start(locked) != (start_id, start_hash):
            raise AuditArchiveError("Another archive ran meanwhile; nothing was deleted. Run it again.")
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {AuditTarget._meta.db_table} WHERE event_id <= %s", [cut])
            cursor.execute(f"DELETE FROM {AuditEvent._meta.db_table} WHERE id <= %s", [cut])
        AuditChainHead.objects.filter(pk=1).update(anchor_id=cut, anchor_hash=anchor_hash)
        event = record(
            actor=actor,
            action=ARCHIVE_ACTION,
            targets=["audit:trail"],
            params={
                "anchor": {"id": cut, "hash": anchor_hash},
                "first_id": start_id + 1,
                "count": count,
                "file": path.name,
                "sha256": sha,
            },
            outcome="success",
        )
    return ArchiveResult(start_id + 1, cut, count, anchor_hash, str(path), sha, event)
