"""Held consumer group offset resets (current -> new offset and the lag change per partition), and
held deletes of a group or of its committed offsets of a topic (each committed offset -> deleted).
All three are held by the policy's "group.reset" entry: a delete puts consumers back at their
auto.offset.reset position, a reset in effect."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.changes.kinds import ChangeInvalid, HeldKind, Prepared, checked, register, review
from console.groups import actions as groups
from console.groups import delete as group_delete
from console.groups import reset_payload as group_reset
from console.models.requests import RequestKind


def _reset_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    rows = group_reset.reviewed_rows(payload)
    spec = group_reset.reviewed_spec(rows)
    return _review_of(
        groups.preview_reset(actor=actor, cluster=cluster, group_id=payload["group"], spec=spec)
    )


def _review_of(preview) -> dict[str, Any]:
    """A reset's dry run as the approver sees it; ``pinned``: the committed offsets and emptiness."""
    rows = preview.plan.rows
    return {
        "columns": ["topic", "partition", "current", "new", "lag before", "lag after"],
        "rows": [[r.topic, r.partition, r.current, r.new, r.lag_before, r.lag_after] for r in rows],
        "kafka": preview.blocked or "the group is empty",
        "ok": not preview.blocked,
        "pinned": sorted([r.topic, r.partition, r.current] for r in rows) + [bool(preview.blocked)],
    }


def prepare_group_reset(actor, cluster, group_id: str, spec) -> Prepared:
    preview = groups.preview_reset(actor=actor, cluster=cluster, group_id=group_id, spec=spec)
    dry = group_reset.dry_run(preview.plan, preview.blocked)
    payload = {
        "group": group_id,
        "reset": group_reset.spec_to_dict(spec),
        "dry_run": dry,
        "plan_sha256": group_reset.digest(dry["rows"]),
    }
    review = _review_of(preview)  # the same reads the approver's re-check makes
    if not review["ok"]:
        raise ChangeInvalid([review["kafka"]])
    return Prepared(
        RequestKind.CHANGE_GROUP_RESET, "group.reset", f"group:{group_id}", payload, review,
        f"reset {len(dry['rows'])} offset(s) of {group_id} ({spec.describe()})",
    )  # fmt: skip


def _reset_run(actor, cluster, payload, request_id: str) -> tuple[bool, str]:
    rows = group_reset.reviewed_rows(payload)
    result = groups.reset_offsets(
        actor=actor,
        cluster=cluster,
        group_id=payload["group"],
        spec=group_reset.reviewed_spec(rows),
        confirmation=payload["group"],
        request_id=request_id,
    )
    if result.failed:
        return False, "; ".join(f"{o.topic}-{o.partition}: {o.message}" for o in result.failed[:10])
    return True, f"reset {len(result.outcomes)} offset(s) to the reviewed values"


# -- deleting a group, or its committed offsets of a topic ------------------------------------------


def _delete_review_of(preview: group_delete.DeletePreview, exists_text: str) -> dict[str, Any]:
    """Each committed offset the delete removes; ``pinned``: those offsets, whether the group is
    there and who consumes (a consumer that joins or commits meanwhile is drift)."""
    rows = [[tp.topic, tp.partition, o, "deleted"] for tp, o in sorted(preview.offsets.items())]
    members = (
        sorted(f"{m.client_id or m.member_id} ({m.host})" for m in preview.group.members)
        if preview.group
        else []
    )
    return review(
        ["topic", "partition", "committed offset", "after"], rows,
        ok=not preview.blocked, kafka=preview.blocked or exists_text,
        pinned=[[r[0], r[1], r[2]] for r in rows] + [preview.group is not None, members],
    )  # fmt: skip


def _group_delete_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    preview = group_delete.preview_delete(actor=actor, cluster=cluster, group_id=payload["group"])
    state = preview.group.state if preview.group else ""
    return _delete_review_of(
        preview, f"the group ({state}) has no active members; Kafka deletes it with its committed offsets"
    )


def prepare_group_delete(actor, cluster, group_id: str, *, confirmation: str) -> Prepared:
    groups.check_confirmation(group_id, confirmation)
    payload = {"group": group_id}
    review_now = _group_delete_review(actor, cluster, payload)
    return checked(Prepared(
        RequestKind.CHANGE_GROUP_DELETE, "group.reset", f"group:{group_id}", payload, review_now,
        f"delete group {group_id} and its {len(review_now['rows'])} committed offset(s)",
    ))  # fmt: skip


def _group_delete_run(actor, cluster, payload, request_id: str) -> tuple[bool, str]:
    done = group_delete.delete_group(
        actor=actor, cluster=cluster, group_id=payload["group"], confirmation=payload["group"],
        request_id=request_id,
    )  # fmt: skip
    return done.ok, f"deleted group {done.group_id}" if done.ok else f"{done.status}: {done.message}"


def _offsets_delete_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    preview = group_delete.preview_offsets_delete(
        actor=actor, cluster=cluster, group_id=payload["group"], topic=payload["topic"]
    )
    return _delete_review_of(preview, "no member of the group consumes the topic (OffsetDelete)")


def prepare_group_offsets_delete(actor, cluster, group_id: str, topic: str, *, confirmation: str) -> Prepared:
    groups.check_confirmation(group_id, confirmation)
    payload = {"group": group_id, "topic": topic}
    review_now = _offsets_delete_review(actor, cluster, payload)
    return checked(Prepared(
        RequestKind.CHANGE_GROUP_OFFSETS_DELETE, "group.reset", f"group:{group_id}", payload,
        review_now, f"delete the {len(review_now['rows'])} committed offset(s) of {group_id} on {topic}",
    ))  # fmt: skip


def _offsets_delete_run(actor, cluster, payload, request_id: str) -> tuple[bool, str]:
    result = group_delete.delete_offsets(
        actor=actor, cluster=cluster, group_id=payload["group"], topic=payload["topic"],
        confirmation=payload["group"], request_id=request_id,
    )  # fmt: skip
    if result.failed:
        return False, "; ".join(f"{o.topic}-{o.partition}: {o.message}" for o in result.failed[:10])
    return True, f"deleted {len(result.outcomes)} committed offset(s) of {payload['topic']}"


register(
    HeldKind(
        name=RequestKind.CHANGE_GROUP_RESET,
        gate="group.reset",
        prepare=prepare_group_reset,
        review=_reset_review,
        run=_reset_run,
    )
)
register(
    HeldKind(
        name=RequestKind.CHANGE_GROUP_DELETE,
        gate="group.reset",
        prepare=prepare_group_delete,
        review=_group_delete_review,
        run=_group_delete_run,
    )
)
register(
    HeldKind(
        name=RequestKind.CHANGE_GROUP_OFFSETS_DELETE,
        gate="group.reset",
        prepare=prepare_group_offsets_delete,
        review=_offsets_delete_review,
        run=_offsets_delete_run,
    )
)
