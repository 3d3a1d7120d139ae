"""The share-group messages (KIP-932) kafka-python 3.0 has no classes for, declared from Kafka 4.1's
message layouts (checked field by field against the 4.1 client's message classes): ShareGroupDescribe
(API 77, v1 only: 4.1 removed 4.0's early-access v0), DescribeShareGroupOffsets (90, v0),
AlterShareGroupOffsets (91, v0) and DeleteShareGroupOffsets (92, v0). No I/O: ``share_groups.py``
sends them. In 4.1 DescribeShareGroupOffsets answers each partition's share-partition start offset
and leader epoch, no lag: the lag is the log end minus the start offset, as ``kafka-share-groups.sh``
shows it."""

from __future__ import annotations

from typing import Any

from .inline_messages import field, message_pair

SHARE = "share"


_f = field
_build = message_pair


def _describe() -> tuple[Any, Any]:
    v = "1+"
    nullable = {"nullableVersions": v, "default": "null"}
    tps = [_f("TopicPartitions", "[]TopicPartitions", v, fields=[
        _f("TopicId", "uuid", v), _f("TopicName", "string", v), _f("Partitions", "[]int32", v)])]  # fmt: skip
    member = [
        _f("MemberId", "string", v), _f("RackId", "string", v, **nullable), _f("MemberEpoch", "int32", v),
        _f("ClientId", "string", v), _f("ClientHost", "string", v),
        _f("SubscribedTopicNames", "[]string", v), _f("Assignment", "Assignment", v, fields=tps),
    ]  # fmt: skip
    group = [
        _f("ErrorCode", "int16", v), _f("ErrorMessage", "string", v, **nullable), _f("GroupId", "string", v),
        _f("GroupState", "string", v), _f("GroupEpoch", "int32", v), _f("AssignmentEpoch", "int32", v),
        _f("AssignorName", "string", v), _f("Members", "[]Member", v, fields=member),
        _f("AuthorizedOperations", "int32", v, default="-2147483648"),
    ]  # fmt: skip
    return _build(
        77, 1, "ShareGroupDescribe",
        [_f("GroupIds", "[]string", v), _f("IncludeAuthorizedOperations", "bool", v)],
        [_f("ThrottleTimeMs", "int32", v), _f("Groups", "[]DescribedGroup", v, fields=group)],
    )  # fmt: skip


def _offsets() -> tuple[Any, Any]:
    v = "0+"
    nullable = {"nullableVersions": v, "default": "null"}
    part = [
        _f("PartitionIndex", "int32", v), _f("StartOffset", "int64", v), _f("LeaderEpoch", "int32", v),
        _f("ErrorCode", "int16", v), _f("ErrorMessage", "string", v, **nullable),
    ]  # fmt: skip
    topic = [
        _f("TopicName", "string", v),
        _f("TopicId", "uuid", v),
        _f("Partitions", "[]Partition", v, fields=part),
    ]
    group = [
        _f("GroupId", "string", v), _f("Topics", "[]Topic", v, fields=topic),
        _f("ErrorCode", "int16", v), _f("ErrorMessage", "string", v, **nullable),
    ]  # fmt: skip
    req_topic = [_f("TopicName", "string", v), _f("Partitions", "[]int32", v)]
    req_group = [_f("GroupId", "string", v), _f("Topics", "[]RequestTopic", v, fields=req_topic, **nullable)]
    return _build(
        90, 0, "DescribeShareGroupOffsets",
        [_f("Groups", "[]RequestGroup", v, fields=req_group)],
        [_f("ThrottleTimeMs", "int32", v), _f("Groups", "[]Group", v, fields=group)],
    )  # fmt: skip


def _result_topics(v: str) -> list:
    nullable = {"nullableVersions": v, "default": "null"}
    part = [
        _f("PartitionIndex", "int32", v),
        _f("ErrorCode", "int16", v),
        _f("ErrorMessage", "string", v, **nullable),
    ]
    return [
        _f("TopicName", "string", v),
        _f("TopicId", "uuid", v),
        _f("Partitions", "[]Partition", v, fields=part),
    ]


def _alter() -> tuple[Any, Any]:
    """4.1's response has a top-level error (the group's) before the per-partition results."""
    v = "0+"
    nullable = {"nullableVersions": v, "default": "null"}
    part = [_f("PartitionIndex", "int32", v), _f("StartOffset", "int64", v)]
    topic = [_f("TopicName", "string", v), _f("Partitions", "[]RequestPartition", v, fields=part)]
    return _build(
        91, 0, "AlterShareGroupOffsets",
        [_f("GroupId", "string", v), _f("Topics", "[]RequestTopic", v, fields=topic)],
        [
            _f("ThrottleTimeMs", "int32", v), _f("ErrorCode", "int16", v),
            _f("ErrorMessage", "string", v, **nullable),
            _f("Responses", "[]Topic", v, fields=_result_topics(v)),
        ],
    )  # fmt: skip


def _delete_offsets() -> tuple[Any, Any]:
    """4.1 answers per topic (an error and message each), not per partition."""
    v = "0+"
    nullable = {"nullableVersions": v, "default": "null"}
    topic = [
        _f("TopicName", "string", v), _f("TopicId", "uuid", v),
        _f("ErrorCode", "int16", v), _f("ErrorMessage", "string", v, **nullable),
    ]  # fmt: skip
    return _build(
        92, 0, "DeleteShareGroupOffsets",
        [_f("GroupId", "string", v), _f("Topics", "[]RequestTopic", v, fields=[_f("TopicName", "string", v)])],
        [
            _f("ThrottleTimeMs", "int32", v), _f("ErrorCode", "int16", v),
            _f("ErrorMessage", "string", v, **nullable),
            _f("Responses", "[]Topic", v, fields=topic),
        ],
    )  # fmt: skip


_BUILT: dict[str, tuple[Any, Any]] = {}
_MAKERS = {"describe": _describe, "offsets": _offsets, "alter": _alter, "delete_offsets": _delete_offsets}


def classes(which: str) -> tuple[Any, Any]:
    """(request class, response class) of ``describe``, ``offsets``, ``alter`` or ``delete_offsets``."""
    if which not in _BUILT:
        _BUILT[which] = _MAKERS[which]()
    return _BUILT[which]


def describe_request(group_ids: list[str]) -> Any:
    return classes("describe")[0](group_ids=list(group_ids), include_authorized_operations=False)


def offsets_request(group_ids: list[str], topics: dict[str, list[int]] | None = None) -> Any:
    req = classes("offsets")[0]
    group_cls = req.RequestGroup
    asked = (
        None
        if topics is None
        else [group_cls.RequestTopic(topic_name=t, partitions=list(ps)) for t, ps in topics.items()]
    )
    return req(groups=[group_cls(group_id=g, topics=asked) for g in group_ids])


def alter_request(group_id: str, offsets: dict[str, dict[int, int]]) -> Any:
    req = classes("alter")[0]
    topic_cls = req.RequestTopic
    part_cls = topic_cls.RequestPartition
    return req(
        group_id=group_id,
        topics=[
            topic_cls(
                topic_name=t,
                partitions=[part_cls(partition_index=p, start_offset=o) for p, o in sorted(ps.items())],
            )
            for t, ps in sorted(offsets.items())
        ],
    )


def delete_offsets_request(group_id: str, topics: list[str]) -> Any:
    req = classes("delete_offsets")[0]
    return req(group_id=group_id, topics=[req.RequestTopic(topic_name=t) for t in topics])
