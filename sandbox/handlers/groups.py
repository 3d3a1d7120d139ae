"""ListGroups, DescribeGroups, OffsetFetch, OffsetCommit, OffsetDelete and DeleteGroups for every
kind of group: classic groups (synthetic members from ``add_group``, live JoinGroup members) and
KIP-848 consumer groups (``ConsumerGroupHeartbeat``).

The rules are Kafka 4.1's group coordinator: ``GroupMetadataManager`` (listGroups,
describeGroups), ``OffsetMetadataManager`` (commitOffset, fetchOffsets, deleteOffsets) with the
group checks of ``ClassicGroup`` / ``ConsumerGroup`` (validateOffsetCommit, validateOffsetFetch,
validateOffsetDelete, validateDeleteGroup, isSubscribedToTopic), and the topic checks
``KafkaApis`` makes before the coordinator is asked.
"""

from __future__ import annotations

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
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from sandbox import consumer_groups as cg
from sandbox.apis import RequestContext, api
from sandbox.handlers import share
from sandbox.handlers.coordinator import (
    GROUP_ID_NOT_FOUND,
    GROUP_OPS,
    ILLEGAL_GENERATION,
    INVALID_GROUP_ID,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    coordinator,
    expire_group,
)
from sandbox.handlers.offset_answers import Topics, groups_answer
from sandbox.state import ClusterState, Group

UNKNOWN_TOPIC_OR_PARTITION, UNSUPPORTED_VERSION = 3, 35
NON_EMPTY_GROUP, GROUP_SUBSCRIBED_TO_TOPIC, STALE_MEMBER_EPOCH = 68, 86, 113
LIVE_CLASSIC_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance")


def _classic_is_empty(g: Group) -> bool:
    return g.state == "Empty" and not g.members and not g.live


def _classic_subscriptions(g: Group) -> set[str] | None:
    """ClassicGroup.computeSubscribedTopics: the topics the members' consumer-protocol
    subscriptions name; None when the group does not use the consumer protocol."""
    if g.protocol_type != "consumer":
        return None
    topics: set[str] = set()
    for m in g.members:
        topics.update(t for t, _ in m.assignment)
    for lm in g.live.values():
        meta = lm.protocols.get(g.protocol)
        if not meta:
            continue
        try:
            topics.update(ConsumerProtocolSubscription.decode(meta).topics or [])
        except Exception:  # a subscription Kafka cannot read counts as "uses the protocol"
            return None
    return topics


def is_subscribed(st: ClusterState, g: Group, topic: str) -> bool:
    """Group.isSubscribedToTopic (ClassicGroup: from the members' subscriptions, ModernGroup:
    from the members' subscribed topics)."""
    if g.type == "consumer":
        return cg.is_subscribed(st, g, topic)
    if _classic_is_empty(g):
        return False
    subs = _classic_subscriptions(g)
    return (topic in subs) if subs is not None else g.protocol_type == "consumer"


@api(ListGroupsRequest, 0, 5)
def list_groups(ctx: RequestContext, req: Any) -> Any:
    """Groups coordinated by this broker; v4+ filter by state, v5+ by type (both
    case-insensitive, GroupMetadataManager.listGroups); v5 says each group's type."""
    st, v = ctx.state, ctx.version
    states = {s.lower().strip() for s in (req.states_filter or [])} if v >= 4 else set()
    types = {t.lower() for t in (req.types_filter or [])} if v >= 5 else set()
    out = []
    live = st.live_brokers()
    for g in st.groups.values():
        if coordinator(st, g.group_id, live) != ctx.node.node_id:
            continue
        expire_group(st, g, ctx.node.node_id)
        if states and g.state.lower() not in states or types and g.type not in types:
            continue
        out.append(
            ListGroupsResponse.ListedGroup(
                group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state, group_type=g.type
            )
        )
    for gid, state in share.listed(st, ctx.node.node_id, live):  # share groups (KIP-932): type "share"
        if not (states and state.lower() not in states or types and "share" not in types):
            out.append(
                ListGroupsResponse.ListedGroup(
                    group_id=gid, protocol_type="share", group_state=state, group_type="share"
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
    """State, protocol and members (with assignments) of classic groups. As in
    GroupMetadataManager.describeGroups, members carry their metadata and assignment only in a
    Stable group; an unknown group, or a consumer-protocol group (which DescribeGroups does not
    describe: ConsumerGroupDescribe does), answers Dead (v6: with GROUP_ID_NOT_FOUND)."""
    st, v = ctx.state, ctx.version
    dg = DescribeGroupsResponse.DescribedGroup
    out = []
    for gid in req.groups:
        if coordinator(st, gid) != ctx.node.node_id:
            out.append(
                dg(
                    error_code=NOT_COORDINATOR,
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
        if g is None or g.type != "classic":
            message = f"Group {gid} not found." if g is None else f"Group {gid} is not a classic group."
            out.append(
                dg(
                    error_code=GROUP_ID_NOT_FOUND if v >= 6 else 0,
                    group_id=gid,
                    error_message=message if v >= 6 else None,
                    group_state="Dead",
                    protocol_type="",
                    protocol_data="",
                    members=[],
                    authorized_operations=GROUP_OPS if req.include_authorized_operations and v < 6 else None,
                )
            )
            continue
        expire_group(st, g, ctx.node.node_id)
        stable = g.state == "Stable"
        # synthetic members (add_group), then live JoinGroup members: id, client, host, metadata, assignment
        described = [(m.member_id, m.client_id, m.client_host, *_member_bytes(g, m)) for m in g.members]
        described += [
            (m.member_id, m.client_id, m.client_host, m.protocols.get(g.protocol, b""), m.assignment)
            for m in g.live.values()
        ]
        members = [
            dg.DescribedGroupMember(
                member_id=member_id,
                group_instance_id=None,
                client_id=client_id,
                client_host=client_host,
                member_metadata=meta if stable else b"",
                member_assignment=asg if stable else b"",
            )
            for member_id, client_id, client_host, meta, asg in described
        ]
        out.append(
            dg(
                error_code=0,
                error_message=None,
                group_id=gid,
                group_state=g.state,
                protocol_type=g.protocol_type,
                protocol_data=g.protocol if stable and members else "",
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


def fetched_topics(topic: Any, partition: Any, res: Topics) -> list[Any]:
    """``_offsets``'s answer as OffsetFetch topics (kafka-python's objects of the version's classes):
    one group's before v8; from v8 (many groups per request) ``offset_answers`` writes the bytes,
    which its test compares with these objects encoded by kafka-python."""
    return [
        topic(
            name=t,
            partitions=[
                partition(
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
    ]


def _fetch_check(st: ClusterState, g: Group | None, member_id: str | None, epoch: int, node_id: int) -> int:
    """validateOffsetFetch: a consumer group checks the member and its epoch when the request
    names one (OffsetFetch v9 from a KIP-848 consumer); classic groups check nothing."""
    if g is None or g.type != "consumer" or (member_id is None and epoch < 0):
        return 0
    expire_group(st, g, node_id)
    m = g.consumers.get(member_id or "")
    if m is None:
        return UNKNOWN_MEMBER_ID
    return STALE_MEMBER_EPOCH if epoch != m.member_epoch else 0


@api(OffsetFetchRequest, 1, 9)
def offset_fetch(ctx: RequestContext, req: Any) -> Any:
    """Committed offsets of one group (v1-7) or several groups (v8+)."""
    st, v = ctx.state, ctx.version
    of = OffsetFetchResponse
    if v < 8:
        topics = None if req.topics is None else [(t.name, list(t.partition_indexes)) for t in req.topics]
        if coordinator(st, req.group_id) != ctx.node.node_id:
            return of(version=v, throttle_time_ms=0, topics=[], error_code=NOT_COORDINATOR)
        res = _offsets(st, st.groups.get(req.group_id), topics)
        ot = of.OffsetFetchResponseTopic
        return of(
            version=v,
            throttle_time_ms=0,
            error_code=0,
            topics=fetched_topics(ot, ot.OffsetFetchResponsePartition, res),
        )
    groups: list[tuple[str, int, Topics]] = []
    live = st.live_brokers()
    for rg in req.groups:
        if coordinator(st, rg.group_id, live) != ctx.node.node_id:
            groups.append((rg.group_id, NOT_COORDINATOR, []))
            continue
        g = st.groups.get(rg.group_id)
        member_id = rg.member_id if v >= 9 else None
        code = _fetch_check(st, g, member_id, rg.member_epoch if v >= 9 else -1, ctx.node.node_id)
        if code:
            groups.append((rg.group_id, code, []))
            continue
        topics = None if rg.topics is None else [(t.name, list(t.partition_indexes)) for t in rg.topics]
        groups.append((rg.group_id, 0, _offsets(st, g, topics)))
    return groups_answer(groups)


def _commit_check(ctx: RequestContext, req: Any) -> tuple[int, Group | None]:
    """OffsetMetadataManager.validateOffsetCommit with ClassicGroup / ConsumerGroup
    .validateOffsetCommit: (error, group). A commit without a generation (an admin tool, an
    assign()-based consumer) is accepted only while the group has no members: otherwise
    UNKNOWN_MEMBER_ID, for classic and consumer groups alike."""
    st, v = ctx.state, ctx.version
    gen, member_id = req.generation_id_or_member_epoch, req.member_id
    instance_id = req.group_instance_id if v >= 7 else None
    g = st.groups.get(req.group_id)
    if g is None:
        if gen >= 0:  # GroupIdNotFoundException from v9 on, ILLEGAL_GENERATION before
            return (GROUP_ID_NOT_FOUND if v >= 9 else ILLEGAL_GENERATION), None
        # "Creating a simple consumer group via manual offset commit": no protocol type
        g = st.groups[req.group_id] = Group(req.group_id, state="Empty", protocol_type="", protocol="")
        return 0, g
    expire_group(st, g, ctx.node.node_id)
    if g.type == "consumer":
        if gen < 0 and not g.consumers:
            return 0, g
        m = g.consumers.get(member_id)
        if m is None:
            return UNKNOWN_MEMBER_ID, g
        if v < 9:  # "OffsetCommit version 9 or above must be used by members using the modern group protocol"
            return UNSUPPORTED_VERSION, g
        return (STALE_MEMBER_EPOCH if gen != m.member_epoch else 0), g
    empty = _classic_is_empty(g)
    if gen < 0 and empty:
        return 0, g
    if gen >= 0 or member_id or instance_id is not None:
        if member_id not in g.live:
            return UNKNOWN_MEMBER_ID, g
        if gen != g.generation:
            return ILLEGAL_GENERATION, g
    elif not empty:
        return UNKNOWN_MEMBER_ID, g
    if g.state == "CompletingRebalance":
        return REBALANCE_IN_PROGRESS, g
    return 0, g


def _known_partition(st: ClusterState, topic: str, partition: int) -> bool:
    t = st.topics.get(topic)
    return t is not None and 0 <= partition < len(t.partitions)


@api(OffsetCommitRequest, 2, 9)
def offset_commit(ctx: RequestContext, req: Any) -> Any:
    """Commits from members (their generation or member epoch checked) and from outside a
    generation (admin tools). Partitions of unknown topics get UNKNOWN_TOPIC_OR_PARTITION and are
    not passed on; with none left the coordinator is not asked (KafkaApis)."""
    st, v = ctx.state, ctx.version
    ot = OffsetCommitResponse.OffsetCommitResponseTopic
    valid = any(_known_partition(st, t.name, p.partition_index) for t in req.topics for p in t.partitions)
    code, group = 0, None
    if valid:
        if coordinator(st, req.group_id) != ctx.node.node_id:
            code = NOT_COORDINATOR
        else:
            code, group = _commit_check(ctx, req)
    out = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            pcode = code if _known_partition(st, t.name, p.partition_index) else UNKNOWN_TOPIC_OR_PARTITION
            if pcode == 0 and group is not None:
                group.offsets[(t.name, p.partition_index)] = p.committed_offset
            parts.append(
                ot.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=pcode)
            )
        out.append(ot(name=t.name, partitions=parts))
    return OffsetCommitResponse(version=v, throttle_time_ms=0, topics=out)


@api(OffsetDeleteRequest, 0, 0)
def offset_delete(ctx: RequestContext, req: Any) -> Any:
    """Delete a group's committed offsets (OffsetMetadataManager.deleteOffsets). Refused with
    NON_EMPTY_GROUP for a classic group with members that does not use the consumer protocol,
    GROUP_SUBSCRIBED_TO_TOPIC for each partition of a topic the group is subscribed to (classic
    consumer-protocol groups with members, consumer groups), GROUP_ID_NOT_FOUND for an unknown
    group (a group-level error comes alone); unknown topics and partitions get
    UNKNOWN_TOPIC_OR_PARTITION (KafkaApis)."""
    st = ctx.state
    rt = OffsetDeleteResponse.OffsetDeleteResponseTopic
    rp = rt.OffsetDeleteResponsePartition

    def answer(code: int, topics: list[Any]) -> Any:
        # a group-level error replaces the per-partition answers (OffsetDeleteResponse.Builder.merge)
        return OffsetDeleteResponse(
            version=ctx.version, error_code=code, throttle_time_ms=0, topics=[] if code else topics
        )

    if not req.group_id:
        return answer(INVALID_GROUP_ID, [])
    unknown, known = [], []
    for t in req.topics:
        bad = [p.partition_index for p in t.partitions if not _known_partition(st, t.name, p.partition_index)]
        good = [p.partition_index for p in t.partitions if _known_partition(st, t.name, p.partition_index)]
        if bad:
            unknown.append(rt(name=t.name, partitions=[rp(partition_index=p, error_code=3) for p in bad]))
        if good:
            known.append((t.name, good))
    if coordinator(st, req.group_id) != ctx.node.node_id:
        return answer(NOT_COORDINATOR, unknown)
    g = st.groups.get(req.group_id)
    if g is None:
        return answer(GROUP_ID_NOT_FOUND, unknown)
    expire_group(st, g, ctx.node.node_id)
    if g.type == "classic" and (g.state in LIVE_CLASSIC_STATES and g.protocol_type != "consumer"):
        return answer(NON_EMPTY_GROUP, unknown)
    out = []
    for name, parts in known:
        if is_subscribed(st, g, name):
            out.append(
                rt(
                    name=name,
                    partitions=[rp(partition_index=p, error_code=GROUP_SUBSCRIBED_TO_TOPIC) for p in parts],
                )
            )
            continue
        for p in parts:
            g.offsets.pop((name, p), None)
            g.seen_end.pop((name, p), None)
        out.append(rt(name=name, partitions=[rp(partition_index=p, error_code=0) for p in parts]))
    return answer(0, unknown + out)


@api(DeleteGroupsRequest, 0, 2)
def delete_groups(ctx: RequestContext, req: Any) -> Any:
    """Delete groups without members (and their offsets): NON_EMPTY_GROUP for a classic group
    with members or a consumer group that is not Empty (validateDeleteGroup), GROUP_ID_NOT_FOUND
    for an unknown group."""
    st = ctx.state
    out = []
    for gid in req.groups_names:
        g = st.groups.get(gid)
        if coordinator(st, gid) != ctx.node.node_id:
            code = NOT_COORDINATOR
        elif g is None:
            shared = share.delete(st, gid)  # a share group: NON_EMPTY_GROUP while members remain
            code = GROUP_ID_NOT_FOUND if shared is None else shared
        else:
            expire_group(st, g, ctx.node.node_id)
            busy = g.state != "Empty" if g.type == "consumer" else not _classic_is_empty(g)
            code = NON_EMPTY_GROUP if busy else 0
            if not busy:
                del st.groups[gid]
        out.append(DeleteGroupsResponse.DeletableGroupResult(group_id=gid, error_code=code))
    return DeleteGroupsResponse(version=ctx.version, throttle_time_ms=0, results=out)
