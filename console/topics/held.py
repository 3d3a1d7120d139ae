"""Held topic actions: deletion, creation and partition increases, each with its dry run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.changes.kinds import ChangeInvalid, HeldKind, Prepared, checked, register, review
from console.kafka import KafkaOperationError
from console.models.requests import RequestKind
from console.topics import actions as topics
from console.topics import cache as metadata_cache
from console.topics import delete as topic_delete
from console.topics import policy as topic_policy
from console.topics.batch import TopicSpec

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


def _create_run(actor, cluster, payload, request_id: str) -> tuple[bool, str]:
    result = topics.create_topics(
        actor=actor, cluster=cluster, specs=[_spec(e) for e in payload["topics"]], request_id=request_id
    )
    bad = [o for o in result.outcomes if not o.ok]
    if bad:
        return False, "; ".join(f"{o.name}: {o.message or o.status}" for o in bad[:10])
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


def _partitions_run(actor, cluster, payload, request_id: str) -> tuple[bool, str]:
    outcome = topics.add_partitions(
        actor=actor, cluster=cluster, topic=payload["topic"], total_count=int(payload["total_count"]),
        assignment=payload.get("assignment"), request_id=request_id,
    )  # fmt: skip
    return outcome.ok, outcome.status if outcome.ok else f"{outcome.status}: {outcome.message}"


register(
    HeldKind(
        name=RequestKind.CHANGE_TOPIC_DELETE,
        gate="topic.delete",
        prepare=prepare_topic_delete,
        review=_delete_review,
        run=_delete_run,
    )
)
register(
    HeldKind(
        name=RequestKind.CHANGE_TOPIC_CREATE,
        gate="topic.create",
        prepare=prepare_topic_create,
        review=_create_review,
        run=_create_run,
    )
)
register(
    HeldKind(
        name=RequestKind.CHANGE_PARTITIONS,
        gate="topic.partitions",
        prepare=prepare_partitions,
        review=_partitions_review,
        run=_partitions_run,
    )
)
