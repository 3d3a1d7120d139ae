"""Held data movements: a reassignment (the plan, bytes per broker and the ETA at its throttle), a
running reassignment's throttle change, and a leader election (leaders before -> after)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import gate
from console.changes.kinds import ChangeInvalid, HeldKind, Prepared, checked, register, review
from console.formatting import human_bytes, human_duration
from console.kafka import KafkaOperationError
from console.models.reassignment import Reassignment
from console.models.requests import RequestKind
from console.reassignment import actions as reassignment
from console.reassignment import elections, throttles
from console.reassignment.pacing import Pacing
from console.topics import cache as metadata_cache

# The policy kinds of this area (console/changes/gate.py lists what the areas declare).
REASSIGNMENT = gate.declare("reassignment", "Reassignments", access.MANAGE_REASSIGNMENTS)
THROTTLE = gate.declare("throttle", "Throttle changes of running reassignments", access.MANAGE_REASSIGNMENTS)
ELECTION = gate.declare("election", "Leader elections", access.MANAGE_REASSIGNMENTS)

ROWS_SHOWN = 1000  # a larger plan shows its first rows; the digest and the drift check cover all


def _rate(rate) -> str:
    return f"{human_bytes(rate)}/s per broker" if rate else "no throttle"


# -- reassignment ---------------------------------------------------------------------------------


def _proposed(payload: Mapping[str, Any]) -> dict[tuple[str, int], tuple[int, ...]]:
    return {(t, int(p)): tuple(int(b) for b in target) for t, p, _, target in payload["plan"]}


def _pacing_facts(payload: Mapping[str, Any]) -> list[list[str]]:
    """A paced move's split rates, per-broker rates and N, as the approver reads them."""
    p = Pacing.from_json(payload.get("pacing"))
    facts = []
    if p.leader is not None:
        facts.append(["leader throttle", _rate(p.leader)])
    if p.follower is not None:
        facts.append(["follower throttle", _rate(p.follower)])
    facts += [[f"broker {b} throttle", _rate(v)] for b, v in sorted(p.brokers.items())]
    if p.max_moves is not None:
        facts.append(["max moves per broker", f"{p.max_moves} (the rest queued)"])
    return facts


def _reassign_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The dry run as the form shows it, and the replicas every partition has now (pinned)."""
    try:
        preview = reassignment.preview_plan(
            cluster,
            _proposed(payload),
            throttle=payload.get("throttle"),
            rf_change=payload.get("rf_change", False),
        )
    except (reassignment.PlanRejected, KafkaOperationError) as exc:
        return review(["partition"], [], ok=False, kafka=str(exc), pinned=None)
    return _review_of(preview, payload)


def _review_of(preview, payload: Mapping[str, Any]) -> dict[str, Any]:
    """A reassignment dry run as the approver sees it; ``pinned``: every partition's replicas now."""
    bad = [c for c in preview.checks if not c.ok]
    diff = preview.diff
    brokers = sorted(set(diff.bytes_in) | set(diff.bytes_out))
    facts = [
        ["partitions moving", f"{len(diff.rows)}"],
        ["bytes to copy", human_bytes(diff.total_bytes)],
        ["throttle", _rate(payload.get("throttle"))],
        *_pacing_facts(payload),
        ["estimated time at the throttle", human_duration(preview.estimated_seconds) if payload.get("throttle") else "unthrottled: as fast as the brokers copy"],
        *[[f"broker {b}", f"in {human_bytes(diff.bytes_in.get(b, 0))}, out {human_bytes(diff.bytes_out.get(b, 0))}"] for b in brokers],
        ["elect preferred leaders after", "yes" if payload.get("elect_preferred") else "no"],
    ]  # fmt: skip
    rows = [[r.topic, r.partition, list(r.old), list(r.new), human_bytes(r.bytes_to_move)] for r in diff.rows]
    return review(
        ["topic", "partition", "replicas before", "replicas after", "bytes to copy"], rows[:ROWS_SHOWN],
        ok=not bad and preview.sha256 == payload["plan_sha256"],
        kafka="; ".join(f"{c.topic}-{c.partition}: {', '.join(c.problems)}" for c in bad[:10])
        or ("the plan validates against the cluster now" if preview.sha256 == payload["plan_sha256"]
            else "the partitions are no longer where the plan was made from"),
        pinned=sorted([c.topic, c.partition, list(c.current)] for c in preview.checks),
        facts=facts,
    )  # fmt: skip


def prepare_reassignment(
    actor, cluster, preview, *, throttle: int | None, elect_preferred: bool, rf_change: bool, pacing=None
) -> Prepared:
    """Hold the dry run the operator reviewed (``preview``): the plan with each partition's
    replicas before and after, pinned by the same digest Start checks."""
    access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    throttles.validate_rate(throttle)
    moving = [c for c in preview.checks if c.moving]
    if not moving:
        raise ChangeInvalid(["Every partition is already at its target; nothing to move."])
    pacing = reassignment.checked_pacing(pacing, moving)
    payload = {
        **({"pacing": pacing.as_json()} if not pacing.empty else {}),
        "plan": [[c.topic, c.partition, list(c.current), list(c.target)] for c in moving],
        "throttle": throttle,
        "elect_preferred": bool(elect_preferred),
        "rf_change": bool(rf_change),
        "plan_sha256": preview.sha256,
    }
    topics = sorted({c.topic for c in moving})
    return checked(Prepared(
        RequestKind.CHANGE_REASSIGNMENT, "reassignment", f"topic:{topics[0]}" + (" …" if len(topics) > 1 else ""),
        payload, _review_of(preview, payload),  # the operator's dry run: no second read
        f"move {len(moving)} partition(s) of {', '.join(topics[:5])} at {_rate(throttle)}",
    ))  # fmt: skip


def prepare_reviewed(
    actor,
    cluster,
    plan,
    *,
    throttle: int | None,
    elect_preferred: bool,
    rf_change: bool,
    expected: str | None,
    pacing=None,
) -> Prepared:
    """Hold exactly the plan of the dry run: previewed again, refused as Start refuses it when the
    cluster changed since (its digest is not ``expected``), then held as ``prepare_reassignment``."""
    preview = reassignment.preview_plan(cluster, plan, throttle=throttle, rf_change=rf_change)
    if expected is not None and preview.sha256 != expected:
        raise reassignment.PlanRejected(reassignment.NOT_REVIEWED, preview.checks)
    return prepare_reassignment(
        actor,
        cluster,
        preview,
        throttle=throttle,
        elect_preferred=elect_preferred,
        rf_change=rf_change,
        pacing=pacing,
    )


def _reassign_run(
    actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False
) -> tuple[bool, str]:
    op = reassignment.start_reassignment(
        actor=actor,
        cluster=cluster,
        proposed=_proposed(payload),
        throttle=payload.get("throttle"),
        elect_preferred=payload.get("elect_preferred", False),
        rf_change=payload.get("rf_change", False),
        expected_sha256=payload["plan_sha256"],
        pacing=Pacing.from_json(payload.get("pacing")),
    )
    return True, f"reassignment #{op.reassignment.pk} started (operation #{op.pk})"


# -- throttle change of a running reassignment ----------------------------------------------------


def _running(cluster, rid: int) -> Reassignment | None:
    return Reassignment.objects.filter(pk=rid, cluster=cluster).select_related("operation").first()


def _throttle_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    r = _running(cluster, payload["reassignment"])
    running = r is not None and not r.operation.finished and r.throttled
    before = r.throttle_bytes_per_s if r is not None else None
    rows = [[f"reassignment #{payload['reassignment']}", _rate(before), _rate(payload["rate"])]]
    return review(
        ["reassignment", "before", "after"], rows, ok=running,
        kafka="the reassignment runs with a throttle" if running else "the reassignment is not running with a throttle",
        pinned=[payload["reassignment"], running, before],
    )  # fmt: skip


def prepare_throttle(actor, cluster, r: Reassignment, rate: int) -> Prepared:
    access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    payload = {"reassignment": r.pk, "rate": throttles.validate_rate(rate)}
    return checked(Prepared(
        RequestKind.CHANGE_THROTTLE, "throttle", f"operation:{r.operation_id}", payload,
        _throttle_review(actor, cluster, payload), f"throttle of reassignment #{r.pk} to {_rate(rate)}",
    ))  # fmt: skip


def _throttle_run(
    actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False
) -> tuple[bool, str]:
    r = _running(cluster, payload["reassignment"])
    if r is None:
        return False, "the reassignment no longer exists"
    outcomes = throttles.change_throttle(actor=actor, reassignment=r, rate=payload["rate"])
    failed = [k for k, v in outcomes.items() if not v["ok"]]
    return (
        not failed,
        f"failed on {', '.join(failed)}" if failed else f"throttle set to {_rate(payload['rate'])}",
    )


# -- leader election ------------------------------------------------------------------------------


def _election_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    snap = metadata_cache.get_snapshot(cluster, refresh=True)
    unclean = payload["type"] == elections.UNCLEAN
    rows, pinned, missing = [], [], []
    for t, p in payload["partitions"]:
        meta = snap.by_name.get(t)
        part = next((x for x in meta.partitions if x.id == int(p)), None) if meta else None
        if part is None:
            missing.append(f"{t}-{p}")
            continue
        after = (
            "a replica outside the ISR may become leader" if unclean else f"{part.replicas[0]} (preferred)"
        )
        rows.append([t, int(p), part.leader if part.leader >= 0 else "none", list(part.isr), after])
        pinned.append([t, int(p), part.leader])
    return review(
        ["topic", "partition", "leader before", "in sync", "leader after"], rows[:ROWS_SHOWN], ok=not missing,
        kafka=f"unknown partitions: {', '.join(missing[:10])}" if missing else f"{payload['type'].lower()} election of {len(rows)} partition(s)",
        pinned=sorted(pinned),
    )  # fmt: skip


def prepare_election(actor, cluster, election_type: str, partitions, confirmation: str = "") -> Prepared:
    election_type = election_type.upper()
    if election_type not in (elections.PREFERRED, elections.UNCLEAN):
        raise ChangeInvalid([f"unknown election type {election_type!r}"])
    expected = elections.unclean_confirmation(cluster)
    if election_type == elections.UNCLEAN and confirmation.strip() != expected:
        raise ChangeInvalid([f"Type '{expected}' to confirm: an unclean election can lose committed data."])
    access.require(
        actor,
        cluster,
        access.ADMINISTER if election_type == elections.UNCLEAN else access.MANAGE_REASSIGNMENTS,
    )
    chosen = sorted({(t, int(p)) for t, p in partitions or ()})
    if not chosen:
        raise ChangeInvalid(
            ["Select at least one partition (no partition is led by another than its preferred replica)."]
        )
    payload = {"type": election_type, "partitions": [[t, p] for t, p in chosen]}
    return checked(Prepared(
        RequestKind.CHANGE_ELECTION, "election", f"topic:{chosen[0][0]}" + (" …" if len(chosen) > 1 else ""),
        payload, _election_review(actor, cluster, payload),
        f"{election_type.lower()} leader election of {len(chosen)} partition(s)",
    ))  # fmt: skip


def _election_run(
    actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False
) -> tuple[bool, str]:
    op = elections.start_election(
        actor=actor,
        cluster=cluster,
        election_type=payload["type"],
        partitions=[(t, int(p)) for t, p in payload["partitions"]],
        confirmation=elections.unclean_confirmation(cluster),
    )
    return True, f"election queued (operation #{op.pk})"


register(
    HeldKind(
        name=RequestKind.CHANGE_REASSIGNMENT,
        gate="reassignment",
        prepare=prepare_reassignment,
        review=_reassign_review,
        run=_reassign_run,
    )
)
register(
    HeldKind(
        name=RequestKind.CHANGE_THROTTLE,
        gate="throttle",
        prepare=prepare_throttle,
        review=_throttle_review,
        run=_throttle_run,
    )
)
register(
    HeldKind(
        name=RequestKind.CHANGE_ELECTION,
        gate="election",
        prepare=prepare_election,
        review=_election_review,
        run=_election_run,
    )
)
