"""Topics: list, describe, create (one or a batch), delete, add partitions.

Every mutation: ``access.require`` → console policy → one batched gateway call (optionally
``validate_only``) → a timeout is re-read instead of assumed failed → the audit event with the
per-topic outcomes, in one transaction. Kafka is never called while a transaction is open.

These run in the request: each is one batched Kafka request bounded by the cluster's timeout,
so a worker would only add latency (the 1,000-topic batch benchmark measures this path).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from console import access
from console.audit import outcomes as outcomes_log
from console.audit.refusals import refused_as
from console.batch_result import BatchOutcomes
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import (
    KafkaOperationError,
    NewPartitions,
    NewTopic,
)
from console.topics import audit_names, namespaces, policy
from console.topics import cache as metadata_cache
from console.topics.batch import TopicSpec
from console.topics.reads import target

TIMEOUT = "REQUEST_TIMED_OUT"


# -- mutations -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicOutcome:
    """One topic's result: ``status`` is what the table shows, ``ok`` whether it did what was asked."""

    name: str
    ok: bool
    status: str
    message: str = ""
    error_name: str = ""
    warning: str = ""

    def audit(self) -> dict:
        data = {"ok": self.ok, "status": self.status}
        if self.error_name:
            data["error"] = self.error_name
        if self.message:
            data["message"] = self.message
        return data


@dataclass(frozen=True)
class BatchResult(BatchOutcomes[TopicOutcome]):
    outcomes: list[TopicOutcome]
    validate_only: bool = False
    event_id: int | None = None

    @property
    def partial(self) -> bool:
        return 0 < self.ok_count < len(self.outcomes)


_STATUS_OF_ERROR = {
    "TOPIC_ALREADY_EXISTS": "already exists",
    "POLICY_VIOLATION": "refused by Kafka policy",
    **dict.fromkeys(
        ("INVALID_TOPIC_EXCEPTION", "INVALID_PARTITIONS", "INVALID_REPLICATION_FACTOR"), "invalid"
    ),
    **dict.fromkeys(("INVALID_REPLICA_ASSIGNMENT", "INVALID_CONFIG", "INVALID_REQUEST"), "invalid"),
}


def _failure(name: str, err: KafkaOperationError, status: str = "failed") -> TopicOutcome:
    collision = policy.kafka_collision(err.message) if err.name == "INVALID_TOPIC_EXCEPTION" else None
    if collision is not None:  # Kafka's generic text would blame the characters, which are fine
        return TopicOutcome(name, False, "name collides", policy.collision_text(name, collision[1]), err.name)
    status = _STATUS_OF_ERROR.get(err.name, status)
    detail = err.message if err.message and err.message != err.name else ""
    message = err.operator_text + (f" ({detail})" if detail and detail not in err.operator_text else "")
    return TopicOutcome(name, False, status, message, err.name)


def _broker_ids(cluster, gw) -> list[int] | None:
    try:
        return [b.id for b in gw.describe_cluster().brokers]
    except KafkaOperationError:
        return None


def _down_brokers(cluster, live: list[int] | None, assignment) -> set[int]:
    """Brokers an assignment names that Metadata does not list now but the cluster's replica lists do
    (stopped or fenced): the policy names them as not reachable rather than unknown. Read only when an
    assignment names a broker Metadata did not list."""
    missing = {b for r in assignment for b in r} - set(live or ())
    if live is None or not missing:
        return set()
    try:
        snap = metadata_cache.get_snapshot(cluster)
    except KafkaOperationError:
        return set()
    named = {
        b for t in snap.by_name.values() for p in t.partitions for b in (*p.replicas, *p.offline_replicas)
    }
    return missing & named


def _existing_names(cluster) -> list[str]:
    """Topic names from a fresh-enough cached snapshot, without fetching (for collision warnings)."""
    snap = metadata_cache.peek(cluster)
    return list(snap.by_name) if snap is not None else []


def _still_there(gw, names: list[str]) -> dict[str, bool | None]:
    """After a timeout: does each topic exist now? None when even that cannot be read."""
    if not names:
        return {}
    try:
        got = gw.describe_topics(names)
    except KafkaOperationError:
        return dict.fromkeys(names)
    out: dict[str, bool | None] = {}
    for name, value in got.items():
        if not isinstance(value, KafkaOperationError):
            out[name] = True
        else:
            out[name] = False if value.name == "UNKNOWN_TOPIC_OR_PARTITION" else None
    return out


def _record(
    *, outcomes: list[TopicOutcome], req: outcomes_log.Requested | None = None, **record
) -> int | None:
    """The outcome event (actor, action, cluster, params, before, after, source_ip, on_behalf_of,
    request_id); with ``req``, settled against its "requested" event (None if it is owed)."""
    return outcomes_log.settle_or_record(
        req,
        targets=[target(o.name) for o in outcomes],
        outcomes={target(o.name): o.audit() for o in outcomes},
        **record,
    )


def _requested(actor, cluster, action, names, params, source_ip, on_behalf_of, request_id):
    """The "requested" event written before Kafka is called (raises, and nothing is sent, if it cannot)."""
    return outcomes_log.requested(
        actor=actor,
        action=action,
        cluster=cluster,
        targets=[target(n) for n in names],
        params=params,
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )


def _listed_once(outcome: TopicOutcome, twice: bool) -> TopicOutcome:
    if not twice:
        return outcome
    note = "The batch lists this topic more than once: only its first listing was used."
    return replace(outcome, warning=f"{outcome.warning} {note}".strip())


@refused_as(
    audit_names.TOPIC_CREATE,
    policy.PolicyViolation,
    targets=lambda k: [f"topic:{s.name}" for s in k.get("specs") or ()],
)
def create_topics(
    *,
    actor,
    cluster,
    specs: list[TopicSpec],
    validate_only: bool = False,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> BatchResult:
    """Create topics in one batched CreateTopics request; every topic gets its own outcome.

    Specs that break the console policy are not sent (status "refused by policy"); the rest
    go to Kafka together. Raises PolicyViolation only for a batch over the size limit.
    """
    access.require(actor, cluster, access.MANAGE_TOPICS)
    if not validate_only:
        gate.check(actor, cluster, "topic.create")
    rules = policy.rules_for(cluster)
    policy.enforce(policy.check_batch_size(rules, len(specs)))
    gw = gateway_for(cluster)
    broker_ids = _broker_ids(cluster, gw)
    existing = policy.collision_index(_existing_names(cluster))
    outcomes: dict[str, TopicOutcome] = {}
    warnings: dict[str, str] = {}
    to_send: list[NewTopic] = []
    first: dict[str, TopicSpec] = {}  # a topic listed more than once: its first listing is the one used
    twice: set[str] = set()
    for spec in specs:
        if spec.name in first:
            twice.add(spec.name)
            continue
        merged, applied = namespaces.with_defaults(rules.namespace_rules, spec.name, spec.configs)
        spec = replace(spec, configs=merged)  # the namespace's defaults for the keys not given
        first[spec.name] = spec
        violations = policy.check_create(
            rules,
            name=spec.name,
            partitions=len(spec.assignment) if spec.assignment else spec.partitions,
            replication_factor=len(spec.assignment[0]) if spec.assignment else spec.replication_factor,
            configs=spec.configs,
            broker_count=len(broker_ids) if broker_ids is not None else None,
        )
        if spec.assignment is not None:
            violations += policy.check_assignment(
                [list(r) for r in spec.assignment],
                broker_ids,
                spec.name,
                _down_brokers(cluster, broker_ids, spec.assignment),
            )
        if violations:
            text = "; ".join(f"{v.message} [policy rule: {v.rule}]" for v in violations)
            outcomes[spec.name] = TopicOutcome(spec.name, False, "refused by policy", text, "POLICY")
            continue
        warnings[spec.name] = " ".join(
            w for w in (namespaces.applied_text(applied), policy.collision_warning(spec.name, existing)) if w
        )
        to_send.append(
            NewTopic(spec.name, spec.partitions, spec.replication_factor, spec.assignment, dict(spec.configs))
        )
    req = None
    if not validate_only:
        asked = {target(name): s.as_params() for name, s in first.items()}
        req = _requested(
            actor, cluster, audit_names.TOPIC_CREATE, list(first), {"count": len(specs), "topics": asked},
            source_ip, on_behalf_of, request_id,
        )  # fmt: skip
    try:
        results = gw.create_topics(to_send, validate_only=validate_only)
    except KafkaOperationError as exc:  # the whole request failed before Kafka answered per topic
        results = {t.name: exc for t in to_send}
    timed_out = [n for n, r in results.items() if isinstance(r, KafkaOperationError) and r.name == TIMEOUT]
    now_there = _still_there(gw, timed_out) if not validate_only else {}
    done = "valid (dry run)" if validate_only else "created"
    for name, result in results.items():
        if not isinstance(result, KafkaOperationError):
            outcomes[name] = TopicOutcome(name, True, done, warning=warnings.get(name, ""))
        elif name in now_there and now_there[name]:
            outcomes[name] = TopicOutcome(name, True, "created", "Kafka answered late; the topic exists now.")
        elif name in now_there:
            state = "does not exist yet" if now_there[name] is False else "could not be re-read"
            outcomes[name] = TopicOutcome(
                name,
                False,
                "unknown",
                f"The request timed out and the topic {state}; it may still appear.",
                TIMEOUT,
            )
        else:
            failed = _failure(name, result)
            warning = warnings.get(name, "") if failed.status != "name collides" else ""
            outcomes[name] = replace(failed, warning=warning)
    ordered = [_listed_once(outcomes[name], name in twice) for name in first]
    if not validate_only and any(o.ok for o in ordered):
        metadata_cache.invalidate(cluster)
    event_id = _record(
        actor=actor,
        cluster=cluster,
        action=audit_names.TOPIC_CREATE_VALIDATE if validate_only else audit_names.TOPIC_CREATE,
        outcomes=ordered,
        params={"validate_only": validate_only, "count": len(specs)},
        after={target(name): s.as_params() for name, s in first.items()},
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
        req=req,
    )
    return BatchResult(ordered, validate_only, event_id)


@refused_as(
    audit_names.TOPIC_PARTITIONS_ADD, policy.PolicyViolation, targets=lambda k: [f"topic:{k.get('topic')}"]
)
def add_partitions(
    *,
    actor,
    cluster,
    topic: str,
    total_count: int,
    assignment: list[list[int]] | None = None,
    validate_only: bool = False,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> TopicOutcome:
    """Grow a topic to ``total_count`` partitions (CreatePartitions); keyed data will re-map."""
    access.require(actor, cluster, access.MANAGE_TOPICS)
    if not validate_only:
        gate.check(actor, cluster, "topic.partitions")
    gw = gateway_for(cluster)
    meta = gw.describe_topics([topic])[topic]
    if isinstance(meta, KafkaOperationError):
        raise meta
    current = len(meta.partitions)
    rules = policy.rules_for(cluster)
    violations = policy.check_internal(topic, meta.internal)
    if total_count <= current:
        violations.append(
            policy.Violation(
                "partitions", f"The new total must be more than the current {current} partitions.", topic
            )
        )
    elif rules.max_partitions is not None and total_count > rules.max_partitions:
        violations.append(
            policy.Violation(
                "max_partitions",
                f"{total_count} partitions exceed this cluster's limit of {rules.max_partitions}.",
                topic,
            )
        )
    if assignment is not None and total_count > current:
        if len(assignment) != total_count - current:
            violations.append(
                policy.Violation(
                    "replica_assignment",
                    f"Give one replica list per new partition ({total_count - current}).",
                    topic,
                )
            )
        live = _broker_ids(cluster, gw)
        violations += policy.check_assignment(
            assignment, live, topic, _down_brokers(cluster, live, assignment)
        )
    policy.enforce(violations)
    spec = NewPartitions(topic, total_count, tuple(tuple(r) for r in assignment) if assignment else None)
    req = None
    if not validate_only:
        asked = {"partitions": total_count, "from": current, "assignment": assignment}
        req = _requested(
            actor, cluster, audit_names.TOPIC_PARTITIONS_ADD, [topic], asked, source_ip, on_behalf_of, request_id,
        )  # fmt: skip
    try:
        result = gw.create_partitions([spec], validate_only=validate_only)[topic]
    except KafkaOperationError as exc:
        result = exc
    if isinstance(result, KafkaOperationError) and result.name == TIMEOUT and not validate_only:
        again = gw.describe_topics([topic])[topic]
        if not isinstance(again, KafkaOperationError) and len(again.partitions) >= total_count:
            result = None
    if result is None or not isinstance(result, KafkaOperationError):
        status = "valid (dry run)" if validate_only else "partitions added"
        outcome = TopicOutcome(topic, True, status)
    else:
        outcome = _failure(topic, result)
    if outcome.ok and not validate_only:
        metadata_cache.invalidate(cluster)
    _record(
        actor=actor,
        cluster=cluster,
        action=audit_names.TOPIC_PARTITIONS_VALIDATE if validate_only else audit_names.TOPIC_PARTITIONS_ADD,
        outcomes=[outcome],
        params={"validate_only": validate_only, "assignment": assignment},
        before={"partitions": current},
        after={"partitions": total_count},
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
        req=req,
    )
    return outcome


def _reread_topics(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: whether each topic exists now, and its shape."""
    names = [t.split(":", 1)[1] for t in targets if t.startswith("topic:")]
    state = {}
    for name, meta in gateway_for(cluster).describe_topics(names).items():
        if isinstance(meta, KafkaOperationError):
            if meta.name != "UNKNOWN_TOPIC_OR_PARTITION":
                raise meta
            state[target(name)] = {"exists": False}
        else:
            state[target(name)] = {
                "exists": True,
                "partitions": len(meta.partitions),
                "replication_factor": meta.replication_factor,
            }
    return state


for _action in (audit_names.TOPIC_CREATE, audit_names.TOPIC_DELETE, audit_names.TOPIC_PARTITIONS_ADD):
    outcomes_log.register_reader(_action, _reread_topics)
