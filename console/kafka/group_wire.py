"""What the consumer-group APIs answer, in the gateway's types: ConsumerGroupDescribe's schema
(kafka-python 3.0 lacks API 69), classic members' assignment bytes, and group-level errors
worded for the operator. No I/O: ``groups.py`` sends the requests."""

from __future__ import annotations

from typing import Any

from .errors import KafkaOperationError, from_code
from .inline_messages import field, message_pair, nullable
from .types import GroupDescription, GroupMember, TopicPartition

CLASSIC, CONSUMER = "classic", "consumer"
PROTOCOL_TYPES = frozenset({"", "consumer"})  # connect workers' groups are classic groups too


def not_found(group_id: str) -> KafkaOperationError:
    return KafkaOperationError(69, "GROUP_ID_NOT_FOUND", f"consumer group '{group_id}' does not exist")


def named(err: KafkaOperationError, group_id: str) -> KafkaOperationError:
    if err.name == "GROUP_ID_NOT_FOUND":
        return not_found(group_id)
    if err.name == "NON_EMPTY_GROUP":
        return err.with_message(f"consumer group '{group_id}' has active members; stop its consumers first")
    return err.with_message(f"{err.message} (group '{group_id}')")


def _consumer_group_describe() -> tuple[Any, Any]:
    """ConsumerGroupDescribe (API 69, KIP-848), which kafka-python 3.0 lacks: version 0 as Kafka's
    message definitions (ConsumerGroupDescribeRequest/Response.json) lay it out."""
    f = field
    null = nullable()
    assignment = [
        f("TopicPartitions", "[]TopicPartitions", fields=[f("TopicId", "uuid"), f("TopicName", "string"), f("Partitions", "[]int32")])
    ]  # fmt: skip
    member = [
        f("MemberId", "string"), f("InstanceId", "string", **null), f("RackId", "string", **null),
        f("MemberEpoch", "int32"), f("ClientId", "string"), f("ClientHost", "string"),
        f("SubscribedTopicNames", "[]string"), f("SubscribedTopicRegex", "string", **null),
        f("Assignment", "Assignment", fields=assignment), f("TargetAssignment", "Assignment", fields=assignment),
    ]  # fmt: skip
    group = [
        f("ErrorCode", "int16"), f("ErrorMessage", "string", **null), f("GroupId", "string"),
        f("GroupState", "string"), f("GroupEpoch", "int32"), f("AssignmentEpoch", "int32"),
        f("AssignorName", "string"), f("Members", "[]Member", fields=member),
        f("AuthorizedOperations", "int32", default="-2147483648"),
    ]  # fmt: skip
    return message_pair(
        69, 0, "ConsumerGroupDescribe",
        [f("GroupIds", "[]string"), f("IncludeAuthorizedOperations", "bool")],
        [f("ThrottleTimeMs", "int32"), f("Groups", "[]DescribedGroup", fields=group)],
    )  # fmt: skip


_CGD: tuple[Any, Any] | None = None


def cgd_request(group_ids: list[str]) -> Any:
    global _CGD
    if _CGD is None:
        _CGD = _consumer_group_describe()
    return _CGD[0](group_ids=group_ids, include_authorized_operations=False)


def _assigned(data: bytes | None) -> tuple[TopicPartition, ...]:
    """A classic member's partitions, decoded from the consumer protocol's assignment bytes."""
    if not data:
        return ()
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    try:
        decoded = ConsumerProtocolAssignment.decode(bytes(data))
        return tuple(TopicPartition(t.topic, p) for t in decoded.assigned_partitions for p in t.partitions)
    except Exception:  # noqa: BLE001 - another protocol's bytes: no partitions to show
        return ()


def classic(d: Any, node: int) -> GroupDescription | KafkaOperationError:
    err = from_code(d.error_code, getattr(d, "error_message", None))
    if err is None and d.group_state == "Dead" and not d.members:  # before v6: "Dead" = unknown group
        err = not_found(d.group_id)
    if err is not None:
        return named(err, d.group_id)
    decode = d.protocol_type in PROTOCOL_TYPES
    members = tuple(
        GroupMember(
            m.member_id,
            m.client_id,
            m.client_host,
            getattr(m, "group_instance_id", None),
            _assigned(m.member_assignment) if decode else (),
        )
        for m in d.members
    )
    return GroupDescription(
        d.group_id, CLASSIC, d.group_state, d.protocol_type, d.protocol_data, node, members
    )


def _partitions(assignment: Any) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(t.topic_name, p) for t in assignment.topic_partitions for p in t.partitions)


def consumer(d: Any, node: int) -> GroupDescription | KafkaOperationError:
    err = from_code(d.error_code, d.error_message)
    if err is not None:
        return named(err, d.group_id)
    members = tuple(
        GroupMember(
            m.member_id,
            m.client_id,
            m.client_host,
            m.instance_id,
            _partitions(m.assignment),
            _partitions(m.target_assignment),
            tuple(m.subscribed_topic_names or ()),
            m.member_epoch,
        )
        for m in d.members
    )
    return GroupDescription(
        d.group_id, CONSUMER, d.group_state, "consumer", d.assignor_name, node, members, d.group_epoch
    )
