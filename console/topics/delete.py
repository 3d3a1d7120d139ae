"""Deleting topics: the typed confirmation, the preview of what a delete would refuse, the delete."""

from __future__ import annotations

from console import access
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.topics import audit_names, policy
from console.topics import cache as metadata_cache
from console.topics.actions import (
    TIMEOUT,
    BatchResult,
    TopicOutcome,
    _failure,
    _record,
    _requested,
    _still_there,
)
from console.topics.reads import target


class ConfirmationError(ValueError):
    """The typed confirmation does not match what is being deleted."""


def delete_confirmation(names: list[str]) -> str:
    """What the operator must type: the topic name, or the count for a batch."""
    return names[0] if len(names) == 1 else str(len(names))


def delete_preview(*, actor, cluster, names: list[str]) -> list[tuple[str, str]]:
    """What a delete would do before the operator confirms: (topic, reason it will be refused or "")."""
    access.require(actor, cluster, access.MANAGE_TOPICS)
    rules = policy.rules_for(cluster)
    snap = metadata_cache.get_snapshot(cluster)
    out = []
    for name in dict.fromkeys(n for n in names if n):
        meta = snap.by_name.get(name)
        internal = bool(meta and meta.internal) or name.startswith("__")
        out.append((name, policy.protected_reason(rules, name, internal)))
    return out


@refused_as(
    audit_names.TOPIC_DELETE,
    ConfirmationError,
    targets=lambda k: [f"topic:{n}" for n in k.get("names") or ()],
)
def delete_topics(
    *,
    actor,
    cluster,
    names: list[str],
    confirmation: str,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> BatchResult:
    """Delete topics after a typed confirmation; internal and protected topics are refused with the reason."""
    access.require(actor, cluster, access.MANAGE_TOPICS)
    gate.check(actor, cluster, "topic.delete")
    names = list(dict.fromkeys(n for n in names if n))
    if not names:
        raise ConfirmationError("Select at least one topic to delete.")
    expected = delete_confirmation(names)
    if confirmation.strip() != expected:
        what = "the topic name" if len(names) == 1 else "the number of topics"
        raise ConfirmationError(f"Type {what} ('{expected}') to confirm the deletion.")
    rules = policy.rules_for(cluster)
    snap = metadata_cache.get_snapshot(cluster)
    outcomes: dict[str, TopicOutcome] = {}
    allowed = []
    for name in names:
        meta = snap.by_name.get(name)
        internal = bool(meta and meta.internal) or name.startswith("__")
        reason = policy.protected_reason(rules, name, internal)
        if reason:
            outcomes[name] = TopicOutcome(name, False, "refused", f"Not deleted: {reason}.", "PROTECTED")
        else:
            allowed.append(name)
    gw = gateway_for(cluster)
    req = _requested(
        actor, cluster, audit_names.TOPIC_DELETE, names, {"count": len(names), "sent": allowed},
        source_ip, on_behalf_of, request_id,
    )  # fmt: skip
    try:
        results = gw.delete_topics(allowed)
    except KafkaOperationError as exc:
        results = dict.fromkeys(allowed, exc)
    timed_out = [n for n, r in results.items() if isinstance(r, KafkaOperationError) and r.name == TIMEOUT]
    now_there = _still_there(gw, timed_out)
    for name, result in results.items():
        if not isinstance(result, KafkaOperationError):
            outcomes[name] = TopicOutcome(name, True, "deleted")
        elif name in now_there and now_there[name] is False:
            outcomes[name] = TopicOutcome(
                name, True, "deleted", "Kafka answered late; the topic is gone now."
            )
        elif name in now_there:
            outcomes[name] = TopicOutcome(
                name, False, "unknown", "The request timed out; the topic is still listed.", TIMEOUT
            )
        elif result.name == "UNKNOWN_TOPIC_OR_PARTITION":
            outcomes[name] = TopicOutcome(name, False, "does not exist", result.operator_text, result.name)
        else:
            outcomes[name] = _failure(name, result)
    ordered = [outcomes[n] for n in names]
    if any(o.ok for o in ordered):
        metadata_cache.invalidate(cluster)
    before = {
        target(n): {"partitions": len(m.partitions), "replication_factor": m.replication_factor}
        for n in names
        if (m := snap.by_name.get(n)) is not None
    }
    event_id = _record(
        actor=actor,
        cluster=cluster,
        action=audit_names.TOPIC_DELETE,
        outcomes=ordered,
        params={"count": len(names)},
        before=before,
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
        req=req,
    )
    return BatchResult(ordered, False, event_id)
