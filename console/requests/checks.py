"""Self-service request checks: namespace, console policy and Kafka validate-only, per request kind.

Run on submit and again on approval (the cluster may have changed). Each check returns the clean
payload the worker will execute, or raises RequestInvalid naming every problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied

from console import access
from console.acls import core as acl_core
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.configs import plan as config_plan
from console.groups import actions as groups
from console.groups import reset_payload as group_reset
from console.groups.core import ResetPlanError
from console.groups.reads import target as group_target
from console.kafka import ConfigChange, KafkaOperationError, NewPartitions, NewTopic
from console.models import Cluster
from console.models.requests import RequestKind
from console.requests.kinds import GROUP_RESET
from console.topics import policy

_TOPIC_KINDS = (
    RequestKind.TOPIC_CREATE,
    RequestKind.TOPIC_CONFIG,
    RequestKind.TOPIC_PARTITIONS,
    RequestKind.TOPIC_DELETE,
)


class RequestInvalid(ValueError):
    """The request cannot be submitted (or approved) as it is; ``errors`` are shown on the form."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def _kafka_text(err: KafkaOperationError) -> str:
    return f"Kafka: {err.name}: {err.operator_text}"


@dataclass(frozen=True)
class Checked:
    resource: str
    payload: dict[str, Any]
    summary: str


def _namespace(user, cluster: Cluster, what: str, name: str) -> list[str]:
    if user is None or not access.can(user, cluster, access.REQUEST, name):
        return [f"{what} '{name[:120]}' is outside your namespaces on {cluster.name}."]
    return []


def _int(payload: Mapping, key: str, errors: list[str]) -> int:
    try:
        return int(payload.get(key))
    except (TypeError, ValueError):
        errors.append(f"{key.replace('_', ' ')} must be a whole number")
        return 0


def _mapping(payload: Mapping, key: str, errors: list[str]) -> dict:
    value = payload.get(key) or {}
    if not isinstance(value, Mapping):
        errors.append(f"{key} must be an object of names and values")
        return {}
    return dict(value)


def _check_topic_create(user, cluster, gw, payload) -> Checked:
    errors: list[str] = []
    name = str(payload.get("name", "")).strip()
    partitions, rf = _int(payload, "partitions", errors), _int(payload, "replication_factor", errors)
    cfg = {str(k): str(v) for k, v in _mapping(payload, "configs", errors).items()}
    if errors:
        raise RequestInvalid(errors)
    errors += _namespace(user, cluster, "Topic", name)
    rules = policy.rules_for(cluster)
    errors += [
        str(v)
        for v in policy.check_create(
            rules, name=name, partitions=partitions, replication_factor=rf, configs=cfg
        )
    ]
    if not errors:
        got = gw.create_topics([NewTopic(name, partitions, rf, None, cfg)], validate_only=True).get(name)
        if isinstance(got, KafkaOperationError):
            errors.append(_kafka_text(got))
    if errors:
        raise RequestInvalid(errors)
    clean = {"name": name, "partitions": partitions, "replication_factor": rf, "configs": cfg}
    return Checked(name, clean, f"create topic {name} ({partitions} partitions, RF {rf})")


def _current_topic(gw, name: str):
    meta = gw.describe_topics([name]).get(name)
    if isinstance(meta, KafkaOperationError):
        raise RequestInvalid([_kafka_text(meta)])
    return meta


def _check_topic_config(user, cluster, gw, payload) -> Checked:
    name = str(payload.get("topic", "")).strip()
    errors = _namespace(user, cluster, "Topic", name)
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
        raise RequestInvalid(errors)
    resource = configs.topic_resource(name)
    got = gw.describe_configs([resource]).get(resource)
    if isinstance(got, KafkaOperationError):
        raise RequestInvalid([_kafka_text(got)])
    try:
        config_plan.plan_changes(resource, got, changes)
        configs.check_policy(cluster, resource, changes)
    except (config_plan.ConfigPlanError, policy.PolicyViolation) as exc:
        raise RequestInvalid(list(getattr(exc, "errors", None) or [str(v) for v in exc.violations])) from None
    result = gw.incremental_alter_configs({resource: changes}, validate_only=True).get(resource)
    if isinstance(result, KafkaOperationError):
        raise RequestInvalid([_kafka_text(result)])
    clean = {"topic": name, "changes": [{"name": c.name, "op": c.op, "value": c.value} for c in changes]}
    shown = ", ".join(f"{c.op} {c.name}" + (f"={c.value}" if c.value is not None else "") for c in changes)
    return Checked(name, clean, f"change configs of {name}: {shown}")


def _check_topic_partitions(user, cluster, gw, payload) -> Checked:
    errors: list[str] = []
    name = str(payload.get("topic", "")).strip()
    total = _int(payload, "total_count", errors)
    errors += _namespace(user, cluster, "Topic", name)
    if errors:
        raise RequestInvalid(errors)
    current = len(_current_topic(gw, name).partitions)
    rules = policy.rules_for(cluster)
    if total <= current:
        errors.append(f"the new total must be more than the current {current} partitions")
    elif rules.max_partitions is not None and total > rules.max_partitions:
        errors.append(
            f"{total} partitions exceed this cluster's limit of {rules.max_partitions} [policy rule: max_partitions]"
        )
    if not errors:
        got = gw.create_partitions([NewPartitions(name, total)], validate_only=True).get(name)
        if isinstance(got, KafkaOperationError):
            errors.append(_kafka_text(got))
    if errors:
        raise RequestInvalid(errors)
    return Checked(
        name, {"topic": name, "total_count": total}, f"grow {name} from {current} to {total} partitions"
    )


def _check_topic_delete(user, cluster, gw, payload) -> Checked:
    name = str(payload.get("topic", "")).strip()
    errors = _namespace(user, cluster, "Topic", name)
    if errors:
        raise RequestInvalid(errors)
    meta = _current_topic(gw, name)
    reason = policy.protected_reason(policy.rules_for(cluster), name, meta.internal or name.startswith("__"))
    if reason:
        raise RequestInvalid([f"{name} cannot be deleted: {reason}"])
    return Checked(name, {"topic": name}, f"delete topic {name}")


def _check_acl_create(user, cluster, gw, payload) -> Checked:
    errors: list[str] = []
    fields = _mapping(payload, "binding", errors)
    if errors:
        raise RequestInvalid(errors)
    binding, errors = acl_core.validate_binding(fields)
    if binding is not None:
        errors += _namespace(user, cluster, "Principal", binding.principal)
        if binding.resource_type == "CLUSTER":
            errors.append("cluster-wide ACLs cannot be requested; ask an operator")
        else:
            errors += _namespace(user, cluster, "Resource", binding.resource_name)
    if errors:
        raise RequestInvalid(errors)
    return Checked(
        binding.principal, {"binding": acl_core.to_dict(binding)}, f"ACL: {acl_core.label(binding)}"
    )


def _check_group_reset(user, cluster, payload, *, approving: bool) -> Checked:
    """The group and every topic of the reset in the requester's namespaces. On submit the dry run
    is made (the groups area plans it) and attached with its digest; on approval the attached one
    is checked against its digest and the namespaces again (the worker compares it with the group
    as it is then, right before it runs)."""
    group_id = str(payload.get("group") or "").strip()
    if not group_id or len(group_id) > group_reset.MAX_GROUP_ID:
        raise RequestInvalid([f"name the consumer group (at most {group_reset.MAX_GROUP_ID} characters)"])
    try:
        spec = group_reset.spec_from_dict(payload.get("reset"))
        rows = group_reset.reviewed_rows(payload) if approving else None
    except ResetPlanError as exc:
        raise RequestInvalid(exc.errors) from None
    topics = {r[0] for r in rows} if rows else set(group_reset.named_topics(spec))
    errors = _namespace(user, cluster, "Group", group_id)
    errors += [e for t in sorted(topics) for e in _namespace(user, cluster, "Topic", t)]
    if errors:
        raise RequestInvalid(errors[:20])
    if rows is None:
        try:
            preview = groups.preview_reset_for_request(
                requester=user, cluster=cluster, group_id=group_id, spec=spec
            )
        except ResetPlanError as exc:
            raise RequestInvalid(exc.errors) from None
        except PermissionDenied as exc:
            raise RequestInvalid([f"The reset touches a topic outside your namespaces: {exc}"]) from None
        if len(preview.plan.rows) > group_reset.MAX_PARTITIONS:
            raise RequestInvalid(
                [
                    f"A reset request covers at most {group_reset.MAX_PARTITIONS} partitions "
                    f"({len(preview.plan.rows)} here): narrow the scope or ask an operator."
                ]
            )
        members = ""
        if preview.group is not None and preview.group.members:
            members = (
                f"the group had active members ({groups.members_text(preview.group)}); "
                "it must be empty when the reset runs"
            )
        dry_run = group_reset.dry_run(preview.plan, members)
        rows = dry_run["rows"]
        payload = {
            "group": group_id,
            "reset": group_reset.spec_to_dict(spec),
            "dry_run": dry_run,
            "plan_sha256": group_reset.digest(rows),
        }
    run, count = payload["dry_run"], len(rows)
    summary = (
        f"reset offsets of group {group_id}: {spec.describe()}; {count} partition{'s' if count != 1 else ''}, "
        f"{run.get('changed')} changing, lag {run.get('lag_before')} → {run.get('lag_after')}"
    )
    if run.get("members"):
        summary += f". At the dry run: {run['members']}"
    return Checked(group_target(group_id), dict(payload), summary)


_CHECKS = {
    RequestKind.TOPIC_CREATE: _check_topic_create,
    RequestKind.TOPIC_CONFIG: _check_topic_config,
    RequestKind.TOPIC_PARTITIONS: _check_topic_partitions,
    RequestKind.TOPIC_DELETE: _check_topic_delete,
    RequestKind.ACL_CREATE: _check_acl_create,
}


def check_request(
    *, requester, cluster: Cluster, kind: str, payload: Mapping[str, Any], approving: bool = False
) -> Checked:
    """Namespace, console policy and Kafka validate-only; raises RequestInvalid naming every problem.

    ``approving``: the stored payload is checked again before it is approved."""
    if kind not in _CHECKS and kind != GROUP_RESET:
        raise RequestInvalid([f"unknown request kind '{str(kind)[:40]}'"])
    if kind in (*_TOPIC_KINDS, GROUP_RESET) and cluster.controller_mode:
        what = "consumer group" if kind == GROUP_RESET else "topic"
        raise RequestInvalid(
            [f"this cluster is reached through its controllers (KIP-919): {what} requests need brokers"]
        )
    try:
        if kind == GROUP_RESET:
            return _check_group_reset(requester, cluster, payload, approving=approving)
        return _CHECKS[kind](requester, cluster, gateway_for(cluster), payload)
    except KafkaOperationError as exc:
        raise RequestInvalid([f"could not validate with Kafka: {exc.operator_text}"]) from None
