"""The toy area's held kind: a retention change with its dry run (before -> after), pinned to the
retention the approver saw."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import gate
from console.changes.kinds import HeldKind, Prepared, checked, register, review
from tests.toy_area import actions

KIND = "change.retention"  # the held kind (stored with the change request)
GATE = gate.declare(actions.GATE, "Retention changes", access.MANAGE_CONFIGS)


def _review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    before = actions.retention_of(cluster, [payload["topic"]])[payload["topic"]]
    return review(
        ["topic", "retention.ms before", "after"],
        [[payload["topic"], before, str(payload["retention_ms"])]],
        ok=True,
        kafka="the topic exists",
        pinned=[before],
    )


def prepare(actor, cluster, topic: str, retention_ms: int) -> Prepared:
    access.require(actor, cluster, access.MANAGE_CONFIGS)
    actions.check_input(topic, retention_ms)
    payload = {"topic": topic, "retention_ms": retention_ms}
    return checked(
        Prepared(
            KIND, GATE, f"topic:{topic}", payload, _review(actor, cluster, payload), f"retention of {topic}"
        )
    )


def _run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    return actions.set_retention(
        actor=actor, cluster=cluster, topic=payload["topic"], retention_ms=payload["retention_ms"]
    )


register(HeldKind(KIND, GATE, prepare, _review, _run))
