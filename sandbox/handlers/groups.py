"""ListGroups, DescribeGroups and OffsetFetch for synthetic consumer groups (no group protocol)."""

from __future__ import annotations

import zlib
from typing import Any

from kafka.protocol.admin import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.consumer import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from sandbox.apis import RequestContext, api
from sandbox.state import ClusterState, Group

GROUP_OPS = {3, 6, 8, 10, 11}  # READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS


def coordinator(st: ClusterState, group_id: str) -> int:
    """The broker coordinating a group (same hash as FindCoordinator)."""
    live = st.live_brokers()
    return live[zlib.crc32(group_id.encode()) % len(live)] if live else -1


@api(ListGroupsRequest, 0, 5)
def list_groups(ctx: RequestContext, req: Any) -> Any:
    """Groups coordinated by this broker, optionally filtered by state/type."""
    st, v = ctx.state, ctx.version
    states = {s.lower() for s in (req.states_filter or [])} if v >= 4 else set()
    types = {t.lower() for t in (req.types_filter or [])} if v >= 5 else set()
    out = []
    for g in st.groups.values():
        if coordinator(st, g.group_id) != ctx.node.node_id:
            continue
        if states and g.state.lower() not in states or types and "classic" not in types:
            continue
        out.append(
            ListGroupsResponse.ListedGroup(
                group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state, group_type="Classic"
            )
        )
    return ListGroupsResponse(version=v, throttle_time_ms=0, error_code=0, groups=out)


def _member_bytes(g: Group, m: Any) -> tuple[bytes, bytes]:
    topics = sorted({t for t, _ in m.assignment})
    sub = ConsumerProtocolSubscription(topics=topics, user_data=None, owned_partitions=[])
    by_topic: dict[str, list[int]] = {}
    for t, p in m.assignment:
        by_topic.setdefault(t, []).append(p)
    asg = ConsumerProtocolAssignment(
        assigned_partitions=[
            ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=ps) for t, ps in by_topic.items()
        ],
        user_data=None,
    )
    return sub.encode(version=0), asg.encode(version=0)


@api(DescribeGroupsRequest, 0, 6)
def describe_groups(ctx: RequestContext, req: Any) -> Any:
    """State, protocol and members (with assignments) of each group."""
    st, v = ctx.state, ctx.version
    dg = DescribeGroupsResponse.DescribedGroup
    out = []
    for gid in req.groups:
        if coordinator(st, gid) != ctx.node.node_id:
            out.append(
                dg(
                    error_code=16,
                    error_message=None,
                    group_id=gid,
                    group_state="",
                    protocol_type="",
                    protocol_data="",
                    members=[],
                    authorized_operations=None,
                )
            )
            continue
        g = st.groups.get(gid)
        if g is None:
            out.append(
                dg(
                    error_code=69 if v >= 6 else 0,
                    group_id=gid,
                    error_message=f"Group {gid} not found." if v >= 6 else None,
                    group_state="Dead",
                    protocol_type="",
                    protocol_data="",
                    members=[],
                    authorized_operations=GROUP_OPS if req.include_authorized_operations and v < 6 else None,
                )
            )
            continue
        members = []
        for m in g.members:
            meta, asg = _member_bytes(g, m)
            members.append(
                dg.DescribedGroupMember(
                    member_id=m.member_id,
                    group_instance_id=None,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=meta,
                    member_assignment=asg,
                )
            )
        for lm in g.live.values():
            members.append(
                dg.DescribedGroupMember(
                    member_id=lm.member_id,
                    group_instance_id=None,
                    client_id=lm.client_id,
                    client_host=lm.client_host,
                    member_metadata=lm.protocols.get(g.protocol, b""),
                    member_assignment=lm.assignment,
                )
            )
        out.append(
            dg(
                error_code=0,
                error_message=None,
                group_id=gid,
                group_state=g.state,
                protocol_type=g.protocol_type,
                protocol_data=g.protocol if members else "",
                members=members,
                authorized_operations=GROUP_OPS if req.include_authorized_operations else None,
            )
        )
    return DescribeGroupsResponse(version=v, throttle_time_ms=0, groups=out)


def _offsets(
    st: ClusterState, g: Group | None, topics: list[tuple[str, list[int]]] | None
) -> list[tuple[str, list[tuple[int, int]]]]:
    if g is None:
        return [(t, [(p, -1) for p in ps]) for t, ps in (topics or [])]
    if topics is None:
        by: dict[str, list[tuple[int, int]]] = {}
        for (t, p), off in sorted(g.offsets.items()):
            by.setdefault(t, []).append((p, off))
        return list(by.items())
    return [(t, [(p, g.offsets.get((t, p), -1)) for p in ps]) for t, ps in topics]


@api(OffsetFetchRequest, 1, 9)
def offset_fetch(ctx: RequestContext, req: Any) -> Any:
    """Committed offsets of one group (v1-7) or several groups (v8+)."""
    st, v = ctx.state, ctx.version
    of = OffsetFetchResponse
    if v < 8:
        topics = None if req.topics is None else [(t.name, list(t.partition_indexes)) for t in req.topics]
        if coordinator(st, req.group_id) != ctx.node.node_id:
            return of(version=v, throttle_time_ms=0, topics=[], error_code=16)
        res = _offsets(st, st.groups.get(req.group_id), topics)
        ot = of.OffsetFetchResponseTopic
        return of(
            version=v,
            throttle_time_ms=0,
            error_code=0,
            topics=[
                ot(
                    name=t,
                    partitions=[
                        ot.OffsetFetchResponsePartition(
                            partition_index=p,
                            committed_offset=o,
                            committed_leader_epoch=-1,
                            metadata="",
                            error_code=0,
                        )
                        for p, o in ps
                    ],
                )
                for t, ps in res
            ],
        )
    groups = []
    og = of.OffsetFetchResponseGroup
    for rg in req.groups:
        if coordinator(st, rg.group_id) != ctx.node.node_id:
            groups.append(og(group_id=rg.group_id, topics=[], error_code=16))
            continue
        topics = None if rg.topics is None else [(t.name, list(t.partition_indexes)) for t in rg.topics]
        res = _offsets(st, st.groups.get(rg.group_id), topics)
        groups.append(
            og(
                group_id=rg.group_id,
                error_code=0,
                topics=[
                    og.OffsetFetchResponseTopics(
                        name=t,
                        partitions=[
                            og.OffsetFetchResponseTopics.OffsetFetchResponsePartitions(
                                partition_index=p,
                                committed_offset=o,
                                committed_leader_epoch=-1,
                                metadata="",
                                error_code=0,
                            )
                            for p, o in ps
                        ],
                    )
                    for t, ps in res
                ],
            )
        )
    return of(version=v, throttle_time_ms=0, groups=groups)


def _generation_error(g: Group | None, member_id: str, generation: int) -> int:
    """UNKNOWN_MEMBER_ID / REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION for a member's commit."""
    if g is None or member_id not in g.live:
        return 25
    if g.state == "PreparingRebalance":
        return 27
    return 22 if generation != g.generation else 0


@api(OffsetCommitRequest, 2, 9)
def offset_commit(ctx: RequestContext, req: Any) -> Any:
    """Commits outside a generation (admin tools, assign()-based consumers): accepted while the
    group has no members (the group is created Empty), UNKNOWN_MEMBER_ID otherwise."""
    st, v = ctx.state, ctx.version
    ot = OffsetCommitResponse.OffsetCommitResponseTopic
    group = st.groups.get(req.group_id)
    in_generation = req.generation_id_or_member_epoch >= 0 or bool(req.member_id)
    if coordinator(st, req.group_id) != ctx.node.node_id:
        code = 16
    elif in_generation:
        code = _generation_error(group, req.member_id, req.generation_id_or_member_epoch)
    elif group is not None and (group.members or group.live):
        code = 25
    else:
        code = 0
        if group is None:
            group = st.groups[req.group_id] = Group(req.group_id, state="Empty")
    out = []
    for t in req.topics:
        topic = st.topics.get(t.name)
        parts = []
        for p in t.partitions:
            pcode = code
            if pcode == 0 and (topic is None or not 0 <= p.partition_index < len(topic.partitions)):
                pcode = 3
            if pcode == 0 and group is not None:
                group.offsets[(t.name, p.partition_index)] = p.committed_offset
            parts.append(
                ot.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=pcode)
            )
        out.append(ot(name=t.name, partitions=parts))
    return OffsetCommitResponse(version=v, throttle_time_ms=0, topics=out)


@api(DeleteGroupsRequest, 0, 2)
def delete_groups(ctx: RequestContext, req: Any) -> Any:
    """Delete groups without members; NON_EMPTY_GROUP (68) or GROUP_ID_NOT_FOUND (69) otherwise."""
    st = ctx.state
    out = []
    for gid in req.groups_names:
        g = st.groups.get(gid)
        if coordinator(st, gid) != ctx.node.node_id:
            code = 16
        elif g is None:
            code = 69
        elif g.members or g.live:
            code = 68
        else:
            code = 0
            del st.groups[gid]
        out.append(DeleteGroupsResponse.DeletableGroupResult(group_id=gid, error_code=code))
    return DeleteGroupsResponse(version=ctx.version, throttle_time_ms=0, results=out)
