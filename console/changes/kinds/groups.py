"""Held consumer group offset resets: current -> new offset and the lag change per partition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.changes.kinds.base import ChangeInvalid, Handler, Prepared
from console.groups import actions as groups
from console.models.requests import RequestKind
from console.requests import group_reset


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


HANDLERS = {
    RequestKind.CHANGE_GROUP_RESET: Handler("group.reset", _reset_review, _reset_run),
}
