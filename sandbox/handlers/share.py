"""Share groups (KIP-932): ShareGroupHeartbeat, ShareGroupDescribe, DescribeShareGroupOffsets,
AlterShareGroupOffsets and DeleteShareGroupOffsets, with Kafka 4.1's answers (checked against a 4.1
cluster): every API answers UNSUPPORTED_VERSION while ``share.version`` is 0 (the APIs are advertised
whatever the feature says); an unknown group is GROUP_ID_NOT_FOUND "Group <id> not found." to describe
and to delete offsets, but DescribeShareGroupOffsets answers it with no topics and no error; offsets of
a partition without share state read -1; DeleteShareGroupOffsets refuses a group with members
(NON_EMPTY_GROUP) and answers per topic (UNKNOWN_TOPIC_OR_PARTITION, or "There is no offset
information to delete.").

AlterShareGroupOffsets is answered as 4.1 answers it: unknown topics get UNKNOWN_TOPIC_OR_PARTITION per
partition and nothing else is applied - 4.1's broker passes the coordinator an empty topic set (its
request handler re-adds each topic to a new collection while it still belongs to the request's), so the
coordinator returns an empty success and no start offset moves, whatever the group's state; 4.1's
``kafka-share-groups.sh --reset-offsets`` says "not yet implemented".
"""

from __future__ import annotations

from typing import Any

from sandbox import share_groups as sg
from sandbox.apis import RequestContext, api
from sandbox.handlers.coordinator import GROUP_ID_NOT_FOUND, INVALID_GROUP_ID, NOT_COORDINATOR, coordinator
from sandbox.protocol.share import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)

UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST, UNSUPPORTED_VERSION, NON_EMPTY_GROUP = 3, 42, 35, 68
UNSUPPORTED_TEXT = "The version of API is not supported."
NOT_HOSTED = "This server does not host this topic-partition."


def _not_found(gid: str) -> str:
    return f"Group {gid} not found."


@api(ShareGroupHeartbeatRequest, 1, 1)
def share_group_heartbeat(ctx: RequestContext, req: Any) -> Any:
    """Join (epoch 0, with a client-chosen member id and the subscribed topics), heartbeat, leave (-1)."""
    resp = ShareGroupHeartbeatResponse

    def answer(code: int = 0, message: str | None = None, member: sg.ShareMember | None = None) -> Any:
        assignment = None
        if member is not None:
            st = ctx.state
            assignment = resp.Assignment(
                topic_partitions=[
                    resp.Assignment.TopicPartitions(topic_id=st.topics[t].topic_id, partitions=sorted(ps))
                    for t, ps in sorted(member.assignment.items())
                    if t in st.topics
                ]
            )
        return resp(
            version=ctx.version, throttle_time_ms=0, error_code=code, error_message=message,
            member_id=None if member is None else member.member_id,
            member_epoch=-1 if member is None else member.epoch,
            heartbeat_interval_ms=sg.HEARTBEAT_INTERVAL_MS if code == 0 else 0, assignment=assignment,
        )  # fmt: skip

    if not sg.enabled(ctx.state):
        return answer(UNSUPPORTED_VERSION, UNSUPPORTED_TEXT)
    if not req.group_id:
        return answer(INVALID_REQUEST, "GroupId can't be empty.")
    if not req.member_id:
        return answer(INVALID_REQUEST, "MemberId can't be empty.")
    if req.member_epoch == 0 and not req.subscribed_topic_names:
        return answer(INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
    if coordinator(ctx.state, req.group_id) != ctx.node.node_id:
        return answer(NOT_COORDINATOR)
    if req.group_id in ctx.state.groups:
        return answer(GROUP_ID_NOT_FOUND, f"Group {req.group_id} is not a share group.")
    member = sg.join_or_beat(
        ctx.state, req.group_id, req.member_id, req.member_epoch, ctx.client_id or "", ctx.client_host,
        req.rack_id, req.subscribed_topic_names,
    )  # fmt: skip
    if member is None:
        return resp(
            version=ctx.version, throttle_time_ms=0, error_code=0, error_message=None,
            member_id=req.member_id, member_epoch=-1, heartbeat_interval_ms=0, assignment=None,
        )  # fmt: skip
    return answer(member=member)


def _group(ctx: RequestContext, gid: str) -> sg.ShareGroup | None:
    g = sg.of(ctx.state).groups.get(gid)
    if g is not None:
        sg.expire(ctx.state, g)
    return g


@api(ShareGroupDescribeRequest, 1, 1)
def share_group_describe(ctx: RequestContext, req: Any) -> Any:
    resp = ShareGroupDescribeResponse
    st = ctx.state
    out = []
    for gid in req.group_ids:

        def failed(code: int, message: str | None = None, gid: str = gid) -> Any:
            return resp.DescribedGroup(
                error_code=code, error_message=message, group_id=gid, group_state="", group_epoch=0,
                assignment_epoch=0, assignor_name="", members=[], authorized_operations=-(2**31),
            )  # fmt: skip

        if not sg.enabled(st):
            out.append(failed(UNSUPPORTED_VERSION))
            continue
        if not gid:
            out.append(failed(INVALID_GROUP_ID))
            continue
        if coordinator(st, gid) != ctx.node.node_id:
            out.append(failed(NOT_COORDINATOR))
            continue
        g = _group(ctx, gid)
        if g is None:
            out.append(failed(GROUP_ID_NOT_FOUND, _not_found(gid)))
            continue
        m_cls = resp.DescribedGroup.Member
        tp_cls = m_cls.Assignment.TopicPartitions
        members = [
            m_cls(
                member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.epoch, client_id=m.client_id,
                client_host=m.client_host, subscribed_topic_names=list(m.subscribed),
                assignment=m_cls.Assignment(topic_partitions=[
                    tp_cls(topic_id=st.topics[t].topic_id, topic_name=t, partitions=sorted(ps))
                    for t, ps in sorted(m.assignment.items()) if t in st.topics
                ]),
            )
            for m in sorted(g.members.values(), key=lambda m: m.member_id)
        ]  # fmt: skip
        out.append(
            resp.DescribedGroup(
                error_code=0,
                error_message=None,
                group_id=gid,
                group_state=g.state,
                group_epoch=g.group_epoch,
                assignment_epoch=g.assignment_epoch,
                assignor_name="simple",
                members=members,
                authorized_operations=-(2**31),
            )  # fmt: skip
        )
    return resp(version=ctx.version, throttle_time_ms=0, groups=out)


@api(DescribeShareGroupOffsetsRequest, 0, 0)
def describe_share_group_offsets(ctx: RequestContext, req: Any) -> Any:
    resp = DescribeShareGroupOffsetsResponse
    st = ctx.state
    out = []
    for rg in req.groups:
        gid = rg.group_id
        if not sg.enabled(st) or coordinator(st, gid) != ctx.node.node_id:
            code = UNSUPPORTED_VERSION if not sg.enabled(st) else NOT_COORDINATOR
            out.append(resp.Group(group_id=gid, topics=[], error_code=code, error_message=None))
            continue
        g = _group(ctx, gid)
        start = g.start if g is not None else {}
        if rg.topics is None:
            asked: dict[str, list[int]] = {}
            for t, p in sorted(start):
                asked.setdefault(t, []).append(p)
        else:
            asked = {t.topic_name: list(t.partitions) for t in rg.topics}
        topics = []
        for name, parts in asked.items():
            known = st.topics.get(name)
            topics.append(
                resp.Group.Topic(
                    topic_name=name, topic_id=known.topic_id if known else None,
                    partitions=[
                        resp.Group.Topic.Partition(
                            partition_index=p, start_offset=start.get((name, p), -1), leader_epoch=0,
                            error_code=0, error_message=None,
                        )
                        for p in parts
                    ],
                )
            )  # fmt: skip
        out.append(resp.Group(group_id=gid, topics=topics, error_code=0, error_message=None))
    return resp(version=ctx.version, throttle_time_ms=0, groups=out)


def _refused_at_coordinator(ctx: RequestContext, group_id: str, resp: Any) -> Any:
    """The top-level refusal of a group-level share request (Alter/DeleteShareGroupOffsets), as 4.1
    answers it: the feature off, no group id, not this group's coordinator; None when it goes on."""
    if not sg.enabled(ctx.state):
        code, message = UNSUPPORTED_VERSION, UNSUPPORTED_TEXT
    elif not group_id:
        code, message = INVALID_GROUP_ID, None
    elif coordinator(ctx.state, group_id) != ctx.node.node_id:
        code, message = NOT_COORDINATOR, None
    else:
        return None
    return resp(version=ctx.version, throttle_time_ms=0, error_code=code, error_message=message, responses=[])


@api(AlterShareGroupOffsetsRequest, 0, 0)
def alter_share_group_offsets(ctx: RequestContext, req: Any) -> Any:
    """As Kafka 4.1: unknown topics refused per partition, the rest never reaches the coordinator."""
    resp = AlterShareGroupOffsetsResponse
    st = ctx.state
    refused = _refused_at_coordinator(ctx, req.group_id, resp)
    if refused is not None:
        return refused
    p_cls = resp.Topic.Partition
    unknown = [
        resp.Topic(
            topic_name=t.topic_name, topic_id=None,
            partitions=[
                p_cls(partition_index=p.partition_index, error_code=UNKNOWN_TOPIC_OR_PARTITION, error_message=NOT_HOSTED)
                for p in t.partitions
            ],
        )
        for t in req.topics
        if t.topic_name not in st.topics
    ]  # fmt: skip
    return resp(version=ctx.version, throttle_time_ms=0, error_code=0, error_message=None, responses=unknown)


@api(DeleteShareGroupOffsetsRequest, 0, 0)
def delete_share_group_offsets(ctx: RequestContext, req: Any) -> Any:
    resp = DeleteShareGroupOffsetsResponse
    st = ctx.state
    refused = _refused_at_coordinator(ctx, req.group_id, resp)
    if refused is not None:
        return refused

    def top(code: int, message: str | None = None) -> Any:
        return resp(
            version=ctx.version, throttle_time_ms=0, error_code=code, error_message=message, responses=[]
        )

    g = _group(ctx, req.group_id)
    if g is None:
        return top(GROUP_ID_NOT_FOUND, _not_found(req.group_id))
    if g.members:
        return top(NON_EMPTY_GROUP, f"Share group {req.group_id} is not empty.")
    out = []
    for t in req.topics:
        name = t.topic_name
        keys = [k for k in g.start if k[0] == name]
        if name not in st.topics:
            code, message = UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED
        elif not keys:
            code, message = UNKNOWN_TOPIC_OR_PARTITION, "There is no offset information to delete."
        else:
            code, message = 0, None
            for k in keys:
                del g.start[k]
        out.append(resp.Topic(topic_name=name, topic_id=None, error_code=code, error_message=message))
    return resp(version=ctx.version, throttle_time_ms=0, error_code=0, error_message=None, responses=out)


def listed(st: Any, node_id: int, live: list[int]) -> list[tuple[str, str]]:
    """(group id, state) of the share groups this broker coordinates, for ListGroups."""
    if not sg.enabled(st):
        return []
    out = []
    for gid, g in sg.of(st).groups.items():
        if coordinator(st, gid, live) == node_id:
            sg.expire(st, g)
            out.append((gid, g.state))
    return out


def delete(st: Any, gid: str) -> int | None:
    """DeleteGroups of a share group: NON_EMPTY_GROUP while it has members; None: not a share group."""
    store = sg.of(st)
    g = store.groups.get(gid)
    if g is None or not sg.enabled(st):
        return None
    sg.expire(st, g)
    if g.members:
        return NON_EMPTY_GROUP
    del store.groups[gid]
    return 0
