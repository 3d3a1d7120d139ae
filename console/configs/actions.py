"""Topic and broker configs (KIP-133 describe, KIP-339 incremental alter).

Sensitive values are never shown, logged or audited: Kafka does not return them, the diff
shows them as hidden, and the audit event masks them (before, after and the requested value).
Every alter computes a diff first (``plan_changes``, pure), checks the console policy for
topics, runs Kafka's validate-only, and only then applies — or stops there for a dry run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from django.conf import settings

from console import access
from console.audit import outcomes as outcomes_log
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.configs import audit_names
from console.configs.plan import (
    HIDDEN,
    NOT_SET,
    ConfigDiff,
    _set_source,
    plan_changes,
    reflects,
    source_label,
)
from console.formatting import human_config_value
from console.kafka import ConfigChange, ConfigEntry, ConfigResource, KafkaOperationError
from console.topics import cache as metadata_cache
from console.topics import policy

# Where a SET lands, per resource.


def topic_resource(name: str) -> ConfigResource:
    return ConfigResource("TOPIC", name)


def broker_resource(broker_id: int | str | None) -> ConfigResource:
    """A broker's configs, or (None / "") the cluster-wide dynamic defaults."""
    return ConfigResource("BROKER", "" if broker_id in (None, "") else str(broker_id))


def target(resource: ConfigResource) -> str:
    """How a config resource is named in the audit trail."""
    if resource.type == "TOPIC":
        return f"topic:{resource.name}"
    return f"broker:{resource.name}" if resource.name else "broker:default"


# -- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigRow:
    """One config as the page shows it (``value`` is never a sensitive value)."""

    name: str
    value: str | None
    source: str
    read_only: bool
    sensitive: bool
    is_override: bool
    documentation: str
    type: str | None

    @property
    def source_label(self) -> str:
        return source_label(self.source)

    @property
    def display_value(self) -> str:
        if self.sensitive:
            return HIDDEN
        return NOT_SET if self.value is None else self.value

    @property
    def human_value(self) -> str | None:
        """What the raw value means ("7 d", "1 GiB", "unlimited"), or None to show it raw only."""
        return None if self.sensitive else human_config_value(self.name, self.value)

    @property
    def non_default(self) -> bool:
        """Set somewhere (topic, broker, cluster default or server.properties), not Kafka's built-in default."""
        return self.source != "DEFAULT_CONFIG"

    @property
    def editable(self) -> bool:
        return not self.read_only


def _rows(entries: Mapping[str, ConfigEntry], resource: ConfigResource) -> list[ConfigRow]:
    override = _set_source(resource)
    rows = [
        ConfigRow(
            e.name,
            None if e.sensitive else e.value,
            e.source,
            e.read_only,
            e.sensitive,
            e.source == override,
            e.documentation or "",
            e.type,
        )
        for e in entries.values()
    ]
    return sorted(rows, key=lambda r: (not r.is_override, r.source == "DEFAULT_CONFIG", r.name))


@dataclass(frozen=True)
class ConfigView:
    resource: ConfigResource
    rows: list[ConfigRow]  # every entry Kafka returned
    overrides_only: bool = False  # the page shows only the entries not at Kafka's built-in default

    @property
    def overrides(self) -> list[ConfigRow]:
        return [r for r in self.rows if r.is_override]

    @cached_property
    def shown(self) -> list[ConfigRow]:
        """The rows the page lists: all of them, or (overrides only) the non-default ones."""
        return [r for r in self.rows if r.non_default] if self.overrides_only else self.rows


def _describe(gw, resource: ConfigResource) -> dict[str, ConfigEntry]:
    got = gw.describe_configs([resource])[resource]
    if isinstance(got, KafkaOperationError):
        raise got
    return got


def _catalogue(gw, resource: ConfigResource, entries: dict[str, ConfigEntry]) -> dict[str, ConfigEntry]:
    """Every key that could be set: the cluster default only lists what is set, so ask a broker."""
    if resource.type != "BROKER" or resource.name:
        return entries
    brokers = gw.describe_cluster().brokers
    if not brokers:
        return entries
    return {**_describe(gw, broker_resource(brokers[0].id)), **entries}


def describe_configs(*, actor, cluster, resource: ConfigResource, overrides_only: bool = False) -> ConfigView:
    """Every entry with value, source, read-only and sensitive flags; overrides first.

    ``overrides_only`` keeps the entries whose source is not Kafka's built-in default.
    """
    access.require(actor, cluster, access.VIEW)
    gw = gateway_for(cluster)
    return ConfigView(resource, _rows(_describe(gw, resource), resource), overrides_only)


def broker_ids(cluster) -> list[int]:
    """The brokers whose configs can be opened (from the cached metadata)."""
    try:
        return metadata_cache.get_snapshot(cluster).broker_ids
    except KafkaOperationError:  # e.g. controller mode (no metadata); the page still shows the configs
        return []


def check_policy(cluster, resource: ConfigResource, changes: list[ConfigChange]) -> None:
    """Topic configs obey the cluster's policy (allowed keys, value ranges)."""
    if resource.type != "TOPIC":
        return
    meta = metadata_cache.get_snapshot(cluster).by_name.get(resource.name)
    policy.enforce(policy.check_internal(resource.name, bool(meta and meta.internal)))
    rules = policy.rules_for(cluster)
    policy.enforce(
        policy.check_alter(rules, resource=resource.name, changes=[(c.op, c.name, c.value) for c in changes])
    )


# -- altering ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlterResult:
    resource: ConfigResource
    diffs: list[ConfigDiff]
    validate_only: bool
    ok: bool
    error: KafkaOperationError | None = None
    message: str = ""
    event_id: int | None = None
    unconfirmed: tuple[str, ...] = ()  # applied, but no re-read within the bound showed these keys changed

    @property
    def confirmed(self) -> bool:
        return self.ok and not self.validate_only and not self.unconfirmed


def preview_changes(
    *, actor, cluster, resource: ConfigResource, changes: list[ConfigChange]
) -> list[ConfigDiff]:
    """The diff the operator confirms before validating or applying."""
    access.require(actor, cluster, access.MANAGE_CONFIGS)
    gw = gateway_for(cluster)
    entries = _describe(gw, resource)
    diffs = plan_changes(resource, entries, changes, _catalogue(gw, resource, entries))
    check_policy(cluster, resource, changes)
    return diffs


def _snapshot(
    diffs: list[ConfigDiff], entries: Mapping[str, ConfigEntry] | None, new: bool, unconfirmed=()
) -> dict:
    """Before: what Kafka reported. After: what Kafka reports now, or the requested value where unconfirmed."""
    if new and entries is not None:
        return {
            d.name: d.new_value if d.name in unconfirmed else getattr(entries.get(d.name), "value", None)
            for d in diffs
        }
    return {d.name: (d.new_value if new else d.old_value) for d in diffs}


# -- confirming ----------------------------------------------------------------------------------
# Kafka answers a config change once its controller has committed it; each broker applies it when it
# replays the metadata log, so the broker that answers a describe right after may not have it yet.


def _pending(gw, resource: ConfigResource, diffs: list[ConfigDiff]) -> tuple[dict | None, list[str]]:
    """(the resource's configs now, the keys some broker does not show changed yet)."""
    try:
        entries = _describe(gw, resource)
    except KafkaOperationError:
        return None, [d.name for d in diffs]
    layer = _set_source(resource)
    pending = {d.name for d in diffs if not reflects(d, entries.get(d.name), layer)}
    if resource.type == "BROKER" and not resource.name and len(pending) < len(diffs):
        pending |= _pending_on_brokers(gw, diffs, layer)  # a cluster default must reach every broker
    return entries, [d.name for d in diffs if d.name in pending]


def _pending_on_brokers(gw, diffs: list[ConfigDiff], layer: str) -> set[str]:
    try:
        nodes = [broker_resource(b.id) for b in gw.describe_cluster().brokers]
        seen = gw.describe_configs(nodes, include_documentation=False, keys=[d.name for d in diffs])
    except KafkaOperationError:
        return {d.name for d in diffs}
    # A broker that cannot answer is down: it applies the log when it is back.
    views = [v for v in seen.values() if not isinstance(v, KafkaOperationError)]
    return {d.name for d in diffs for v in views if not reflects(d, v.get(d.name), layer, reported=False)}


def _confirm(gw, resource: ConfigResource, diffs: list[ConfigDiff]) -> tuple[dict | None, list[str]]:
    """Re-read until every broker shows the change, for at most CONFIG_CONFIRM_TIMEOUT_S."""
    deadline = time.monotonic() + settings.CONFIG_CONFIRM_TIMEOUT_S
    while True:
        entries, pending = _pending(gw, resource, diffs)
        left = deadline - time.monotonic()
        if not pending or left <= 0:
            return entries, pending
        time.sleep(min(settings.CONFIG_CONFIRM_INTERVAL_S, left))


def _unconfirmed_message(resource: ConfigResource, pending: list[str]) -> str:
    where = "every broker" if resource.type == "BROKER" and not resource.name else "Kafka"
    return (
        f"Kafka accepted the change, but {where} did not show {', '.join(pending)} changed within "
        f"{settings.CONFIG_CONFIRM_TIMEOUT_S:g} s (brokers apply configs from the metadata log): "
        "the audit records the requested value, not yet confirmed."
    )


@refused_as(audit_names.CONFIG_ALTER, targets=lambda k: [target(k["resource"])] if k.get("resource") else [])
def alter_configs(
    *,
    actor,
    cluster,
    resource: ConfigResource,
    changes: list[ConfigChange],
    validate_only: bool = False,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> AlterResult:
    """Diff → policy → Kafka validate-only → apply (unless a dry run) → re-read → audit (masked).

    Raises ConfigPlanError / PolicyViolation before anything reaches Kafka, and
    KafkaOperationError when the current configs cannot be read.
    """
    access.require(actor, cluster, access.MANAGE_CONFIGS)
    if not validate_only:
        gate.check(actor, cluster, "config" if resource.type == "TOPIC" else "broker.config")
    gw = gateway_for(cluster)
    entries = _describe(gw, resource)
    catalogue = _catalogue(gw, resource, entries)
    diffs = plan_changes(resource, entries, changes, catalogue)
    check_policy(cluster, resource, changes)
    sensitive = sorted(
        {d.name for d in diffs if d.sensitive} | {k for k, e in catalogue.items() if e.sensitive}
    )
    request = {resource: [ConfigChange(c.name, c.op, c.value) for c in changes]}
    error = _one(gw, request, resource, validate_only=True)
    after_entries = None
    pending: list[str] = []
    message = ""
    params = {
        "resource": {"type": resource.type, "name": resource.name},
        "validate_only": validate_only,
        "changes": {c.name: {"op": c.op, "value": c.value} for c in changes},
    }
    req = None
    if error is None and not validate_only:
        req = outcomes_log.requested(
            actor=actor,
            action=audit_names.CONFIG_ALTER,
            cluster=cluster,
            targets=[target(resource)],
            params=params,
            source_ip=source_ip,
            on_behalf_of=on_behalf_of,
            request_id=request_id,
            sensitive_keys=sensitive,
        )
        error = _one(gw, request, resource, validate_only=False)
        if error is None or error.name == "REQUEST_TIMED_OUT":
            after_entries, pending = _confirm(gw, resource, diffs)
        if error is not None and error.name == "REQUEST_TIMED_OUT":
            if not pending:
                error, message = None, "Kafka answered late; re-reading shows the change applied."
            else:
                message = (
                    "The request timed out and re-reading does not show the change (it may still apply)."
                )
        elif error is None and pending:
            message = _unconfirmed_message(resource, pending)
        if resource.type == "TOPIC":
            snap = metadata_cache.peek(cluster)
            if snap is not None:
                snap.configs.pop(resource.name, None)
    ok = error is None
    outcome = outcomes_log.change_outcome(error, dry_run=validate_only)
    if error is None and not validate_only:
        outcome["confirmed"] = not pending
        if pending:
            outcome.update(unconfirmed=pending, message=message)
    notes = {d.name: d.applies_note for d in diffs if d.applies_note}
    if notes and ok and not validate_only:
        outcome["applies"] = notes
    event_id = outcomes_log.settle_or_record(
        req,
        actor=actor,
        action=audit_names.CONFIG_ALTER_VALIDATE if validate_only else audit_names.CONFIG_ALTER,
        cluster=cluster,
        targets=[target(resource)],
        params=params,
        before=_snapshot(diffs, None, new=False),
        after=_snapshot(diffs, after_entries, new=True, unconfirmed=pending) if ok else None,
        outcomes={target(resource): outcome},
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
        sensitive_keys=sensitive,
    )
    return AlterResult(
        resource, diffs, validate_only, ok, error, message, event_id, tuple(pending) if ok else ()
    )


def _one(gw, request, resource, *, validate_only: bool) -> KafkaOperationError | None:
    try:
        result = gw.incremental_alter_configs(request, validate_only=validate_only).get(resource)
    except KafkaOperationError as exc:
        return exc
    return result if isinstance(result, KafkaOperationError) else None


def _reread_configs(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the current value of every config the change named (masked if secret)."""
    resource = ConfigResource(params["resource"]["type"], params["resource"]["name"])
    entries = _describe(gateway_for(cluster), resource)
    values = {}
    for name in params.get("changes", {}):
        entry = entries.get(name)
        values[name] = audit.MASK if entry is not None and entry.sensitive else getattr(entry, "value", None)
    return {target(resource): values}


outcomes_log.register_reader(audit_names.CONFIG_ALTER, _reread_configs)
