"""KIP-848 consumer groups: ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69).

The request checks mirror Kafka 4.1's ``GroupCoordinatorService``
(``throwIfConsumerGroupHeartbeatRequestIsInvalid``, run before the coordinator is looked up);
joining, heartbeats and leaving mirror ``GroupMetadataManager.consumerGroupHeartbeat`` /
``consumerGroupLeave``; the group model (epochs, assignment, reconciliation, timeouts) is in
``sandbox.consumer_groups``.
"""

from __future__ import annotations

import base64
import re
import time
import uuid
from typing import Any

from sandbox import consumer_groups as cg
from sandbox.apis import RequestContext, api
from sandbox.handlers.coordinator import (
    GROUP_ID_NOT_FOUND,
    GROUP_OPS,
    INVALID_GROUP_ID,
    NOT_COORDINATOR,
    UNKNOWN_MEMBER_ID,
    coordinator,
    expire_group,
)
from sandbox.protocol import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from sandbox.state import ConsumerMember, Group

INVALID_REQUEST, FENCED_INSTANCE_ID, FENCED_MEMBER_EPOCH = 42, 82, 110
UNRELEASED_INSTANCE_ID, UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION = 111, 112, 128
LEAVE_EPOCH, STATIC_LEAVE_EPOCH = -1, -2
AUTHORIZED_OPS_NONE = -(2**31)  # Kafka's "not requested" bitfield


class HeartbeatError(Exception):
    """An error answer (Kafka throws an ApiException from the coordinator)."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def kafka_uuid() -> str:
    """A new id as Kafka's Uuid.randomUuid().toString(): 16 random bytes in URL-safe base64
    without padding (22 characters), never starting with '-'."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _blank(value: str | None) -> bool:
    """Kafka's Utils.throwIfEmptyString: set but empty (after trimming)."""
    return value is not None and not value.strip()


def _validate(req: Any, version: int) -> None:
    """GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid (Kafka 4.1)."""
    epoch = req.member_epoch
    if (version >= 1 or epoch > 0 or epoch == LEAVE_EPOCH) and _blank(req.member_id):
        raise HeartbeatError(INVALID_REQUEST, "MemberId can't be empty.")
    if _blank(req.group_id):
        raise HeartbeatError(INVALID_REQUEST, "GroupId can't be empty.")
    if _blank(req.instance_id):
        raise HeartbeatError(INVALID_REQUEST, "InstanceId can't be empty.")
    if _blank(req.rack_id):
        raise HeartbeatError(INVALID_REQUEST, "RackId can't be empty.")
    regex = req.subscribed_topic_regex if version >= 1 else None
    if epoch == 0:
        if req.rebalance_timeout_ms == -1:
            raise HeartbeatError(INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
        if req.topic_partitions is None or req.topic_partitions:
            raise HeartbeatError(INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
        if req.subscribed_topic_names is None and regex is None:
            raise HeartbeatError(
                INVALID_REQUEST,
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.",
            )
    elif epoch == STATIC_LEAVE_EPOCH:
        if req.instance_id is None:
            raise HeartbeatError(INVALID_REQUEST, "InstanceId can't be null.")
    elif epoch < STATIC_LEAVE_EPOCH:
        raise HeartbeatError(INVALID_REQUEST, "MemberEpoch is invalid.")
    if req.server_assignor is not None and req.server_assignor not in cg.ASSIGNORS:
        raise HeartbeatError(
            UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {req.server_assignor} is not supported. "
            f"Supported assignors: {', '.join(cg.ASSIGNORS)}.",
        )


def _owned(req: Any) -> cg.Owned:
    if req.topic_partitions is None:
        return None
    return [(tp.topic_id, list(tp.partitions)) for tp in req.topic_partitions]


def _subset(owned: cg.Owned, assigned: cg.Assignment) -> bool:
    """GroupMetadataManager.isSubset: the member owns only partitions it is assigned."""
    if owned is None:
        return False
    return all(p in assigned.get(t, ()) for t, ps in owned for p in ps)


def _check_epoch(m: ConsumerMember, received: int, owned: cg.Owned) -> None:
    """throwIfConsumerGroupMemberEpochIsInvalid."""
    if received > m.member_epoch:
        raise HeartbeatError(
            FENCED_MEMBER_EPOCH,
            f"The consumer group member has a greater member epoch ({received}) than the one known "
            f"by the group coordinator ({m.member_epoch}). The member must abandon all its "
            "partitions and rejoin.",
        )
    if received < m.member_epoch and (received != m.previous_member_epoch or not _subset(owned, m.assigned)):
        raise HeartbeatError(
            FENCED_MEMBER_EPOCH,
            f"The consumer group member has a smaller member epoch ({received}) than the one known "
            f"by the group coordinator ({m.member_epoch}). The member must abandon all its "
            "partitions and rejoin.",
        )


def _static_member(g: Group, instance_id: str) -> ConsumerMember | None:
    return next((m for m in g.consumers.values() if m.instance_id == instance_id), None)


def _consumer_group(st: Any, gid: str, create: bool) -> tuple[Group, bool]:
    """GroupMetadataManager.getOrMaybeCreateConsumerGroup: (group, newly made). An empty
    classic group (e.g. made by an admin offset commit) becomes a consumer group, keeping its
    offsets; a classic group with members is not upgraded (the sandbox behaves as Kafka with
    ``group.consumer.migration.policy=disabled``)."""
    g = st.groups.get(gid)
    if g is None:
        if not create:
            raise HeartbeatError(GROUP_ID_NOT_FOUND, f"Consumer group {gid} not found.")
        return cg.new_consumer_group(gid), True
    if g.type == "consumer":
        return g, False
    if create and g.state == "Empty" and not g.live and not g.members:
        return cg.new_consumer_group(gid, g.offsets), True
    if create:
        raise HeartbeatError(
            GROUP_ID_NOT_FOUND,
            f"Cannot upgrade classic group {gid} to consumer group because online upgrade is disabled.",
        )
    raise HeartbeatError(GROUP_ID_NOT_FOUND, f"Group {gid} is not a consumer group.")


def _member(
    ctx: RequestContext, g: Group, req: Any, member_id: str, create: bool
) -> tuple[ConsumerMember, bool]:
    """getOrMaybeSubscribeDynamic/StaticConsumerGroupMember: (member, is new)."""
    owned, epoch, iid = _owned(req), req.member_epoch, req.instance_id
    if iid is None:
        m = g.consumers.get(member_id)
        if m is None:
            if not create:
                raise HeartbeatError(
                    UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {g.group_id}."
                )
            m = ConsumerMember(
                member_id, ctx.client_id or "", f"/{ctx.client_host}", req.rebalance_timeout_ms
            )
            return m, True
        _check_epoch(m, epoch, owned)
        return m, False
    existing = _static_member(g, iid)
    if not create:
        if existing is None:
            raise HeartbeatError(UNKNOWN_MEMBER_ID, f"Instance id {iid} is unknown.")
        if existing.member_id != member_id:
            raise HeartbeatError(
                FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {iid} was fenced by member {existing.member_id}.",
            )
        _check_epoch(existing, epoch, owned)
        return existing, False
    if existing is None:
        m = g.consumers.get(member_id) or ConsumerMember(
            member_id, ctx.client_id or "", f"/{ctx.client_host}", req.rebalance_timeout_ms
        )
        return m, member_id not in g.consumers
    if existing.member_epoch != STATIC_LEAVE_EPOCH:
        raise HeartbeatError(
            UNRELEASED_INSTANCE_ID,
            f"Static member {member_id} with instance id {iid} cannot join the group because the "
            f"instance id is owned by {existing.member_id} member.",
        )
    # the static member comes back under a new member id and takes over its partitions
    replacement = ConsumerMember(
        member_id,
        existing.client_id,
        existing.client_host,
        existing.rebalance_timeout_ms,
        instance_id=iid,
        rack_id=existing.rack_id,
        subscribed_topic_names=list(existing.subscribed_topic_names),
        subscribed_topic_regex=existing.subscribed_topic_regex,
        server_assignor=existing.server_assignor,
        member_epoch=0,
        previous_member_epoch=0,
        state=existing.state,
        assigned={t: set(ps) for t, ps in existing.assigned.items()},
    )
    del g.consumers[existing.member_id]
    if existing.member_id in g.targets:
        g.targets[member_id] = g.targets.pop(existing.member_id)
    g.consumers[member_id] = replacement
    return replacement, False


def _response(ctx: RequestContext, **fields: Any) -> Any:
    values = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "member_id": None,
        "member_epoch": 0,
        "heartbeat_interval_ms": 0,
        "assignment": None,
    }
    values.update(fields)
    return ConsumerGroupHeartbeatResponse(version=ctx.version, **values)


def _leave(ctx: RequestContext, req: Any) -> Any:
    """consumerGroupLeave: -1 removes the member (the group epoch is bumped); -2 is a static
    member leaving for a while (it keeps its partitions until its session times out)."""
    st, gid = ctx.state, req.group_id
    g = st.groups.get(gid)
    if g is None:
        raise HeartbeatError(GROUP_ID_NOT_FOUND, f"Group {gid} not found.")
    if g.type != "consumer":
        raise HeartbeatError(GROUP_ID_NOT_FOUND, f"Group {gid} is not a consumer group.")
    iid = req.instance_id
    if iid is None:
        if req.member_id not in g.consumers:
            raise HeartbeatError(UNKNOWN_MEMBER_ID, f"Member {req.member_id} is not a member of group {gid}.")
        cg.fence(st, g, [req.member_id])
        return _response(ctx, member_id=req.member_id, member_epoch=req.member_epoch)
    m = _static_member(g, iid)
    if m is None:
        raise HeartbeatError(UNKNOWN_MEMBER_ID, f"Instance id {iid} is unknown.")
    if m.member_id != req.member_id:
        raise HeartbeatError(
            FENCED_INSTANCE_ID,
            f"Static member {req.member_id} with instance id {iid} was fenced by member {m.member_id}.",
        )
    if req.member_epoch == STATIC_LEAVE_EPOCH:
        m.previous_member_epoch, m.member_epoch = m.member_epoch, STATIC_LEAVE_EPOCH
        m.pending_revocation, m.last_seen = {}, time.monotonic()
        cg.update_state(g)
        return _response(ctx, member_id=m.member_id, member_epoch=STATIC_LEAVE_EPOCH)
    cg.fence(st, g, [m.member_id])
    return _response(ctx, member_id=req.member_id, member_epoch=req.member_epoch)


def _heartbeat(ctx: RequestContext, req: Any) -> Any:
    """consumerGroupHeartbeat: update the member, bump the group epoch when its subscription
    (or the subscribed topics' metadata) changed, compute a new target assignment when the
    group epoch is ahead, reconcile the member."""
    st, v, gid, now = ctx.state, ctx.version, req.group_id, time.monotonic()
    create = req.member_epoch == 0
    g, new_group = _consumer_group(st, gid, create)
    member_id = req.member_id or kafka_uuid()  # v0: the coordinator names new members
    m, new_member = _member(ctx, g, req, member_id, create)
    before = {t: set(ps) for t, ps in m.assigned.items()}
    old_names, old_regex = list(m.subscribed_topic_names), m.subscribed_topic_regex
    regex = req.subscribed_topic_regex if v >= 1 else None
    if regex and regex != old_regex:
        try:
            re.compile(regex)
        except re.error as exc:
            raise HeartbeatError(
                INVALID_REGULAR_EXPRESSION,
                f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {exc}.",
            ) from None
    # the request is valid: apply it (Kafka writes the records only now)
    if new_group:
        st.groups[gid] = g
    if req.instance_id is not None:
        m.instance_id = req.instance_id
    if req.rack_id is not None:
        m.rack_id = req.rack_id
    if req.rebalance_timeout_ms != -1:
        m.rebalance_timeout_ms = req.rebalance_timeout_ms
    if req.server_assignor is not None:
        m.server_assignor = req.server_assignor
    if req.subscribed_topic_names is not None:
        m.subscribed_topic_names = list(req.subscribed_topic_names)
    if regex is not None:
        m.subscribed_topic_regex = regex
    m.client_id, m.client_host, m.last_seen = ctx.client_id or "", f"/{ctx.client_host}", now
    g.consumers[m.member_id] = m
    bump = g.group_epoch == 0 or new_member
    bump = bump or m.subscribed_topic_names != old_names or m.subscribed_topic_regex != old_regex
    metadata = cg.subscription_metadata(st, g)
    if bump or metadata != g.subscribed_metadata:
        g.subscribed_metadata = metadata
        g.group_epoch += 1
    if g.group_epoch > g.assignment_epoch:
        cg.compute_target(st, g)
    owned = _owned(req)
    cg.reconcile(g, m, owned, now + m.rebalance_timeout_ms / 1000.0)
    cg.update_state(g)
    interval = cg.group_config_ms(
        st, ctx.node.node_id, "group.consumer.heartbeat.interval.ms", cg.DEFAULT_HEARTBEAT_INTERVAL_MS
    )
    resp = _response(ctx, member_id=m.member_id, member_epoch=m.member_epoch, heartbeat_interval_ms=interval)
    full = req.rebalance_timeout_ms != -1 and (req.subscribed_topic_names is not None or regex is not None)
    if req.member_epoch == 0 or (full and owned is not None) or m.assigned != before:
        asg = ConsumerGroupHeartbeatResponse.Assignment
        resp.assignment = asg(
            topic_partitions=[
                asg.TopicPartitions(topic_id=t, partitions=ps) for t, ps in cg.assignment_list(m.assigned)
            ]
        )
    return resp


@api(ConsumerGroupHeartbeatRequest, 0, 1)
def consumer_group_heartbeat(ctx: RequestContext, req: Any) -> Any:
    """Join (epoch 0), heartbeat (the current epoch, owned partitions), leave (-1 / -2)."""
    try:
        _validate(req, ctx.version)
        if coordinator(ctx.state, req.group_id) != ctx.node.node_id:
            return _response(ctx, error_code=NOT_COORDINATOR)
        g = ctx.state.groups.get(req.group_id)
        if g is not None:
            expire_group(ctx.state, g, ctx.node.node_id)
        if req.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return _leave(ctx, req)
        return _heartbeat(ctx, req)
    except HeartbeatError as exc:
        return _response(ctx, error_code=exc.code, error_message=exc.message)


def _described_members(ctx: RequestContext, g: Group) -> list[Any]:
    st, dg = ctx.state, ConsumerGroupDescribeResponse.DescribedGroup
    mem = dg.Member
    names = st.topic_ids

    def assignment(a: cg.Assignment) -> Any:
        return mem.Assignment(
            topic_partitions=[
                mem.Assignment.TopicPartitions(topic_id=t, topic_name=names[t], partitions=ps)
                for t, ps in cg.assignment_list(a)
                if t in names  # partitions of deleted topics are left out, as Kafka does
            ]
        )

    return [
        mem(
            member_id=m.member_id,
            instance_id=m.instance_id,
            rack_id=m.rack_id,
            member_epoch=m.member_epoch,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=list(m.subscribed_topic_names),
            subscribed_topic_regex=m.subscribed_topic_regex,
            assignment=assignment(m.assigned),
            target_assignment=assignment(g.targets.get(m.member_id, {})),
            member_type=1,  # KIP-1099: a member using the consumer protocol
        )
        for m in g.consumers.values()
    ]


@api(ConsumerGroupDescribeRequest, 0, 1)
def consumer_group_describe(ctx: RequestContext, req: Any) -> Any:
    """GroupMetadataManager.consumerGroupDescribe: epochs, state, assignor and members of
    consumer groups; GROUP_ID_NOT_FOUND for unknown and for classic groups."""
    st, dg = ctx.state, ConsumerGroupDescribeResponse.DescribedGroup

    def failed(gid: str, code: int, message: str | None = None) -> Any:
        return dg(
            error_code=code,
            error_message=message,
            group_id=gid,
            group_state="",
            group_epoch=0,
            assignment_epoch=0,
            assignor_name="",
            members=[],
            authorized_operations=AUTHORIZED_OPS_NONE,
        )

    out = []
    for gid in req.group_ids:
        if not gid:
            out.append(failed("", INVALID_GROUP_ID))
            continue
        if coordinator(st, gid) != ctx.node.node_id:
            out.append(failed(gid, NOT_COORDINATOR))
            continue
        g = st.groups.get(gid)
        if g is None:
            out.append(failed(gid, GROUP_ID_NOT_FOUND, f"Group {gid} not found."))
            continue
        if g.type != "consumer":
            out.append(failed(gid, GROUP_ID_NOT_FOUND, f"Group {gid} is not a consumer group."))
            continue
        expire_group(st, g, ctx.node.node_id)
        out.append(
            dg(
                error_code=0,
                error_message=None,
                group_id=gid,
                group_state=g.state,
                group_epoch=g.group_epoch,
                assignment_epoch=g.assignment_epoch,
                assignor_name=cg.preferred_assignor(g),
                members=_described_members(ctx, g),
                authorized_operations=sum(1 << op for op in GROUP_OPS)
                if req.include_authorized_operations
                else AUTHORIZED_OPS_NONE,
            )
        )
    return ConsumerGroupDescribeResponse(version=ctx.version, throttle_time_ms=0, groups=out)
