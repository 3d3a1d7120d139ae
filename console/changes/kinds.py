"""Per gated action kind: the dry run an approver reviews, the drift check, and the run.

Each kind turns the operator's input into a JSON payload (what will run, exactly) and a review
(what it will do, as the approver sees it: rows of before -> after). ``review`` is computed again
right before running; when its ``pinned`` part differs from the reviewed one the cluster drifted
and the change goes back for a fresh review.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from console import crypto
from console.configs import actions as configs
from console.configs.plan import HIDDEN, looks_secret
from console.groups import actions as groups
from console.kafka import ConfigChange, ConfigResource, KafkaOperationError
from console.models.requests import RequestKind
from console.requests import group_reset
from console.topics import cache as metadata_cache
from console.topics import delete as topic_delete


class ChangeInvalid(ValueError):
    """The action cannot be held for review as it is (``errors`` are shown on the form)."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Prepared:
    kind: str  # RequestKind value
    gate: str  # console.changes.gate.KINDS key
    resource: str
    payload: dict[str, Any]
    review: dict[str, Any]
    summary: str


@dataclass(frozen=True)
class Handler:
    gate: str
    review: Callable[[Any, Any, Mapping[str, Any]], dict[str, Any]]  # (actor, cluster, payload)
    run: Callable[
        [Any, Any, Mapping[str, Any], str], tuple[bool, str]
    ]  # (actor, cluster, payload, request_id)


def _kafka(err: KafkaOperationError) -> str:
    return f"Kafka: {err.name}: {err.operator_text}"


# -- config changes (a topic's or a broker's) ---------------------------------------------------


def _config_resource(payload: Mapping[str, Any]) -> ConfigResource:
    r = payload["resource"]
    return configs.topic_resource(r["name"]) if r["type"] == "TOPIC" else configs.broker_resource(r["name"])


def _config_changes(payload: Mapping[str, Any]) -> list[ConfigChange]:
    out = []
    for c in payload["changes"]:
        value = crypto.decrypt(c["value_encrypted"]) if c.get("value_encrypted") else c.get("value")
        out.append(ConfigChange(c["name"], c["op"], value))
    return out


def _config_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The diff and Kafka's validate-only answer, as configs.alter_configs computes them."""
    result = configs.alter_configs(
        actor=actor,
        cluster=cluster,
        resource=_config_resource(payload),
        changes=_config_changes(payload),
        validate_only=True,
    )
    rows = [
        [d.name, d.op, HIDDEN if d.sensitive else d.old_display, HIDDEN if d.sensitive else d.new_display]
        for d in result.diffs
    ]
    return {
        "columns": ["config", "operation", "before", "after"],
        "rows": rows,
        "kafka": "valid (Kafka's validate-only answer)" if result.ok else _kafka(result.error),
        "ok": result.ok,
        "pinned": [[d.name, d.old_value if not d.sensitive else None, d.old_source] for d in result.diffs],
    }


def prepare_config(actor, cluster, resource: ConfigResource, changes: list[ConfigChange]) -> Prepared:
    plain = [{"name": c.name, "op": c.op, "value": c.value} for c in changes]
    payload = {"resource": {"type": resource.type, "name": resource.name}, "changes": plain}
    review = _config_review(actor, cluster, payload)
    if not review["ok"]:
        raise ChangeInvalid([f"Kafka refused it in the dry run: {review['kafka']}"])
    secret = {row[0] for row in review["rows"] if row[3] == HIDDEN}
    for entry in plain:  # a secret value is stored encrypted, and never shown
        if entry["value"] is not None and (entry["name"] in secret or looks_secret(entry["name"])):
            entry["value_encrypted"] = crypto.encrypt(entry.pop("value"))
    what = f"topic {resource.name}" if resource.type == "TOPIC" else configs.target(resource)
    return Prepared(
        RequestKind.CHANGE_CONFIG, "config", configs.target(resource), payload, review,
        f"{len(changes)} config change(s) on {what}",
    )  # fmt: skip


def _config_run(actor, cluster, payload, request_id: str) -> tuple[bool, str]:
    result = configs.alter_configs(
        actor=actor,
        cluster=cluster,
        resource=_config_resource(payload),
        changes=_config_changes(payload),
        request_id=request_id,
    )
    return result.ok, result.message or ("applied" if result.ok else _kafka(result.error))


# -- topic deletion -------------------------------------------------------------------------------


def _delete_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    snap = metadata_cache.get_snapshot(cluster, refresh=True)
    rows, pinned = [], []
    for name in payload["topics"]:
        meta = snap.by_name.get(name)
        exists = meta is not None
        topic_id = str(getattr(meta, "topic_id", "") or "") if exists else ""
        parts = len(meta.partitions) if exists else 0
        rows.append([name, f"{parts} partitions" if exists else "does not exist", "deleted"])
        pinned.append([name, exists, topic_id, parts])
    refused = topic_delete.delete_preview(actor=actor, cluster=cluster, names=list(payload["topics"]))
    blocked = [f"{n}: {why}" for n, why in refused if why]
    return {
        "columns": ["topic", "before", "after"],
        "rows": rows,
        "kafka": "; ".join(blocked) or "every topic exists and may be deleted",
        "ok": not blocked and all(p[1] for p in pinned),
        "pinned": pinned,
    }


def prepare_topic_delete(actor, cluster, names: list[str]) -> Prepared:
    names = sorted(dict.fromkeys(n for n in names if n))
    if not names:
        raise ChangeInvalid(["Select at least one topic to delete."])
    payload = {"topics": names}
    review = _delete_review(actor, cluster, payload)
    if not review["ok"]:
        raise ChangeInvalid([review["kafka"]])
    return Prepared(
        RequestKind.CHANGE_TOPIC_DELETE, "topic.delete", f"topic:{names[0]}" + (" …" if len(names) > 1 else ""),
        payload, review, f"delete {len(names)} topic(s): {', '.join(names[:5])}",
    )  # fmt: skip


def _delete_run(actor, cluster, payload, request_id: str) -> tuple[bool, str]:
    names = list(payload["topics"])
    result = topic_delete.delete_topics(
        actor=actor,
        cluster=cluster,
        names=names,
        confirmation=topic_delete.delete_confirmation(names),
        request_id=request_id,
    )
    bad = [o for o in result.outcomes if not o.ok]
    if bad:
        return False, "; ".join(f"{o.name}: {o.message or o.status}" for o in bad)
    return True, f"deleted {len(names)} topic(s)"


# -- consumer group offset reset -------------------------------------------------------------------


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


HANDLERS: dict[str, Handler] = {
    RequestKind.CHANGE_CONFIG: Handler("config", _config_review, _config_run),
    RequestKind.CHANGE_TOPIC_DELETE: Handler("topic.delete", _delete_review, _delete_run),
    RequestKind.CHANGE_GROUP_RESET: Handler("group.reset", _reset_review, _reset_run),
}
