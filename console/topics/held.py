"""Held topic actions: deletion, creation and partition increases, each with its dry run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import gate
from console.changes.kinds import (
    ChangeInvalid,
    Checked,
    HeldKind,
    Indeterminate,
    Prepared,
    Requested,
    checked,
    kafka_text,
    outside_namespace,
    payload_int,
    payload_mapping,
    register,
    review,
)
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, NewPartitions, NewTopic
from console.models.requests import RequestKind
from console.topics import actions as topics
from console.topics import cache as metadata_cache
from console.topics import delete as topic_delete
from console.topics import namespaces
from console.topics import policy as topic_policy
from console.topics.batch import TopicSpec

# The policy kinds of this area (console/changes/gate.py lists what the areas declare).
TOPIC_CREATE = gate.declare("topic.create", "Topic creations", access.MANAGE_TOPICS)
TOPIC_DELETE = gate.declare("topic.delete", "Topic deletions", access.MANAGE_TOPICS)
TOPIC_PARTITIONS = gate.declare("topic.partitions", "Partition increases", access.MANAGE_TOPICS)

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


def _unsettled(outcomes) -> None:
    """Kafka did not say for some topic: the runner retries, the re-run converges."""
    unknown = [o for o in outcomes if not o.ok and o.status == "unknown"]
    if unknown:
        raise Indeterminate("; ".join(f"{o.name}: {o.message or o.status}" for o in unknown[:10]))


def _delete_run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    """Delete the topics; after an earlier attempt (``retry``) a topic already gone is success."""
    names = list(payload["topics"])
    result = topic_delete.delete_topics(
        actor=actor,
        cluster=cluster,
        names=names,
        confirmation=topic_delete.delete_confirmation(names),
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    bad = [o for o in result.outcomes if not o.ok and not (retry and o.status == "does not exist")]
    _unsettled(bad)
    if bad:
        return False, "; ".join(f"{o.name}: {o.message or o.status}" for o in bad)
    if len(bad) < len([o for o in result.outcomes if not o.ok]):
        return True, f"deleted {len(names)} topic(s) (gone already after an earlier attempt)"
    return True, f"deleted {len(names)} topic(s)"


# -- topic creation -------------------------------------------------------------------------------


def _spec(entry: Mapping[str, Any]) -> TopicSpec:
    assignment = entry.get("assignment")
    return TopicSpec(
        entry["name"],
        int(entry.get("partitions", -1)),
        int(entry.get("replication_factor", -1)),
        tuple(tuple(int(b) for b in r) for r in assignment) if assignment is not None else None,
        dict(entry.get("configs") or {}),
    )


def _create_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    """Kafka's validate-only CreateTopics answer per topic, after the console's policy."""
    specs = [_spec(e) for e in payload["topics"]]
    try:
        result = topics.create_topics(actor=actor, cluster=cluster, specs=specs, validate_only=True)
        answers = {o.name: o for o in result.outcomes}
    except topic_policy.PolicyViolation as exc:
        return review(["topic"], [], ok=False, kafka=str(exc), pinned=None)
    rows, pinned, bad = [], [], []
    for s in specs:
        o = answers.get(s.name)
        shape = (
            f"{len(s.assignment)} partitions, replicas {[list(r) for r in s.assignment]}"
            if s.assignment is not None
            else f"{s.partitions} partitions, RF {s.replication_factor}"
        )
        configs = ", ".join(f"{k}={v}" for k, v in sorted(s.configs.items())) or "defaults"
        answer = (o.status if o.ok else f"{o.status}: {o.message}") if o else "no answer"
        rows.append([s.name, "does not exist", f"{shape}; {configs}", answer])
        pinned.append([s.name, bool(o and o.ok)])
        if not (o and o.ok):
            bad.append(f"{s.name}: {answer}")
    return review(
        ["topic", "before", "after", "Kafka's validate-only answer"], rows,
        ok=not bad, kafka="; ".join(bad) or "valid (Kafka's validate-only answer)", pinned=pinned,
    )  # fmt: skip


def prepare_topic_create(actor, cluster, specs: list[TopicSpec]) -> Prepared:
    if not specs:
        raise ChangeInvalid(["Give at least one topic to create."])
    payload = {"topics": [{"name": s.name, **s.as_params()} for s in specs]}
    names = [s.name for s in specs]
    return checked(Prepared(
        RequestKind.CHANGE_TOPIC_CREATE, "topic.create", f"topic:{names[0]}" + (" …" if len(names) > 1 else ""),
        payload, _create_review(actor, cluster, payload),
        f"create {len(names)} topic(s): {', '.join(names[:5])}",
    ))  # fmt: skip


def _create_run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    """Create the topics; after an earlier attempt (``retry``) "already exists" is success."""
    try:
        result = topics.create_topics(
            actor=actor, cluster=cluster, specs=[_spec(e) for e in payload["topics"]],
            on_behalf_of=on_behalf_of, request_id=request_id,
        )  # fmt: skip
    except topic_policy.PolicyViolation as exc:
        return False, str(exc)
    bad = [o for o in result.outcomes if not o.ok and not (retry and o.status == "already exists")]
    _unsettled(bad)
    if bad:
        return False, "; ".join(f"{o.name}: {o.message or o.status}" for o in bad[:10])
    if len(bad) < len([o for o in result.outcomes if not o.ok]):
        return True, f"created {len(result.outcomes)} topic(s) (some by an earlier attempt)"
    return True, f"created {len(result.outcomes)} topic(s)"


# -- partition increase ---------------------------------------------------------------------------


def _partitions_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    name, total = payload["topic"], int(payload["total_count"])
    meta = metadata_cache.get_snapshot(cluster, refresh=True).by_name.get(name)
    now = len(meta.partitions) if meta is not None else None
    pinned = [name, str(getattr(meta, "topic_id", "") or "") if meta else None, now]
    before = f"{now} partitions" if now is not None else "does not exist"
    try:
        outcome = topics.add_partitions(
            actor=actor, cluster=cluster, topic=name, total_count=total,
            assignment=payload.get("assignment"), validate_only=True,
        )  # fmt: skip
        ok, answer = outcome.ok, outcome.status if outcome.ok else f"{outcome.status}: {outcome.message}"
    except topic_policy.PolicyViolation as exc:
        ok, answer = False, str(exc)
    except KafkaOperationError as exc:
        ok, answer = False, f"Kafka: {exc.name}: {exc.operator_text}"
    after = f"{total} partitions" + (
        f", replicas {payload['assignment']}" if payload.get("assignment") else ""
    )
    return review(
        ["topic", "before", "after"], [[name, before, after]], ok=ok,
        kafka=answer if not ok else "valid (Kafka's validate-only answer); keyed data re-maps to new partitions",
        pinned=pinned,
    )  # fmt: skip


def prepare_partitions(actor, cluster, topic: str, total_count: int, assignment=None) -> Prepared:
    payload = {"topic": topic, "total_count": int(total_count), "assignment": assignment}
    return checked(Prepared(
        RequestKind.CHANGE_PARTITIONS, "topic.partitions", f"topic:{topic}", payload,
        _partitions_review(actor, cluster, payload), f"grow {topic} to {total_count} partitions",
    ))  # fmt: skip


def _partitions_run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    """Grow the topic; after an earlier attempt (``retry``) a topic already that large is success."""
    name, total = payload["topic"], int(payload["total_count"])
    if retry:
        meta = metadata_cache.get_snapshot(cluster, refresh=True).by_name.get(name)
        if meta is not None and len(meta.partitions) >= total:
            return True, "the topic already has the requested partitions"
    try:
        outcome = topics.add_partitions(
            actor=actor, cluster=cluster, topic=name, total_count=total,
            assignment=payload.get("assignment"), on_behalf_of=on_behalf_of, request_id=request_id,
        )  # fmt: skip
    except topic_policy.PolicyViolation as exc:
        return False, str(exc)
    _unsettled([outcome])
    return outcome.ok, outcome.status if outcome.ok else f"{outcome.status}: {outcome.message}"


# -- asked for by a requester (self-service): the requester policy -----------------------------------


def _current_topic(gw, name: str):
    meta = gw.describe_topics([name]).get(name)
    if isinstance(meta, KafkaOperationError):
        raise ChangeInvalid([kafka_text(meta)])
    return meta


def _request_create(user, cluster, payload, *, approving: bool = False) -> Checked:
    errors: list[str] = []
    name = str(payload.get("name", "")).strip()
    partitions = payload_int(payload, "partitions", errors)
    rf = payload_int(payload, "replication_factor", errors)
    cfg = {str(k): str(v) for k, v in payload_mapping(payload, "configs", errors).items()}
    if errors:
        raise ChangeInvalid(errors)
    errors += outside_namespace(user, cluster, "Topic", name)
    rules = topic_policy.rules_for(cluster)
    cfg, applied = namespaces.with_defaults(rules.namespace_rules, name, cfg)
    errors += [
        str(v)
        for v in topic_policy.check_create(
            rules, name=name, partitions=partitions, replication_factor=rf, configs=cfg
        )
    ]
    if not errors:
        gw = gateway_for(cluster)
        got = gw.create_topics([NewTopic(name, partitions, rf, None, cfg)], validate_only=True).get(name)
        if isinstance(got, KafkaOperationError):
            errors.append(kafka_text(got))
    if errors:
        raise ChangeInvalid(errors)
    clean = {"name": name, "partitions": partitions, "replication_factor": rf, "configs": cfg}
    defaults = f"; {namespaces.applied_text(applied)}" if applied else ""
    return Checked(name, clean, f"create topic {name} ({partitions} partitions, RF {rf}){defaults}")


def _requested_create(p: Mapping[str, Any]) -> dict[str, Any]:
    entry = {"name": p["name"], "partitions": p["partitions"], "replication_factor": p["replication_factor"]}
    return {"topics": [{**entry, "configs": dict(p.get("configs") or {})}]}


def _request_partitions(user, cluster, payload, *, approving: bool = False) -> Checked:
    errors: list[str] = []
    name = str(payload.get("topic", "")).strip()
    total = payload_int(payload, "total_count", errors)
    errors += outside_namespace(user, cluster, "Topic", name)
    if errors:
        raise ChangeInvalid(errors)
    gw = gateway_for(cluster)
    current = len(_current_topic(gw, name).partitions)
    rules = topic_policy.rules_for(cluster)
    if total <= current:
        errors.append(f"the new total must be more than the current {current} partitions")
    elif rules.max_partitions is not None and total > rules.max_partitions:
        errors.append(
            f"{total} partitions exceed this cluster's limit of {rules.max_partitions} [policy rule: max_partitions]"
        )
    if not errors:
        got = gw.create_partitions([NewPartitions(name, total)], validate_only=True).get(name)
        if isinstance(got, KafkaOperationError):
            errors.append(kafka_text(got))
    if errors:
        raise ChangeInvalid(errors)
    return Checked(
        name, {"topic": name, "total_count": total}, f"grow {name} from {current} to {total} partitions"
    )


def _request_delete(user, cluster, payload, *, approving: bool = False) -> Checked:
    name = str(payload.get("topic", "")).strip()
    errors = outside_namespace(user, cluster, "Topic", name)
    if errors:
        raise ChangeInvalid(errors)
    meta = _current_topic(gateway_for(cluster), name)
    rules = topic_policy.rules_for(cluster)
    reason = topic_policy.protected_reason(rules, name, meta.internal or name.startswith("__"))
    if reason:
        raise ChangeInvalid([f"{name} cannot be deleted: {reason}"])
    return Checked(name, {"topic": name}, f"delete topic {name}")


register(
    HeldKind(
        name=RequestKind.CHANGE_TOPIC_DELETE,
        gate="topic.delete",
        prepare=prepare_topic_delete,
        review=_delete_review,
        run=_delete_run,
        requested=Requested(
            RequestKind.TOPIC_DELETE, _request_delete, lambda p: {"topics": [p["topic"]]}, "topic"
        ),
    )
)
register(
    HeldKind(
        name=RequestKind.CHANGE_TOPIC_CREATE,
        gate="topic.create",
        prepare=prepare_topic_create,
        review=_create_review,
        run=_create_run,
        requested=Requested(
            RequestKind.TOPIC_CREATE,
            _request_create,
            _requested_create,
            "topic",
            partitions=lambda p: int(p["partitions"]),
        ),
    )
)
register(
    HeldKind(
        name=RequestKind.CHANGE_PARTITIONS,
        gate="topic.partitions",
        prepare=prepare_partitions,
        review=_partitions_review,
        run=_partitions_run,
        requested=Requested(
            RequestKind.TOPIC_PARTITIONS,
            _request_partitions,
            lambda p: {"topic": p["topic"], "total_count": p["total_count"], "assignment": None},
            "topic",
            partitions=lambda p: int(p["total_count"]),
        ),
    )
)
