"""Retention: export the oldest audit events to JSON Lines, then prune them behind an anchor (DESIGN D6)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.db import connection, transaction

from console.audit import audit_names
from console.audit.store import chain_start, expected_hash, legacy_cutover, record
from console.models import AuditChainHead, AuditEvent, AuditTarget


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
    legacy_up_to = legacy_cutover(start_id)
    digest = hashlib.sha256()
    prev_id, prev_hash, count = start_id, start_hash, 0
    try:
        with tmp.open("x", encoding="utf-8") as out:
            qs = AuditEvent.objects.filter(id__gt=start_id, id__lte=cut).order_by("id")
            for event in qs.iterator(chunk_size=2000):
                if (
                    event.prev_hash != prev_hash
                    or event.pk != prev_id + 1
                    or not hmac.compare_digest(expected_hash(event, legacy_up_to), event.hash)
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
            action=audit_names.ARCHIVE,
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
