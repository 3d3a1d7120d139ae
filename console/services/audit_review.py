"""Audit review: search, detail, streamed export and chain status, scoped to what the reader may see.

Writing and full verification live in services/audit.py; this module only reads. Auditors and admins
see the events of the clusters where they hold ``audit.view``; events without a cluster (or of a
removed cluster) are for superusers only, so a viewer never sees the parameters of a cluster they
cannot view.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet

from console.models import AuditChainHead, AuditEvent
from console.services import access, audit

PAGE_SIZE = settings.AUDIT_PAGE_SIZE
EXPORT_CHUNK = settings.AUDIT_EXPORT_CHUNK
SCAN_WINDOW = settings.AUDIT_SCAN_WINDOW
EXPORT_FIELDS = (
    "id",
    "created_at",
    "actor_name",
    "on_behalf_of",
    "source_ip",
    "cluster_name",
    "action",
    "targets",
    "params",
    "before",
    "after",
    "outcomes",
    "outcome",
    "operation_id",
    "request_id",
    "prev_hash",
    "hash",
)
OUTCOMES = ("requested", "success", "partial", "failure", "rejected", "approved")
_CHECKPOINT_KEY = "audit_review:chain_checkpoint"


@dataclass(frozen=True)
class AuditFilter:
    """The reviewer's filter; empty fields match everything."""

    actor: str = ""
    action: str = ""
    cluster: str = ""
    resource: str = ""
    outcome: str = ""
    since: datetime | None = None
    until: datetime | None = None

    def as_params(self) -> dict[str, str]:
        """The filter as query-string values (for export links and pagination)."""
        out = {k: v for k, v in vars(self).items() if v and not isinstance(v, datetime)}
        for key in ("since", "until"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value.isoformat(timespec="minutes")
        return out


def auditable_cluster_ids(user) -> list[int] | None:
    """Cluster ids whose events the user may read; None means every event (superusers)."""
    if getattr(user, "is_superuser", False) and user.is_active:
        return None
    return [c.pk for c in access.visible_clusters(user) if access.can(user, c, access.VIEW_AUDIT)]


def may_review(user) -> bool:
    ids = auditable_cluster_ids(user)
    return ids is None or bool(ids)


def _require_reviewer(user) -> list[int] | None:
    ids = auditable_cluster_ids(user)
    if ids is not None and not ids:
        raise PermissionDenied(f"You need the '{access.VIEW_AUDIT}' permission on at least one cluster.")
    return ids


def _scoped(user) -> QuerySet:
    ids = _require_reviewer(user)
    qs = AuditEvent.objects.all()
    return qs if ids is None else qs.filter(cluster_id__in=ids)


def _filtered(qs: QuerySet, f: AuditFilter) -> QuerySet:
    if f.actor:
        # Approved requests run as the approver on behalf of the requester: either name finds them.
        qs = qs.filter(Q(actor_name=f.actor) | Q(on_behalf_of=f.actor))
    if f.action:
        # "topic" finds topic.create, topic.delete...; a full name matches exactly.
        qs = qs.filter(action=f.action) if "." in f.action else qs.filter(action__startswith=f.action + ".")
    if f.cluster:
        qs = qs.filter(cluster_name=f.cluster)
    if f.resource:
        qs = qs.filter(targets__icontains=f.resource)
    if f.outcome:
        qs = qs.filter(outcome=f.outcome)
    if f.since:
        qs = qs.filter(created_at__gte=f.since)
    if f.until:
        qs = qs.filter(created_at__lt=f.until)
    return qs


@dataclass(frozen=True)
class AuditPage:
    events: list[AuditEvent]
    newer_than: int | None  # pass as ?after= to go one page towards the newest
    older_than: int | None  # pass as ?before= for the next (older) page
    searched: tuple[int, int] | None = None  # (lowest, highest) id scanned when the search was windowed


def filtered_events(*, actor, audit_filter: AuditFilter) -> QuerySet:
    """Every event the actor may see that matches the filter (unordered, unsliced: for export)."""
    return _filtered(_scoped(actor), audit_filter)


LIST_FIELDS = (
    "id",
    "created_at",
    "actor_name",
    "on_behalf_of",
    "cluster_name",
    "action",
    "targets",
    "outcome",
)


def list_queryset(*, actor, audit_filter: AuditFilter, before: int | None = None) -> QuerySet:
    """The first-page query: only the columns the list shows, newest first, one row more than a page."""
    qs = _filtered(_scoped(actor), audit_filter).only(*LIST_FIELDS)
    if before is not None:
        qs = qs.filter(id__lt=before)
    return qs.order_by("-id")[: PAGE_SIZE + 1]


def _window(audit_filter: AuditFilter) -> int | None:
    """Filters no index can answer (resource substring) scan at most this many ids per page."""
    return SCAN_WINDOW if audit_filter.resource else None


def search_events(
    *, actor, audit_filter: AuditFilter, before: int | None = None, after: int | None = None
) -> AuditPage:
    """One page of matching events, newest first, paged by id (no COUNT over millions of rows).

    A resource-name search (a substring of the JSON targets) cannot use an index, so it scans a
    window of SCAN_WINDOW ids per page: the page may hold fewer events than PAGE_SIZE and still
    offer "older", and says which ids it searched.
    """
    window = _window(audit_filter)
    qs = _filtered(_scoped(actor), audit_filter).only(*LIST_FIELDS)
    if after is not None:
        upper = after + window if window else None
        span = qs.filter(id__gt=after) if upper is None else qs.filter(id__gt=after, id__lte=upper)
        rows = list(span.order_by("id")[: PAGE_SIZE + 1])
        events = list(reversed(rows[:PAGE_SIZE]))
        head = _head_id()
        if len(rows) > PAGE_SIZE:
            newer = events[0].pk
        elif upper is not None and upper < head:
            newer = upper
        else:
            newer = None
        older = events[-1].pk if events else after + 1
        searched = (after + 1, min(upper, head)) if upper is not None else None
        return AuditPage(events, newer, older, searched)
    if window is None:
        rows = list(list_queryset(actor=actor, audit_filter=audit_filter, before=before))
        events = rows[:PAGE_SIZE]
        newer = events[0].pk if (events and before is not None) else None
        older = events[-1].pk if len(rows) > PAGE_SIZE else None
        return AuditPage(events, newer, older)
    upper = before if before is not None else _head_id() + 1
    lower = max(1, upper - window)
    rows = list(qs.filter(id__lt=upper, id__gte=lower).order_by("-id")[: PAGE_SIZE + 1])
    events = rows[:PAGE_SIZE]
    if len(rows) > PAGE_SIZE:
        older = events[-1].pk
    else:
        older = lower if lower > 1 else None
    newer = upper - 1 if before is not None else None
    scanned_to = events[-1].pk if len(rows) > PAGE_SIZE else lower
    return AuditPage(events, newer, older, (scanned_to, upper - 1))


def _head_id() -> int:
    head = AuditChainHead.objects.filter(pk=1).values_list("last_id", flat=True).first()
    return head or 0


def get_event(*, actor, event_id: int) -> AuditEvent | None:
    """The event, or None when it does not exist or the reader may not see it."""
    return _scoped(actor).filter(pk=event_id).first()


def diff(before: Any, after: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Changed leaves between two JSON values as rows of {path, change, before, after}."""
    if isinstance(before, dict) and isinstance(after, dict):
        rows: list[dict[str, Any]] = []
        for key in sorted(set(before) | set(after), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in before:
                rows.append({"path": path, "change": "added", "before": None, "after": after[key]})
            elif key not in after:
                rows.append({"path": path, "change": "removed", "before": before[key], "after": None})
            else:
                rows.extend(diff(before[key], after[key], path))
        return rows
    if before == after:
        return []
    change = "added" if before is None else "removed" if after is None else "changed"
    return [{"path": prefix or "(value)", "change": change, "before": before, "after": after}]


def _chunks(qs: QuerySet) -> Iterator[dict[str, Any]]:
    """Rows newest first in id-keyed chunks: constant memory on SQLite and PostgreSQL alike."""
    last: int | None = None
    while True:
        page = qs if last is None else qs.filter(id__lt=last)
        rows = list(page.order_by("-id").values(*EXPORT_FIELDS)[:EXPORT_CHUNK])
        if not rows:
            return
        yield from rows
        last = rows[-1]["id"]


def start_export(*, actor, audit_filter: AuditFilter, fmt: str, source_ip: str | None = None) -> QuerySet:
    """Check the reader, record that the trail was exported (with the filter), return what to stream."""
    qs = _filtered(_scoped(actor), audit_filter)
    with transaction.atomic():
        audit.record(
            actor=actor,
            action="audit.export",
            targets=[f"audit:{fmt}"],
            params={"format": fmt, "filter": audit_filter.as_params()},
            outcome="success",
            source_ip=source_ip,
        )
    return qs


class _Echo:
    def write(self, value: str) -> str:
        return value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    if isinstance(value, datetime):
        return value.isoformat()
    text = str(value)
    # Spreadsheet formula injection: a cell starting with = + - @ is neutralised.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def export_csv(qs: QuerySet) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(EXPORT_FIELDS)
    for row in _chunks(qs):
        yield writer.writerow([_cell(row[f]) for f in EXPORT_FIELDS])


def export_jsonl(qs: QuerySet) -> Iterator[str]:
    for row in _chunks(qs):
        yield json.dumps(row, default=str, ensure_ascii=False, sort_keys=True) + "\n"


@dataclass(frozen=True)
class ChainView:
    """What the audit page shows about the chain."""

    ok: bool
    verified_up_to: int
    head_id: int
    broken_at: int | None = None
    reason: str = ""


def chain_status(*, actor, batch_size: int = 2000) -> ChainView:
    """Verify the chain incrementally from the last verified checkpoint up to the head.

    The checkpoint (id and hash of the last event proven good) lives in the cache; the event at the
    checkpoint is re-hashed each time so editing it is still noticed. `manage.py audit_verify`
    (or `full=True` through `verify_all`) re-walks the whole chain from the genesis hash.
    """
    _require_reviewer(actor)
    head = AuditChainHead.objects.filter(pk=1).first()
    head_id = head.last_id if head else 0
    checkpoint = cache.get(_CHECKPOINT_KEY)
    prev_id, prev_hash = 0, audit.GENESIS_HASH
    if checkpoint:
        anchor = AuditEvent.objects.filter(pk=checkpoint[0]).first()
        if anchor is not None and anchor.hash == checkpoint[1] and anchor.compute_hash() == anchor.hash:
            prev_id, prev_hash = checkpoint
    for event in AuditEvent.objects.filter(id__gt=prev_id).order_by("id").iterator(chunk_size=batch_size):
        if event.prev_hash != prev_hash:
            gap = " (an earlier event is missing)" if event.pk != prev_id + 1 else ""
            reason = f"event {event.pk} does not link to the event before it{gap}"
            return ChainView(False, prev_id, head_id, event.pk, reason)
        if event.compute_hash() != event.hash:
            reason = f"event {event.pk} was edited: its hash does not match its content"
            return ChainView(False, prev_id, head_id, event.pk, reason)
        prev_id, prev_hash = event.pk, event.hash
    cache.set(_CHECKPOINT_KEY, (prev_id, prev_hash), None)
    if head is not None and (head.last_id != prev_id or head.last_hash != prev_hash):
        reason = f"the chain should end at event {head.last_id}, it ends at {prev_id} (events were removed)"
        return ChainView(False, prev_id, head_id, head.last_id, reason)
    return ChainView(True, prev_id, head_id)


def verify_all(*, actor) -> ChainView:
    """A full walk from the genesis hash (forgets the checkpoint first)."""
    _require_reviewer(actor)
    cache.delete(_CHECKPOINT_KEY)
    return chain_status(actor=actor)
