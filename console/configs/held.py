"""Held config changes, a topic's or a broker's: the diff with Kafka's validate-only answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import crypto
from console.changes.kinds import ChangeInvalid, HeldKind, Prepared, kafka_text, register
from console.configs import actions as configs
from console.configs.plan import HIDDEN, looks_secret
from console.kafka import ConfigChange, ConfigResource
from console.models.requests import RequestKind


def gate_kind(resource_type: str) -> str:
    """The change-control kind of a config change: topic configs and broker configs are apart."""
    return "config" if resource_type == "TOPIC" else "broker.config"


def _resource(payload: Mapping[str, Any]) -> ConfigResource:
    r = payload["resource"]
    return configs.topic_resource(r["name"]) if r["type"] == "TOPIC" else configs.broker_resource(r["name"])


def _changes(payload: Mapping[str, Any]) -> list[ConfigChange]:
    out = []
    for c in payload["changes"]:
        value = crypto.decrypt(c["value_encrypted"]) if c.get("value_encrypted") else c.get("value")
        out.append(ConfigChange(c["name"], c["op"], value))
    return out


def _review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The diff and Kafka's validate-only answer, as configs.alter_configs computes them."""
    result = configs.alter_configs(
        actor=actor,
        cluster=cluster,
        resource=_resource(payload),
        changes=_changes(payload),
        validate_only=True,
    )
    rows = [
        [d.name, d.op, HIDDEN if d.sensitive else d.old_display, HIDDEN if d.sensitive else d.new_display]
        for d in result.diffs
    ]
    return {
        "columns": ["config", "operation", "before", "after"],
        "rows": rows,
        "kafka": "valid (Kafka's validate-only answer)" if result.ok else kafka_text(result.error),
        "ok": result.ok,
        "pinned": [[d.name, d.old_value if not d.sensitive else None, d.old_source] for d in result.diffs],
    }


def prepare_config(actor, cluster, resource: ConfigResource, changes: list[ConfigChange]) -> Prepared:
    plain = [{"name": c.name, "op": c.op, "value": c.value} for c in changes]
    payload = {"resource": {"type": resource.type, "name": resource.name}, "changes": plain}
    review = _review(actor, cluster, payload)
    if not review["ok"]:
        raise ChangeInvalid([f"Kafka refused it in the dry run: {review['kafka']}"])
    secret = {row[0] for row in review["rows"] if row[3] == HIDDEN}
    for entry in plain:  # a secret value is stored encrypted, and never shown
        if entry["value"] is not None and (entry["name"] in secret or looks_secret(entry["name"])):
            entry["value_encrypted"] = crypto.encrypt(entry.pop("value"))
    what = f"topic {resource.name}" if resource.type == "TOPIC" else configs.target(resource)
    return Prepared(
        RequestKind.CHANGE_CONFIG, gate_kind(resource.type), configs.target(resource), payload, review,
        f"{len(changes)} config change(s) on {what}",
    )  # fmt: skip


def _run(actor, cluster, payload, request_id: str) -> tuple[bool, str]:
    result = configs.alter_configs(
        actor=actor,
        cluster=cluster,
        resource=_resource(payload),
        changes=_changes(payload),
        request_id=request_id,
    )
    return result.ok, result.message or ("applied" if result.ok else kafka_text(result.error))


register(
    HeldKind(
        name=RequestKind.CHANGE_CONFIG,
        gate=lambda p: gate_kind(p["resource"]["type"]),
        prepare=prepare_config,
        review=_review,
        run=_run,
    )
)
