"""The keyed verified-up-to marker: how far the whole chain was verified, and what it looked like then.

A full walk (``store.walk``) recomputes every event's HMAC, which costs far more than reading the rows.
So that the audit page can still check the *whole* chain on every load, a successful walk leaves a
marker on the chain head: the chain start it walked from, the last event (id, hash), the number of
events, and a running SHA-256 digest over every column of every row it verified (``row_sql()``: each
value length-prefixed, so no edit can move bytes between columns unnoticed). The marker is signed with
HMAC-SHA256 under AUDIT_HMAC_KEY; without the key it cannot be forged, and a marker that does not verify
is ignored (the page then walks everything and says so).

On the next check the rows up to the marker are only read and digested (no JSON, no HMAC; about four
times cheaper than the walk): if the digest, count and last id match, every one of those rows is byte for
byte what was verified, and only the events after the marker are walked. Any edit, deletion or insertion
among the old rows changes the digest, and the check falls back to the full walk, which names the event.
The digest is computed from the same SQL statement the walk reads the event from, so a row edited while
it is being verified cannot end up vouched for. The cost stays linear in the kept events (reading them);
``audit_archive`` bounds how many are kept.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import asdict, dataclass

from django.db import connection
from django.db.models import TextField
from django.db.models.expressions import RawSQL
from django.utils import timezone

from console.models import AuditChainHead, AuditEvent
from console.models.audit import audit_key, canonical

MARKER_VERSION = 1
_MAC_CONTEXT = b"console audit verified-up-to marker\n"
# Every column of an event row, as the digest sees it (taken from the model, so a new column is covered).
ROW_COLUMNS = tuple(f.column for f in AuditEvent._meta.concrete_fields)


def row_sql() -> str:
    """One text per row: 'length:value' for every column ('~' for NULL), joined with '|'."""
    table = connection.ops.quote_name(AuditEvent._meta.db_table)
    parts = []
    for column in ROW_COLUMNS:
        value = f"CAST({table}.{connection.ops.quote_name(column)} AS TEXT)"
        parts.append(f"COALESCE(LENGTH({value}) || ':' || {value}, '~')")
    return " || '|' || ".join(parts)


def seed(start_id: int, start_hash: str) -> str:
    """The digest before any event: bound to where the walk starts (genesis or the archive anchor)."""
    return hashlib.sha256(f"{start_id}:{start_hash}".encode()).hexdigest()


def fold(digest: str, row_text: str) -> str:
    """The running digest after one more row."""
    return hashlib.sha256(bytes.fromhex(digest) + row_text.encode()).hexdigest()


def with_row_text(queryset):
    """The queryset with each event's row_sql() text as ``row_text`` (read in the same statement)."""
    return queryset.annotate(row_text=RawSQL(row_sql(), (), output_field=TextField()))


@dataclass(frozen=True)
class Marker:
    start_id: int
    start_hash: str
    id: int
    hash: str
    count: int
    digest: str
    at: str  # ISO time of the verification
    v: int = MARKER_VERSION


def _mac(marker: Marker) -> str:
    return hmac.new(audit_key(), _MAC_CONTEXT + canonical(asdict(marker)), hashlib.sha256).hexdigest()


def load(head: AuditChainHead | None) -> tuple[Marker | None, str]:
    """The head's marker when its MAC verifies, else None and why it was ignored ('' when there is none)."""
    if head is None or not head.verified_marker:
        return None, ""
    try:
        marker = Marker(**head.verified_marker)
    except TypeError:
        return None, "the stored verification marker is malformed; it was ignored and every event re-walked"
    if marker.v != MARKER_VERSION or not hmac.compare_digest(_mac(marker), head.verified_mac or ""):
        return None, (
            "the stored verification marker is not signed with AUDIT_HMAC_KEY (forged, or written under "
            "another key); it was ignored and every event re-walked"
        )
    return marker, ""


def save(*, start_id: int, start_hash: str, last_id: int, last_hash: str, count: int, digest: str) -> None:
    """Sign and store the marker after a successful check (a concurrent newer one may overwrite it)."""
    marker = Marker(start_id, start_hash, last_id, last_hash, count, digest, timezone.now().isoformat())
    AuditChainHead.objects.filter(pk=1).update(verified_marker=asdict(marker), verified_mac=_mac(marker))


def digest_rows(start_id: int, start_hash: str, up_to: int, batch_size: int = 2000) -> tuple[str, int, int]:
    """Digest of the rows after start_id up to up_to, read without hashing them: (digest, count, last id)."""
    digest, count, last = seed(start_id, start_hash), 0, start_id
    table = connection.ops.quote_name(AuditEvent._meta.db_table)
    sql = f"SELECT {table}.id, {row_sql()} FROM {table} WHERE id > %s AND id <= %s ORDER BY id"
    with connection.cursor() as cursor:
        cursor.execute(sql, [start_id, up_to])
        while rows := cursor.fetchmany(batch_size):
            for row_id, text in rows:
                digest = fold(digest, text)
                last = row_id
            count += len(rows)
    return digest, count, last


def problem(prior: Marker | None, start_id: int, last_id: int) -> tuple[int, str] | None:
    """After a clean walk ending at last_id: (event id, reason) when an event the signed marker vouches
    for is gone or different — the newest events were removed together with the head."""
    if prior is None or prior.id <= start_id:
        return None  # no marker, or everything it covered was archived since
    if prior.id > last_id:
        return prior.id, (
            f"event {prior.id} was verified at {prior.at} (signed marker) but the chain now ends at event "
            f"{last_id}: events were removed"
        )
    current = AuditEvent.objects.filter(pk=prior.id).values_list("hash", flat=True).first()
    if current != prior.hash:
        return prior.id, (
            f"event {prior.id} is not the event verified at {prior.at} (signed marker): events were removed "
            "and others written in their place"
        )
    return None
