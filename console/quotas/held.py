"""Held client quota changes: the diff with Kafka's validate-only answer, pinned to the entity's
quotas the review saw (a change made meanwhile, by anyone, is drift)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import gate
from console.changes.kinds import HeldKind, Indeterminate, Prepared, checked, kafka_text, register, review
from console.quotas import actions, core

KIND = "change.quota"  # the held kind (stored with the change request)
GATE = gate.declare(actions.GATE, "Client quota changes", access.MANAGE_CONFIGS)


def _payload(entity: core.Entity, changes: Mapping[str, float | None]) -> dict[str, Any]:
    return {"entity": entity.as_json(), "changes": dict(changes)}


def _review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    entity = core.entity_from_json(payload["entity"])
    changes = core.check_changes(entity, payload["changes"])
    before = actions.before_of(cluster, entity)
    error = actions.dry_run(cluster, entity, changes)
    rows = [
        [entity.name, d.key, d.op, d.before_text if before is not None else "unknown", d.after_text]
        for d in core.diff(before, changes)
    ]
    return review(
        ["entity", "quota", "change", "before", "after"],
        rows,
        ok=error is None,
        kafka="valid (Kafka's validate-only answer)" if error is None else _refusal(error),
        pinned=[entity.name, sorted((before or {}).items()) if before is not None else "unreadable"],
    )


def _refusal(error) -> str:
    """Kafka's refusal with its own words (its message names the key and value)."""
    return (
        f"{kafka_text(error)} {error.message}"
        if error.message and error.message not in error.operator_text
        else kafka_text(error)
    )


def prepare(actor, cluster, entity: core.Entity, changes: Mapping[str, object]) -> Prepared:
    """The change as it will run (checked values) with its diff and Kafka's dry run."""
    access.require(actor, cluster, access.MANAGE_CONFIGS)
    clean = core.check_changes(entity, changes)
    payload = _payload(entity, clean)
    shown = ", ".join(
        f"{k}={core.show_value(k, v)}" if v is not None else f"remove {k}" for k, v in clean.items()
    )
    return checked(
        Prepared(
            KIND,
            GATE,
            entity.target,
            payload,
            _review(actor, cluster, payload),
            f"quota {entity.name}: {shown}",
        )
    )


def _run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    """Setting the same values again, or removing keys already gone, changes nothing: a re-run converges."""
    entity = core.entity_from_json(payload["entity"])
    result = actions.alter_quotas(
        actor=actor,
        cluster=cluster,
        entity=entity,
        changes=payload["changes"],
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    if result.error is not None and result.error.retriable:
        raise Indeterminate(kafka_text(result.error))
    if result.error is not None:
        return False, kafka_text(result.error)
    return True, result.message or f"quotas of {entity.name} changed"


register(HeldKind(KIND, GATE, prepare, _review, _run))
