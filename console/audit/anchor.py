"""Anchors for an external witness: the chain's head (id, hash, time) saved outside the database.

The keyed hashes stop anyone without AUDIT_HMAC_KEY from rewriting events, but removing the newest
events together with the head leaves a shorter chain that still verifies. An anchor written by
``manage.py audit_anchor`` (to a file, or stdout for a log shipper or another machine) catches that:
``manage.py audit_verify --anchor FILE`` fails unless the chain still holds the anchored event with the
anchored hash. Because every later event links back to it and each hash is keyed, "still holds" also
means nothing up to the anchor was rewritten.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from console.audit.store import GENESIS_HASH, chain_start
from console.models import AuditChainHead, AuditEvent


class AnchorError(Exception):
    """The anchor file cannot be read as an anchor."""


def head_anchor() -> dict[str, Any]:
    """The head as an anchor: {"id", "hash", "time" (the event's), "anchored_at"}; id 0 for an empty chain."""
    head = AuditChainHead.objects.filter(pk=1).first()
    last_id, last_hash = (head.last_id, head.last_hash) if head else (0, GENESIS_HASH)
    created = AuditEvent.objects.filter(pk=last_id).values_list("created_at", flat=True).first()
    return {
        "id": last_id,
        "hash": last_hash,
        "time": created.isoformat() if created else None,
        "anchored_at": timezone.now().isoformat(),
    }


def parse_anchor(text: str) -> tuple[int, str]:
    """(id, hash) from an anchor's JSON text."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise AnchorError(f"not JSON ({exc})") from exc
    if not isinstance(data, Mapping):
        raise AnchorError("not a JSON object with id and hash")
    anchor_id, anchor_hash = data.get("id"), data.get("hash")
    if not isinstance(anchor_id, int) or isinstance(anchor_id, bool) or anchor_id < 0:
        raise AnchorError("its id is not an event id")
    if not isinstance(anchor_hash, str) or len(anchor_hash) != 64:
        raise AnchorError("its hash is not a 64-character hex hash")
    return anchor_id, anchor_hash


def anchor_problem(anchor_id: int, anchor_hash: str) -> tuple[str, str]:
    """("", note) when the chain still holds the anchored event with that hash; (reason, "") when not.

    An anchor older than the archive anchor can only be checked against the archive files (the note
    says so); the archive anchor itself is vouched for by the keyed audit.archive event.
    """
    head = AuditChainHead.objects.filter(pk=1).first()
    start_id, start_hash = chain_start(head)
    last_id = head.last_id if head else 0
    if anchor_id == 0:
        return ("", "") if anchor_hash == GENESIS_HASH else ("event 0 can only have the genesis hash", "")
    if anchor_id < start_id:
        return "", (
            f"event {anchor_id} was archived (archived up to event {start_id}); compare the anchor with the "
            "archive files"
        )
    if anchor_id == start_id:
        found = start_hash  # the archive anchor, vouched for by the keyed audit.archive event
    else:
        found = AuditEvent.objects.filter(pk=anchor_id).values_list("hash", flat=True).first()
    if found is None and anchor_id > last_id:
        return (
            f"the chain ends at event {last_id}, before the anchored event {anchor_id}: "
            "the newest events were removed (truncated)"
        ), ""
    if found is None:
        return f"the anchored event {anchor_id} is missing from the chain", ""
    if found != anchor_hash:
        return (
            f"event {anchor_id} does not have the anchored hash: events from there on were removed and "
            "replaced, or rewritten"
        ), ""
    return "", ""
