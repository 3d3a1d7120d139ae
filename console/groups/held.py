"""Held consumer group offset resets (current -> new offset and the lag change per partition), and
held deletes of a group or of its committed offsets of a topic (each committed offset -> deleted).
All three are held by the policy's "group.reset" entry: a delete puts consumers back at their
auto.offset.reset position, a reset in effect."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import PermissionDenied

from console import access
from console.changes import gate
from console.changes.kinds import (
    ChangeInvalid,
    Checked,
    HeldKind,
    Indeterminate,
    Prepared,
    Requested,
    checked,
    outside_namespace,
    register,
    review,
)
from console.groups import actions as groups
from console.groups import delete as group_delete
from console.groups import reset_payload as group_reset
from console.groups.core import ResetPlanError
from console.groups.reads import target as group_target
from console.models.requests import RequestKind

# The policy kind of this area (console/changes/gate.py lists what the areas declare). It holds
# deleting a group or its committed offsets of a topic too: either puts the group's consumers back at
# auto.offset.reset, a reset in effect, so a policy holding resets cannot be walked round by deleting.
GROUP_RESET = gate.declare("group.reset", "Consumer group offset resets and deletions", access.MANAGE_GROUPS)


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


def _partitions(n: int) -> str:
    return f"{n} partition{'s' if n != 1 else ''}"


def _reset_run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    """The reviewed offsets exactly (a from-file reset of the attached dry run), refused while the
    group has members and when it moved since the review (nothing is changed then). After an
    earlier attempt (``retry``) a group already at the reviewed offsets is success. ``pinned``: the
    committed offsets matched the approved review just now (a held change's drift pin; one that
    drifted went back for review and was approved as it is), so only the log is compared."""
    group_id = payload["group"]
    try:
        rows = group_reset.reviewed_rows(payload)
        spec = group_reset.reviewed_spec(rows)
        reviewed = spec.file_offsets
        now = groups.preview_reset(actor=actor, cluster=cluster, group_id=group_id, spec=spec)
        if retry and all(r.current == reviewed.get((r.topic, r.partition)) for r in now.plan.rows):
            return True, f"the reviewed offsets of {_partitions(len(rows))} are set (by an earlier attempt)"
        if now.group is not None and now.group.members:
            count = len(now.group.members)
            return False, (
                f"Not reset: group '{group_id}' has {count} active member{'s' if count != 1 else ''}: "
                f"{groups.members_text(now.group)}. Kafka only resets the offsets of an empty group: "
                "stop its consumers, then submit the request again."
            )
        issues = group_reset.drift(rows, now.plan, earlier_attempt=retry, committed=not pinned)
        if issues:
            return False, "Not reset: " + "; ".join(issues) + ". Submit the request again for a new dry run."
        result = groups.reset_offsets(
            actor=actor, cluster=cluster, group_id=group_id, spec=spec, confirmation=group_id,
            on_behalf_of=on_behalf_of, request_id=request_id,
        )  # fmt: skip
    except (groups.GroupNotEmpty, groups.ConfirmationError, ResetPlanError) as exc:
        return False, f"Not reset: {exc}"
    if any(o.status == "unknown" for o in result.outcomes):
        raise Indeterminate("Kafka did not say whether every offset was committed")
    if result.failed:
        failed = "; ".join(f"{o.topic}-{o.partition}: {o.message}" for o in result.failed[:10])
        return False, f"{result.ok_count} of {_partitions(len(result.outcomes))} reset; not reset: {failed}"
    if result.plan is not None and result.plan.offsets != dict(reviewed):
        moved = [f"{t}-{n}: {o}" for (t, n), o in result.plan.offsets.items() if reviewed.get((t, n)) != o]
        return False, "The log moved while the reset ran; committed instead of the reviewed offsets: " + (
            ", ".join(moved[:10])
        )
    plan = result.plan
    lag = f"; lag {plan.lag_before} → {plan.lag_after}" if plan is not None else ""
    return True, (
        f"reset {_partitions(len(result.outcomes))} of {group_id} to the reviewed offsets "
        f"(plan SHA-256 {payload['plan_sha256'][:12]}…){lag}"
    )


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


def _group_delete_run(
    actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False
):
    done = group_delete.delete_group(
        actor=actor, cluster=cluster, group_id=payload["group"], confirmation=payload["group"],
        on_behalf_of=on_behalf_of, request_id=request_id,
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


def _offsets_delete_run(
    actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False
):
    result = group_delete.delete_offsets(
        actor=actor, cluster=cluster, group_id=payload["group"], topic=payload["topic"],
        confirmation=payload["group"], on_behalf_of=on_behalf_of, request_id=request_id,
    )  # fmt: skip
    if result.failed:
        return False, "; ".join(f"{o.topic}-{o.partition}: {o.message}" for o in result.failed[:10])
    return True, f"deleted {len(result.outcomes)} committed offset(s) of {payload['topic']}"


# -- a reset asked for by a requester (self-service) ---------------------------------------------


def _request_reset(user, cluster, payload, *, approving: bool = False) -> Checked:
    """The group and every topic of the reset in the requester's namespaces. On submit the dry run
    is made and attached with its digest; on approval the attached one is checked against its
    digest and the namespaces again (the run compares it with the group as it is then)."""
    group_id = str(payload.get("group") or "").strip()
    if not group_id or len(group_id) > group_reset.MAX_GROUP_ID:
        raise ChangeInvalid([f"name the consumer group (at most {group_reset.MAX_GROUP_ID} characters)"])
    try:
        spec = group_reset.spec_from_dict(payload.get("reset"))
        rows = group_reset.reviewed_rows(payload) if approving else None
    except ResetPlanError as exc:
        raise ChangeInvalid(exc.errors) from None
    topics = {r[0] for r in rows} if rows else set(group_reset.named_topics(spec))
    errors = outside_namespace(user, cluster, "Group", group_id)
    errors += [e for t in sorted(topics) for e in outside_namespace(user, cluster, "Topic", t)]
    if errors:
        raise ChangeInvalid(errors[:20])
    if rows is None:
        payload = _requested_dry_run(user, cluster, group_id, spec)
        rows = payload["dry_run"]["rows"]
    run, count = payload["dry_run"], len(rows)
    summary = (
        f"reset offsets of group {group_id}: {spec.describe()}; {count} partition{'s' if count != 1 else ''}, "
        f"{run.get('changed')} changing, lag {run.get('lag_before')} → {run.get('lag_after')}"
    )
    if run.get("members"):
        summary += f". At the dry run: {run['members']}"
    return Checked(group_target(group_id), dict(payload), summary)


def _requested_dry_run(user, cluster, group_id: str, spec) -> dict[str, Any]:
    try:
        preview = groups.preview_reset_for_request(
            requester=user, cluster=cluster, group_id=group_id, spec=spec
        )
    except ResetPlanError as exc:
        raise ChangeInvalid(exc.errors) from None
    except PermissionDenied as exc:
        raise ChangeInvalid([f"The reset touches a topic outside your namespaces: {exc}"]) from None
    if len(preview.plan.rows) > group_reset.MAX_PARTITIONS:
        raise ChangeInvalid([
            f"A reset request covers at most {group_reset.MAX_PARTITIONS} partitions "
            f"({len(preview.plan.rows)} here): narrow the scope or ask an operator."
        ])  # fmt: skip
    members = ""
    if preview.group is not None and preview.group.members:
        members = (
            f"the group had active members ({groups.members_text(preview.group)}); "
            "it must be empty when the reset runs"
        )
    dry_run = group_reset.dry_run(preview.plan, members)
    return {
        "group": group_id,
        "reset": group_reset.spec_to_dict(spec),
        "dry_run": dry_run,
        "plan_sha256": group_reset.digest(dry_run["rows"]),
    }


register(
    HeldKind(
        name=RequestKind.CHANGE_GROUP_RESET,
        gate="group.reset",
        prepare=prepare_group_reset,
        review=_reset_review,
        run=_reset_run,
        requested=Requested(
            RequestKind.GROUP_OFFSETS_RESET,
            _request_reset,
            dict,
            "consumer group",
            partitions=lambda p: len(p["dry_run"]["rows"]),  # the partitions the reset sets
        ),
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
