"""The only writer of the audit trail, and its verifier (DESIGN D6).

Every event is hashed with HMAC-SHA256 under AUDIT_HMAC_KEY (console/models/audit.py), so rewriting
events and re-hashing the rest of the chain needs the key, which the database never holds. Truncating
the newest events (and the head with them) is only visible against something kept outside: the
verified-up-to marker (console.audit.marker) while it survives, and the anchors kept outside the
database for an external witness (console.audit.anchor: appended by beat, or saved by ``audit_anchor``),
the latest of which every check compares the chain with.
"""

from __future__ import annotations

import functools
import hmac
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from console.audit import audit_names, marker
from console.kafka import KafkaOperationError
from console.models import AuditChainHead, AuditEvent, AuditTarget
from console.models.audit import GENESIS_HASH as GENESIS_HASH  # the chain starts here (tests, walkers)
from console.models.audit import TARGET_MAX, chain_start

if TYPE_CHECKING:
    from console.audit.anchor import AnchorCheck

MASK = "******"
# Keys whose values never reach the trail (KIP-133: sensitive values are never returned or logged).
_SECRET_KEY = re.compile(r"(password|secret|token|sasl\.jaas|ssl\.key|credential|private)", re.IGNORECASE)


def mask_secrets(value: Any, sensitive_keys: Iterable[str] = ()) -> Any:
    """A copy of value with secret-looking keys (and the listed sensitive config names) masked."""
    return _masked(value, frozenset(sensitive_keys), [True])


# JSON's own scalars (exact types: a str or int subclass, an enum member say, is written as its
# value and read back as a plain str or int, so it is not returned as it is)
_PLAIN = frozenset({str, int, bool, type(None)})
_INF = float("inf")


def _masked(value: Any, extra: frozenset[str], plain: list[bool]) -> Any:
    # A 10,000-partition offset reset carries ~90,000 values: scalars go back as they are, and the
    # set of sensitive names is built once per event, not once per value. ``plain[0]`` is cleared
    # when the copy holds anything JSON would give back changed (tuples become lists here).
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        if value != value or value in (_INF, -_INF):
            plain[0] = False
        return value
    if isinstance(value, str | int | float):
        plain[0] = False
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                plain[0] = False
            secret = isinstance(k, str) and (k in extra or _secret_key(k))
            out[k] = MASK if secret else _masked(v, extra, plain)
        return out
    if isinstance(value, list | tuple):
        return [_masked(v, extra, plain) for v in value]
    plain[0] = False
    return value


@functools.lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    """Whether a key's value is masked (the same few keys recur thousands of times per event)."""
    return _SECRET_KEY.search(key) is not None


def _jsonable(value: Any) -> Any:
    """What the JSON column will give back, so the hash computed now matches the one verified later."""
    return json.loads(json.dumps(value, default=str))


def _stored(value: Any, sensitive_keys: frozenset[str]) -> Any:
    """``value`` masked, as the JSON column will give it back. Plain JSON data (the usual case: a
    1,000-topic batch's specs and outcomes) is that already once masked; anything else (dates,
    sets, enum members, keys that are not strings) takes the JSON round trip."""
    plain = [True]
    out = _masked(value, sensitive_keys, plain)
    return out if plain[0] else _jsonable(out)


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
    sensitive = frozenset(sensitive_keys)
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
        params=_stored(dict(params or {}), sensitive),
        before=_stored(before, sensitive),
        after=_stored(after, sensitive),
        outcomes=_stored(outcomes, sensitive),
        outcome=outcome or _overall(outcomes),
        operation_id=getattr(operation, "pk", operation),
        request_id=request_id,
        prev_hash=head.last_hash,
    )
    # Ids are assigned here, under the chain lock, so the hash can cover the id itself.
    event.pk = head.last_id + 1
    event.hash = event.compute_hash()
    event.save(force_insert=True)
    # The resource index: one row per distinct target, in the same transaction as the event, in one
    # executemany (a 1,000-topic batch names 1,000 targets: as model instances they cost more than
    # the event itself).
    names = dict.fromkeys(str(t)[:TARGET_MAX] for t in event.targets)
    if names:
        with transaction.get_connection().cursor() as cursor:
            cursor.executemany(_target_insert(), [(event.pk, t, AuditTarget.name_of(t)) for t in names])
    head.last_id = event.pk
    head.last_hash = event.hash
    head.save(update_fields=["last_id", "last_hash"])
    return event


@functools.cache
def _target_insert() -> str:
    meta = AuditTarget._meta
    quote = transaction.get_connection().ops.quote_name
    columns = ", ".join(quote(meta.get_field(f).column) for f in ("event", "target", "name"))
    return f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES (%s, %s, %s)"


@dataclass(frozen=True)
class ChainStatus:
    ok: bool
    verified_up_to: int  # id of the last event whose link and hash hold (the anchor if none)
    count: int
    broken_at: int | None = None
    reason: str = ""
    archived_up_to: int = 0  # events up to this id were archived (audit_archive); 0 when none were
    note: str = ""  # about the verification marker (ignored, or the old rows changed since)
    anchor_check: AnchorCheck | None = None  # the latest scheduled anchor (console.audit.anchor)


@dataclass(frozen=True)
class Walk:
    ok: bool
    last_id: int
    last_hash: str
    count: int
    broken_at: int | None = None
    reason: str = ""
    digest: str = ""  # the marker's running digest over every row walked (console.audit.marker)


def legacy_cutover(start_id: int = 0) -> int:
    """The last event hashed with the legacy unkeyed SHA-256 (0 when none may be).

    Named by the first kept ``audit.rekey`` event whose own HMAC verifies (migration 0010 writes it once,
    on a database that already had events): everything after it must carry the keyed hash, and its
    prev_hash, covered by its HMAC, pins the legacy events before it. A forged or edited cut-over event
    does not verify, so no event can be declared legacy without the key.
    """
    candidates = AuditEvent.objects.filter(action=audit_names.REKEY, id__gt=start_id).order_by("id")[:10]
    for event in candidates:
        named = event.params.get("legacy_up_to") if isinstance(event.params, dict) else None
        if not isinstance(named, dict) or not isinstance(named.get("id"), int) or named["id"] >= event.pk:
            continue
        if hmac.compare_digest(event.compute_hash(), event.hash):
            return named["id"]
    return 0


def expected_hash(event: AuditEvent, legacy_up_to: int) -> str:
    """What the event's hash must be: legacy SHA-256 up to the cut-over, the keyed HMAC after it."""
    return event.legacy_hash() if event.pk <= legacy_up_to else event.compute_hash()


def _hash_reason(event_id: int, legacy: bool, key_proven: bool) -> str:
    if legacy:
        return f"event {event_id} was edited: its hash does not match its content (a legacy, unkeyed event)"
    if key_proven:
        return (
            f"event {event_id} was edited: its HMAC does not match its content "
            "(or AUDIT_HMAC_KEY was changed since it was written)"
        )
    return (
        f"event {event_id} does not verify with AUDIT_HMAC_KEY: it was edited, or AUDIT_HMAC_KEY is not the "
        "key the trail was written with (a changed or wrong key fails every event), or it predates the "
        "keyed chain and no audit.rekey cut-over vouches for it"
    )


def walk(
    start_id: int,
    start_hash: str,
    *,
    batch_size: int = 2000,
    progress: Callable[[int, int], None] | None = None,
    digest: str | None = None,
    key_proven: bool = False,
) -> Walk:
    """Check every event after start_id: it links to the one before and its keyed hash matches its content.

    Events up to the legacy cut-over (legacy_cutover) are checked with the old unkeyed SHA-256. The
    running digest for the verified-up-to marker is folded over the same rows, read in the same
    statement (digest: the marker's digest at start_id; key_proven: a marker signed with the current
    key vouches for the events before, so a mismatch is an edit rather than a wrong key).
    progress(count, last_id) is called after each batch of events (for a worker's heartbeat).
    """
    legacy_up_to = legacy_cutover(start_id)
    digest = digest or marker.seed(start_id, start_hash)
    prev_id, prev_hash, count = start_id, start_hash, 0
    qs = marker.with_row_text(AuditEvent.objects.filter(id__gt=start_id).order_by("id"))
    for event in qs.iterator(chunk_size=batch_size):
        if event.prev_hash != prev_hash:
            gap = " (an earlier event is missing)" if event.pk != prev_id + 1 else ""
            reason = f"event {event.pk} does not link to the event before it{gap}"
            return Walk(False, prev_id, prev_hash, count, event.pk, reason)
        legacy = event.pk <= legacy_up_to
        if not hmac.compare_digest(expected_hash(event, legacy_up_to), event.hash):
            reason = _hash_reason(event.pk, legacy, key_proven)
            return Walk(False, prev_id, prev_hash, count, event.pk, reason)
        key_proven = key_proven or not legacy
        digest = marker.fold(digest, event.row_text)
        prev_id, prev_hash = event.pk, event.hash
        count += 1
        if progress is not None and count % batch_size == 0:
            progress(count, prev_id)
    if progress is not None:
        progress(count, prev_id)
    return Walk(True, prev_id, prev_hash, count, digest=digest)


def head_problem(head: AuditChainHead | None, last_id: int, last_hash: str) -> tuple[int, str] | None:
    """After a clean walk: (event id, reason) when the head or the archive anchor disagree with it."""
    if head is None:
        if last_id:
            return (
                last_id,
                "the chain head row is missing (it names the last event; events may have been removed)",
            )
        return None
    if head.last_id != last_id or head.last_hash != last_hash:
        return head.last_id, (
            f"the chain should end at event {head.last_id}, it ends at {last_id} (events were removed)"
        )
    if head.anchor_id:
        # The anchor is only trusted when the newest archive event (chained, so unforgeable) names it.
        archive = (
            AuditEvent.objects.filter(action=audit_names.ARCHIVE, id__gt=head.anchor_id)
            .order_by("-id")
            .first()
        )
        named = archive.params.get("anchor") if archive is not None else None
        if named != {"id": head.anchor_id, "hash": head.anchor_hash}:
            return head.anchor_id, (
                f"the archive anchor at event {head.anchor_id} is not the one an audit.archive event recorded"
            )
    return None


def conclude(
    head: AuditChainHead | None, walked: Walk, prior: marker.Marker | None, note: str = ""
) -> ChainStatus:
    """A walk's verdict, with the head, the archive anchor, the prior marker and the latest scheduled
    anchor kept outside the database (truncation) checked; when everything holds, a new signed marker is
    stored for the next check."""
    from console.audit import anchor  # anchor.py reads the chain's start from this module

    start_id, start_hash = chain_start(head)
    if not walked.ok:
        return ChainStatus(
            False, walked.last_id, walked.count, walked.broken_at, walked.reason, start_id, note
        )
    latest = anchor.check_latest()
    problem = marker.problem(prior, start_id, walked.last_id) or head_problem(
        head, walked.last_id, walked.last_hash
    )
    if problem is None and latest.level == "failure":
        problem = (latest.anchor_id, latest.message)
    if problem is not None:
        return ChainStatus(
            False, walked.last_id, walked.count, problem[0], problem[1], start_id, note, latest
        )
    marker.save(
        start_id=start_id,
        start_hash=start_hash,
        last_id=walked.last_id,
        last_hash=walked.last_hash,
        count=walked.count,
        digest=walked.digest,
    )
    return ChainStatus(
        True, walked.last_id, walked.count, archived_up_to=start_id, note=note, anchor_check=latest
    )


def verify_chain(batch_size: int = 2000, progress: Callable[[int, int], None] | None = None) -> ChainStatus:
    """Recompute every kept hash in id order from the archive anchor; name the first broken event.

    The full check: the verified-up-to marker is not trusted to skip anything, only to notice events
    removed after it was signed; a successful walk signs a new one.
    """
    head = AuditChainHead.objects.filter(pk=1).first()
    prior, note = marker.load(head)
    walked = walk(*chain_start(head), batch_size=batch_size, progress=progress)
    return conclude(head, walked, prior, note)
