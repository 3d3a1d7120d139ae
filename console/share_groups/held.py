"""Held share-group changes: a reset's rows (current -> new start offset per partition), an offsets
deletion's topics, a group deletion, each reviewed against the group as it is and pinned to its state,
members and start offsets. A group that gained members or whose start offsets moved meanwhile goes back
for a fresh review. Run again after it ran, a deleted group (or topic state) is already gone: success."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import gate
from console.changes.kinds import HeldKind, Prepared, checked, kafka_text, register, review
from console.kafka import KafkaOperationError
from console.share_groups import actions, core, reads
from console.share_groups.reads import ShareInvalid

KIND_RESET = "change.share_reset"
KIND_OFFSETS_DELETE = "change.share_offsets_delete"
KIND_DELETE = "change.share_delete"
GATE_RESET = gate.declare(actions.GATE_RESET, "Share group offset resets", access.MANAGE_GROUPS)
GATE_DELETE = gate.declare(
    actions.GATE_DELETE, "Share group and share offsets deletions", access.MANAGE_GROUPS
)
COLUMNS = ["topic", "partition", "start offset", "new start offset", "log start", "log end", "note"]


def _pin(found: reads.GroupDetail | None) -> list:
    if found is None:
        return ["absent"]
    return [found.state, sorted(m.member_id for m in found.members),
            [[p.topic, p.partition, p.start_offset] for p in found.partitions]]  # fmt: skip


def _read(cluster, group_id: str) -> tuple[reads.GroupDetail | None, str]:
    try:
        return reads.raw_detail(cluster, group_id), ""
    except KafkaOperationError as exc:
        return None, f"the group cannot be read: {kafka_text(exc)}"


def _review_reset(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    gid, spec = payload["group_id"], core.ResetSpec.from_json(payload["spec"])
    found, error = _read(cluster, gid)
    if error or found is None:
        return review(
            COLUMNS, [], ok=False, kafka=error or f"share group '{gid}' does not exist", pinned=_pin(found)
        )
    problem = core.members_problem(gid, found.member_names, "offset reset")
    try:
        rows = reads.plan(cluster, found, spec)
    except ShareInvalid as exc:
        return review(COLUMNS, [], ok=False, kafka=str(exc), pinned=_pin(found))
    shown = [
        [r.topic, str(r.partition), "-" if r.current is None else str(r.current), str(r.new), str(r.log_start),
         str(r.log_end), r.note]
        for r in rows
    ]  # fmt: skip
    kafka = problem or f"AlterShareGroupOffsets of {len(rows)} partition(s) goes to the group's coordinator"
    return review(COLUMNS, shown, ok=not problem, kafka=kafka, pinned=_pin(found),
                  facts=[["group", gid], ["state", found.state]])  # fmt: skip


def prepare_reset(actor, cluster, group_id, spec: core.ResetSpec, confirmation: str | None) -> Prepared:
    access.require(actor, cluster, access.MANAGE_GROUPS)
    gid = reads.checked(core.check_group_id, group_id)
    problem = core.confirmation_problem(gid, confirmation, "offset reset")
    if problem:
        raise ShareInvalid([problem.replace("nothing was changed", "nothing was submitted")])
    reads.require_support(cluster)
    payload = {"group_id": gid, "spec": spec.as_json()}
    return checked(Prepared(KIND_RESET, GATE_RESET, reads.target(gid), payload,
                            _review_reset(actor, cluster, payload), f"reset share group '{gid}' {spec.mode}"))  # fmt: skip


def _run_reset(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    result = actions.reset_offsets(
        actor=actor, cluster=cluster, group_id=payload["group_id"], spec=core.ResetSpec.from_json(payload["spec"]),
        confirmation=payload["group_id"], on_behalf_of=on_behalf_of, request_id=request_id,
    )  # fmt: skip
    return result.ok, result.message


def _review_delete(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    gid, topics = payload["group_id"], payload.get("topics")
    found, error = _read(cluster, gid)
    cols = ["topic", "partition", "start offset", "lag"]
    if error or found is None:
        return review(
            cols, [], ok=False, kafka=error or f"share group '{gid}' does not exist", pinned=_pin(found)
        )
    rows = [
        [p.topic, str(p.partition), "-" if p.start_offset is None else str(p.start_offset), "-" if p.lag is None else str(p.lag)]
        for p in found.partitions if topics is None or p.topic in topics
    ]  # fmt: skip
    what = "offsets deletion" if topics else "deletion"
    problem = core.members_problem(gid, found.member_names, what)
    kafka = problem or (
        f"DeleteShareGroupOffsets of {', '.join(topics)}" if topics else "DeleteGroups of the share group"
    )
    return review(cols, rows, ok=not problem, kafka=kafka, pinned=_pin(found), facts=[["group", gid]])


def prepare_delete(actor, cluster, group_id, confirmation: str | None, topics=None) -> Prepared:
    access.require(actor, cluster, access.MANAGE_GROUPS)
    gid = reads.checked(core.check_group_id, group_id)
    names = None if topics is None else [reads.checked(core.check_topic, t) for t in topics]
    if names is not None and not names:
        raise ShareInvalid(["Name the topic(s) whose share-group offsets go."])
    what = "offsets deletion" if names else "deletion"
    problem = core.confirmation_problem(gid, confirmation, what)
    if problem:
        raise ShareInvalid([problem.replace("nothing was changed", "nothing was submitted")])
    reads.require_support(cluster)
    payload = {"group_id": gid, "topics": names}
    kind = KIND_OFFSETS_DELETE if names else KIND_DELETE
    summary = (
        f"delete share group '{gid}''s offsets of {', '.join(names)}"
        if names
        else f"delete share group '{gid}'"
    )
    return checked(
        Prepared(
            kind, GATE_DELETE, reads.target(gid), payload, _review_delete(actor, cluster, payload), summary
        )
    )


def _run_delete(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    gid, topics = payload["group_id"], payload.get("topics")
    try:
        if topics:
            result = actions.delete_offsets(
                actor=actor, cluster=cluster, group_id=gid, topics=topics, confirmation=gid,
                on_behalf_of=on_behalf_of, request_id=request_id,
            )  # fmt: skip
        else:
            result = actions.delete_group(
                actor=actor, cluster=cluster, group_id=gid, confirmation=gid, on_behalf_of=on_behalf_of,
                request_id=request_id,
            )  # fmt: skip
    except ShareInvalid as exc:
        if retry and "does not exist" in str(exc):
            return True, f"Share group '{gid}' is already gone."
        return False, str(exc)
    return result.ok, result.message


register(HeldKind(KIND_RESET, GATE_RESET, prepare_reset, _review_reset, _run_reset))
register(HeldKind(KIND_OFFSETS_DELETE, GATE_DELETE, prepare_delete, _review_delete, _run_delete))
register(HeldKind(KIND_DELETE, GATE_DELETE, prepare_delete, _review_delete, _run_delete))
