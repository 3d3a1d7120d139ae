"""Held config changes, a topic's or a broker's: the diff with Kafka's validate-only answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access, crypto
from console.changes import gate
from console.changes.kinds import (
    ChangeInvalid,
    Checked,
    HeldKind,
    Indeterminate,
    Prepared,
    Requested,
    kafka_text,
    outside_namespace,
    register,
)
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.configs import plan as config_plan
from console.configs.plan import HIDDEN, looks_secret
from console.kafka import ConfigChange, ConfigResource, KafkaOperationError
from console.models.requests import RequestKind
from console.topics import policy

# The policy kinds of this area (console/changes/gate.py lists what the areas declare).
TOPIC_CONFIG = gate.declare("config", "Topic config changes", access.MANAGE_CONFIGS)
BROKER_CONFIG = gate.declare("broker.config", "Broker config changes", access.MANAGE_CONFIGS)


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


def _run(
    actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False
) -> tuple[bool, str]:
    try:
        result = configs.alter_configs(
            actor=actor,
            cluster=cluster,
            resource=_resource(payload),
            changes=_changes(payload),
            on_behalf_of=on_behalf_of,
            request_id=request_id,
        )
    except policy.PolicyViolation as exc:  # the plan's refusals (ConfigPlanError) are ValueErrors
        return False, str(exc)
    if not result.ok and result.error is not None and result.error.retriable:
        raise Indeterminate(kafka_text(result.error))  # setting the same values again converges
    return result.ok, result.message or ("applied" if result.ok else kafka_text(result.error))


def _request(user, cluster, payload, *, approving: bool = False) -> Checked:
    """A requester's topic config change: in their namespaces, the console's policy, Kafka's
    validate-only answer."""
    name = str(payload.get("topic", "")).strip()
    errors = outside_namespace(user, cluster, "Topic", name)
    raw = payload.get("changes") or []
    raw = raw if isinstance(raw, list) else [raw]
    changes = [
        ConfigChange(
            str(c.get("name", "")),
            str(c.get("op", "SET")).upper(),
            None if c.get("value") is None else str(c["value"]),
        )
        for c in raw
        if isinstance(c, Mapping)
    ]
    if not changes or len(changes) != len(raw):
        errors.append("list at least one config change as name, op and value")
    if errors:
        raise ChangeInvalid(errors)
    resource, gw = configs.topic_resource(name), gateway_for(cluster)
    got = gw.describe_configs([resource]).get(resource)
    if isinstance(got, KafkaOperationError):
        raise ChangeInvalid([kafka_text(got)])
    try:
        config_plan.plan_changes(resource, got, changes)
        configs.check_policy(cluster, resource, changes)
    except (config_plan.ConfigPlanError, policy.PolicyViolation) as exc:
        raise ChangeInvalid(list(getattr(exc, "errors", None) or [str(v) for v in exc.violations])) from None
    result = gw.incremental_alter_configs({resource: changes}, validate_only=True).get(resource)
    if isinstance(result, KafkaOperationError):
        raise ChangeInvalid([kafka_text(result)])
    clean = {"topic": name, "changes": [{"name": c.name, "op": c.op, "value": c.value} for c in changes]}
    shown = ", ".join(f"{c.op} {c.name}" + (f"={c.value}" if c.value is not None else "") for c in changes)
    return Checked(name, clean, f"change configs of {name}: {shown}")


def _requested(p: Mapping[str, Any]) -> dict[str, Any]:
    return {"resource": {"type": "TOPIC", "name": p["topic"]}, "changes": list(p["changes"])}


register(
    HeldKind(
        name=RequestKind.CHANGE_CONFIG,
        gate=lambda p: gate_kind(p["resource"]["type"]),
        prepare=prepare_config,
        review=_review,
        run=_run,
        requested=Requested(RequestKind.TOPIC_CONFIG, _request, _requested, "topic"),
    )
)
