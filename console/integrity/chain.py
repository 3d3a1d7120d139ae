"""The audit chain's status for reviewers: the whole-chain check on the audit page (and for
``audit_anchor``), and the full re-verification, an Operation of kind ``audit.verify`` (its step is in
``integrity/worker.py``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from console import notify, operations
from console.audit import anchor, audit_names, marker
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.audit.review import require_reviewer
from console.models import AuditChainHead, Operation
from console.models.operations import FINISHED_STATES

VERIFY_KIND = audit_names.VERIFY  # the Operation kind carries the action's name
VERIFY_ITEM = "audit:chain"


@dataclass(frozen=True)
class ChainView:
    """What the audit page shows about the chain."""

    ok: bool
    verified_up_to: int
    head_id: int
    broken_at: int | None = None
    reason: str = ""
    archived_up_to: int = 0
    count: int = 0  # kept events checked (the old ones by their digest, the new ones by their HMAC)
    walked: int = 0  # events whose HMAC was recomputed on this check
    note: str = ""
    anchor_check: anchor.AnchorCheck | None = None  # the latest anchor kept outside the database


def failure_text(status) -> str:
    """How a failed check (a ChainView or store.ChainStatus) is told on the command line."""
    if status.broken_at is None:
        return f"Audit check FAILED: {status.reason}"
    return f"Audit chain BROKEN at event {status.broken_at}: {status.reason}"


def announce_broken(broken_at: int | None, reason: str) -> None:
    """Every cluster's channels subscribed to it hear once per break (console/notify; never raises)."""
    notify.emit(
        None,
        notify.events.AUDIT_CHAIN_BROKEN,
        title=(
            f"The audit chain is broken at event {broken_at}"
            if broken_at is not None
            else "The audit check failed"
        ),
        text=reason,
        link="/audit/",
        details={"broken_at": broken_at, "reason": reason},
        key=f"broken-at-{broken_at}:{reason[:100]}",
    )


def check_chain(*, batch_size: int = 2000) -> ChainView:
    """Check the whole kept chain, cheaply where the signed verified-up-to marker allows.

    Every kept event is read on every check; nothing is taken on trust from an earlier check:
    - with a marker whose HMAC verifies under AUDIT_HMAC_KEY and that starts where the chain starts,
      the rows up to the marker are digested (console.audit.marker) and must give the signed digest,
      count and last id: then they are byte for byte the rows that were verified, and only the events
      after the marker are walked (HMAC recomputed, links checked);
    - otherwise (no marker, a forged or foreign-key one, an archive moved the start, or any old row
      differs) every event is walked from the archive anchor, which names the first broken event.
    A marker that vouches for an event the chain no longer has (the newest events removed with the
    head) fails the check, and so does a chain that does not hold the latest anchor kept outside the
    database (console.audit.anchor). A successful check signs a new marker. Cost: reading every kept row (about
    7 µs per event on SQLite here) plus the HMAC walk of the new ones; archiving bounds the kept rows.
    """
    head = AuditChainHead.objects.filter(pk=1).first()
    head_id = head.last_id if head else 0
    start_id, start_hash = audit.chain_start(head)
    prior, note = marker.load(head)
    walked = None
    if prior is not None and (prior.start_id, prior.start_hash) == (start_id, start_hash):
        digest, count, last = marker.digest_rows(start_id, start_hash, prior.id, batch_size)
        if (digest, count, last) == (prior.digest, prior.count, prior.id):
            rest = audit.walk(prior.id, prior.hash, batch_size=batch_size, digest=digest, key_proven=True)
            walked = rest
            status = audit.conclude(head, replace(rest, count=count + rest.count), prior, note)
        else:
            note = (
                f"the events up to {prior.id} differ from those verified at {prior.at} (signed marker); "
                "every event was re-walked"
            )
    if walked is None:
        walked = audit.walk(start_id, start_hash, batch_size=batch_size)
        status = audit.conclude(head, walked, prior, note)
    if not status.ok:
        announce_broken(status.broken_at, status.reason)
    return ChainView(
        status.ok,
        status.verified_up_to,
        head_id,
        status.broken_at,
        status.reason,
        status.archived_up_to,
        status.count,
        walked.count,
        status.note,
        status.anchor_check,
    )


def append_anchor() -> anchor.AnchorWrite:
    """Check the whole chain, then append its signed head to the anchor file outside the database
    (beat's ``tasks.audit.write_anchor``, ``audit_anchor --append``); see ``anchor.append_anchor``."""
    return anchor.append_anchor(check_chain)


def chain_status(*, actor, batch_size: int = 2000) -> ChainView:
    """The audit page's chain check (check_chain) for a reviewer."""
    require_reviewer(actor)
    return check_chain(batch_size=batch_size)


def last_verified() -> tuple[int, marker.Marker | None]:
    """The newest event's id and the signed verified-up-to marker of the last successful check (None
    when there is none or it does not verify): what a monitor may read without walking the chain."""
    head = AuditChainHead.objects.filter(pk=1).first()
    signed, _ = marker.load(head)
    return (head.last_id if head else 0), signed


def latest_verify() -> Operation | None:
    """The newest full-verification operation (shown on the audit page with its progress)."""
    return Operation.objects.filter(kind=VERIFY_KIND).order_by("-id").first()


def get_verify(*, actor, op_id: int) -> Operation | None:
    """A full-verification operation for a reviewer (None for any other operation id)."""
    require_reviewer(actor)
    return Operation.objects.filter(pk=op_id, kind=VERIFY_KIND).first()


@refused_as(audit_names.VERIFY)
def start_verify(*, actor, source_ip: str | None = None) -> Operation:
    """Queue a full re-walk of the chain on a worker; an unfinished one is reused, not duplicated."""
    require_reviewer(actor)
    running = Operation.objects.filter(kind=VERIFY_KIND).exclude(state__in=FINISHED_STATES).first()
    if running is not None:
        return running
    return operations.start(
        actor=actor,
        kind=VERIFY_KIND,
        cluster=None,
        params={"scope": "full chain"},
        items=[VERIFY_ITEM],
        source_ip=source_ip,
    )
