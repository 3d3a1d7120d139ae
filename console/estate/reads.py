"""Reading the estate: the live state of a cluster or a namespace (one metadata read, DescribeConfigs
for the topics in one batched call per broker, DescribeAcls once), its export as YAML, and the plan
of a file against it, checked by Kafka's validate-only (CreateTopics, CreatePartitions and
IncrementalAlterConfigs with validate_only, each one batched request). Reading needs cluster view
only; nothing here changes the cluster."""

from __future__ import annotations

from collections.abc import Iterable

from console import access
from console.clusters.actions import gateway_for
from console.estate import core
from console.estate.core import Estate, TopicState
from console.estate.plan import Plan, diff, pin, topic_target
from console.kafka import ConfigChange, ConfigResource, KafkaOperationError, NewPartitions, NewTopic
from console.topics import cache as metadata_cache
from console.topics import policy as topic_policy

OVERRIDE = "DYNAMIC_TOPIC_CONFIG"  # Kafka's source of a topic's own (dynamic) config


def _overrides(gw, names: list[str]) -> dict[str, dict[str, str]]:
    """Each topic's overridden configs (sensitive ones, which Kafka never returns, are left out)."""
    if not names:
        return {}
    resources = [ConfigResource("TOPIC", n) for n in names]
    got = gw.describe_configs(resources, include_documentation=False)
    out: dict[str, dict[str, str]] = {}
    for res in resources:
        entries = got[res]
        if isinstance(entries, KafkaOperationError):
            raise entries
        out[res.name] = {
            k: e.value
            for k, e in entries.items()
            if e.source == OVERRIDE and not e.sensitive and e.value is not None
        }
    return out


def live_state(cluster, namespace: str = "", names: Iterable[str] | None = None) -> Estate:
    """The cluster's topics in the namespace (or only ``names`` of them) and its ACL bindings."""
    snap = metadata_cache.get_snapshot(cluster, refresh=True)
    wanted = set(names) if names is not None else None
    metas = [
        snap.by_name[n]
        for n in snap.public_names
        if core.topic_in_scope(n, namespace) and (wanted is None or n in wanted) and n in snap.by_name
    ]
    gw = gateway_for(cluster)
    configs = _overrides(gw, [m.name for m in metas])
    topics = tuple(
        TopicState(
            m.name,
            len(m.partitions),
            len(m.partitions[0].replicas) if m.partitions else 0,
            configs.get(m.name, {}),
        )
        for m in metas
    )
    acls = tuple(b for b in gw.describe_acls() if core.acl_in_scope(b, namespace))
    return Estate(cluster.name, namespace, topics, acls)


def export_estate(*, actor, cluster, namespace: str = "") -> str:
    """The cluster's (or the namespace's) desired state as the estate YAML document."""
    access.require(actor, cluster, access.VIEW)
    return core.dump(live_state(cluster, namespace))


def export_document(*, actor, cluster, namespace: str = "") -> dict:
    """The same document as plain data (the API's JSON export)."""
    access.require(actor, cluster, access.VIEW)
    return core.document(live_state(cluster, namespace))


def validate(cluster, plan: Plan) -> dict[str, str]:
    """Kafka's validate-only answer for every topic change of the plan: {resource: refusal}."""
    gw = gateway_for(cluster)
    p = plan.payload
    refusals: dict[str, str] = {}

    def note(results: dict, key) -> None:
        for name, r in results.items():
            if isinstance(r, KafkaOperationError):
                refusals[topic_target(key(name))] = f"Kafka: {r.name}: {r.operator_text}"

    creates = [
        NewTopic(t["name"], t["partitions"], t["replication_factor"], None, dict(t.get("configs") or {}))
        for t in p["create_topics"]
    ]
    if creates:
        note(gw.create_topics(creates, validate_only=True), lambda n: n)
    grows = [NewPartitions(g["topic"], g["to"]) for g in p["partitions"]]
    if grows:
        note(gw.create_partitions(grows, validate_only=True), lambda n: n)
    alters = {
        ConfigResource("TOPIC", c["topic"]): [ConfigChange(k, "SET", v) for k, v in c["set"].items()]
        + [ConfigChange(k, "DELETE") for k in c["delete"]]
        for c in p["configs"]
    }
    if alters:
        note(gw.incremental_alter_configs(alters, validate_only=True), lambda res: res.name)
    return refusals


def policy_refusals(cluster, plan: Plan) -> dict[str, str]:
    """The console's topic policy on every topic change of the plan (what the topics and configs
    actions would refuse at the run): {resource: refusal}. Protected topics are never deleted."""
    rules = topic_policy.rules_for(cluster)
    p = plan.payload
    found: dict[str, list] = {}
    for t in p["create_topics"]:
        found[t["name"]] = topic_policy.check_create(
            rules, name=t["name"], partitions=t["partitions"], replication_factor=t["replication_factor"],
            configs=t.get("configs") or {},
        )  # fmt: skip
    for g in p["partitions"]:
        if rules.max_partitions is not None and g["to"] > rules.max_partitions:
            why = f"{g['to']} partitions exceed this cluster's limit of {rules.max_partitions}"
            found.setdefault(g["topic"], []).append(topic_policy.Violation("max_partitions", why))
    for c in p["configs"]:
        changes = [("SET", k, v) for k, v in c["set"].items()] + [("DELETE", k, None) for k in c["delete"]]
        found.setdefault(c["topic"], []).extend(
            topic_policy.check_alter(rules, resource=c["topic"], changes=changes)
        )
    for d in p["delete_topics"]:
        reason = topic_policy.protected_reason(rules, d["topic"], internal=False)
        if reason:
            found.setdefault(d["topic"], []).append(topic_policy.Violation("protected_topics", reason))
    return {topic_target(n): "console policy: " + "; ".join(map(_rule, vs)) for n, vs in found.items() if vs}


def _rule(v) -> str:
    return v.message if "[policy rule:" in v.message else f"{v.message} [policy rule: {v.rule}]"


def plan_estate(*, actor, cluster, text: str, delete: bool = False) -> Plan:
    """The plan of a file against the live cluster: parsed (EstateParseError names each problem and
    its line), diffed per resource, and every topic change checked by Kafka's validate-only."""
    access.require(actor, cluster, access.VIEW)
    want = core.parse(text)
    live = live_state(cluster, want.namespace)
    plan = diff(want, live, cluster=cluster.name, delete=delete)
    plan.answers = {**validate(cluster, plan), **policy_refusals(cluster, plan)}
    plan.pinned = pin(plan.payload, live)
    return plan
