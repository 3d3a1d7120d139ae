"""Streamed audit export (CSV or JSON Lines) of what a reader may see, recorded as an audit event."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from console.audit import audit_names
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.audit.review import AuditFilter, _filtered, _scoped

EXPORT_CHUNK = settings.AUDIT_EXPORT_CHUNK
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


@refused_as(audit_names.EXPORT)
def start_export(*, actor, audit_filter: AuditFilter, fmt: str, source_ip: str | None = None) -> QuerySet:
    """Check the reader, record that the trail was exported (with the filter), return what to stream."""
    qs = _filtered(_scoped(actor), audit_filter)
    with transaction.atomic():
        audit.record(
            actor=actor,
            action=audit_names.EXPORT,
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
