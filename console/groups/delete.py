"""Deleting a consumer group (refused while it has members, named) and a group's committed offsets
of a topic (OffsetDelete: Kafka refuses each partition while a member still consumes the topic).
Both need the group id typed, and are audited: requested before Kafka, the outcome after. Both are
offset resets in effect, so the change-control policy entry that holds resets ("group.reset")
holds them too; ``preview_delete`` and ``preview_offsets_delete`` are their dry runs."""

from __future__ import annotations

from dataclasses import dataclass

from console import access
from console.audit import outcomes as outcomes_log
from console.audit.refusals import refused_as
from console.clusters.actions import gateway_for
from console.groups import audit_names
from console.groups.actions import (
    TIMEOUT,
    ChangeResult,
    ConfirmationError,
    GroupNotEmpty,
    NoOffsets,
    PartitionOutcome,
    _capped,
    _committed,
    _may_change,
    _require_empty,
    _reread_offsets,
    _settle,
)
from console.groups.core import tp_text
from console.groups.reads import describe_group, target
from console.kafka import GroupDescription, KafkaOperationError, TopicPartition

GATE = "group.reset"  # the change-control kind that holds both deletes (see console/changes/gate.py)


@dataclass(frozen=True)
class DeletePreview:
    """A delete's dry run: the group as it is (None: there is no such group), the committed offsets
    the delete removes, and why it would be refused now ("" when it would not)."""

    group: GroupDescription | None
    offsets: dict[TopicPartition, int]
    blocked: str


def _group_or_none(cluster, group_id: str) -> GroupDescription | None:
    try:
        return describe_group(cluster, group_id)
    except KafkaOperationError as exc:
        if exc.name == "GROUP_ID_NOT_FOUND":
            return None
        raise


def preview_delete(*, actor, cluster, group_id: str) -> DeletePreview:
    """What deleting the group removes (its committed offsets) and whether Kafka would refuse it."""
    access.require(actor, cluster, access.MANAGE_GROUPS)
    group = _group_or_none(cluster, group_id)
    if group is None:
        return DeletePreview(None, {}, f"Group '{group_id}' does not exist.")
    try:
        _require_empty(group, "deletes")
    except GroupNotEmpty as exc:
        return DeletePreview(group, _committed(cluster, group_id, group), str(exc))
    return DeletePreview(group, _committed(cluster, group_id, group), "")


def consumers_of(group: GroupDescription | None, topic: str) -> list[str]:
    """The members that consume (or subscribe to) ``topic``: Kafka refuses OffsetDelete for it then."""
    members = group.members if group is not None else ()
    return [
        f"{m.client_id or m.member_id} ({m.host})"
        for m in members
        if topic in m.subscribed_topics or any(tp.topic == topic for tp in m.assignment)
    ]


def preview_offsets_delete(*, actor, cluster, group_id: str, topic: str) -> DeletePreview:
    """The group's committed offsets of ``topic`` an offsets delete removes, and whether Kafka would
    refuse it (no offsets for the topic; a member consumes it: GROUP_SUBSCRIBED_TO_TOPIC)."""
    access.require(actor, cluster, access.MANAGE_GROUPS)
    group = _group_or_none(cluster, group_id)
    offsets = {tp: o for tp, o in _committed(cluster, group_id, group).items() if tp.topic == topic}
    consumers = consumers_of(group, topic)
    if not offsets:
        blocked = f"Group '{group_id}' has no committed offsets for topic '{topic}'."
    elif consumers:
        blocked = (
            f"{', '.join(consumers[:10])} of group '{group_id}' consume{'s' if len(consumers) == 1 else ''} "
            f"'{topic}': Kafka deletes the offsets of a topic only when no member consumes it."
        )
    else:
        blocked = ""
    return DeletePreview(group, offsets, blocked)


# -- delete --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupDeleted:
    group_id: str
    ok: bool
    status: str
    message: str = ""
    event_id: int | None = None


@refused_as(
    audit_names.GROUP_DELETE,
    GroupNotEmpty,
    ConfirmationError,
    targets=lambda k: [target(k.get("group_id") or "")],
)
def delete_group(
    *,
    actor,
    cluster,
    group_id: str,
    confirmation: str,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> GroupDeleted:
    """Delete a group and its committed offsets: refused while it has members (named)."""
    _may_change(actor, cluster, GATE, group_id, confirmation)
    group = describe_group(cluster, group_id)
    _require_empty(group, "deletes")
    committed = _committed(cluster, group_id, group)
    req = outcomes_log.requested(
        actor=actor,
        action=audit_names.GROUP_DELETE,
        cluster=cluster,
        targets=[target(group_id)],
        params={"group": group_id, "type": group.group_type, "state": group.state},
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    try:
        result = gateway_for(cluster).delete_consumer_groups([group_id])[group_id]
    except KafkaOperationError as exc:
        result = exc
    if not isinstance(result, KafkaOperationError):
        done = GroupDeleted(group_id, True, "deleted")
    elif result.name == TIMEOUT and not _exists(cluster, group_id):
        done = GroupDeleted(group_id, True, "deleted", "Kafka answered late; the group is gone now.")
    elif result.name == TIMEOUT:
        done = GroupDeleted(group_id, False, "unknown", "The request timed out; the group is still there.")
    else:
        done = GroupDeleted(group_id, False, "failed", f"{result.name}: {result.operator_text}")
    outcome = {"ok": done.ok, "status": done.status, **({"message": done.message} if done.message else {})}
    event_id = outcomes_log.settle(
        req,
        targets=[target(group_id)],
        params={"group": group_id},
        before={"state": group.state, "offsets": _capped({tp_text(tp): o for tp, o in committed.items()})},
        after={"exists": not done.ok},
        outcomes={target(group_id): outcome},
    )
    return GroupDeleted(done.group_id, done.ok, done.status, done.message, event_id)


def _exists(cluster, group_id: str) -> bool | None:
    try:
        describe_group(cluster, group_id)
    except KafkaOperationError as exc:
        return False if exc.name == "GROUP_ID_NOT_FOUND" else None
    return True


def _reread_group(cluster, targets: list[str], params) -> dict:
    group_id = params.get("group", "")
    return {target(group_id): {"exists": _exists(cluster, group_id)}}


@refused_as(
    audit_names.GROUP_OFFSETS_DELETE,
    NoOffsets,
    ConfirmationError,
    targets=lambda k: [target(k.get("group_id") or ""), f"topic:{k.get('topic') or ''}"],
)
def delete_offsets(
    *,
    actor,
    cluster,
    group_id: str,
    topic: str,
    confirmation: str,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> ChangeResult:
    """Delete the group's committed offsets of one topic (OffsetDelete); Kafka refuses each partition
    (GROUP_SUBSCRIBED_TO_TOPIC) while a member of the group consumes the topic."""
    _may_change(actor, cluster, GATE, group_id, confirmation)
    group = describe_group(cluster, group_id)
    committed = {tp: o for tp, o in _committed(cluster, group_id, group).items() if tp.topic == topic}
    if not committed:
        raise NoOffsets(f"Group '{group_id}' has no committed offsets for topic '{topic}'.")
    req = outcomes_log.requested(
        actor=actor,
        action=audit_names.GROUP_OFFSETS_DELETE,
        cluster=cluster,
        targets=[target(group_id), f"topic:{topic}"],
        params={
            "group": group_id,
            "topic": topic,
            "partitions_named": [[tp.topic, tp.partition] for tp in committed],
        },
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    try:
        results = gateway_for(cluster).delete_consumer_group_offsets(group_id, list(committed))
    except KafkaOperationError as exc:
        results = dict.fromkeys(committed, exc)
    outcomes = []
    for tp, offset in sorted(committed.items()):
        result = results.get(tp)
        if result is not None and not isinstance(result, KafkaOperationError):
            outcomes.append(PartitionOutcome(tp.topic, tp.partition, offset, None, True, "deleted"))
        elif result is not None and result.name == TIMEOUT:
            text = "The request timed out; re-read the group before retrying."
            outcomes.append(PartitionOutcome(tp.topic, tp.partition, offset, None, False, "unknown", text))
        else:
            text = f"{result.name}: {result.message or result.operator_text}" if result else "no answer"
            outcomes.append(PartitionOutcome(tp.topic, tp.partition, offset, offset, False, "failed", text))
    return ChangeResult(outcomes, _settle(req, group_id, outcomes, {"topic": topic}))


outcomes_log.register_reader(audit_names.GROUP_OFFSETS_DELETE, _reread_offsets)
outcomes_log.register_reader(audit_names.GROUP_DELETE, _reread_group)
