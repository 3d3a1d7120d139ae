"""The classic consumer-group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup.

Enough for subscribe()-based consumers (console consumers, tests): a rebalance completes once
every live member has rejoined (or its rebalance timeout, capped at MAX_REBALANCE_S, passed);
the leader's SyncGroup assignments are handed to the followers; members whose session timeout
passes without a heartbeat are removed (real time, not the virtual clock).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from kafka.protocol.consumer import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)

from sandbox.apis import Deferred, RequestContext, api
from sandbox.handlers.coordinator import (
    ILLEGAL_GENERATION,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    coordinator,
    expire_group,
    membership_changed,
)
from sandbox.state import ClusterState, Group, LiveMember

POLL_S = 0.05
MAX_REBALANCE_S = 3.0
MEMBER_ID_REQUIRED, INCONSISTENT_PROTOCOL = 79, 23


def _group(st: ClusterState, gid: str, ctx: RequestContext) -> tuple[int, Group | None]:
    if coordinator(st, gid) != ctx.node.node_id:
        return NOT_COORDINATOR, None
    g = st.groups.get(gid)
    if g is not None:
        expire_group(st, g, ctx.node.node_id)
    return 0, g


def _complete(g: Group) -> None:
    """End the rebalance: members that did not rejoin leave, a new generation starts."""
    for mid in [m.member_id for m in g.live.values() if not m.joined]:
        del g.live[mid]
    g.generation += 1
    members = list(g.live.values())
    common = [p for p in members[0].protocols if all(p in m.protocols for m in members)]
    g.protocol = common[0] if common else next(iter(members[0].protocols), "")
    g.leader = g.leader if g.leader in g.live else members[0].member_id
    for m in members:
        m.joined = False
        m.generation = g.generation
        m.assignment = b""
    g.state = "CompletingRebalance"


def _join_response(ctx: RequestContext, g: Group, m: LiveMember, code: int = 0) -> Any:
    jr = JoinGroupResponse
    leader = m.member_id == g.leader
    members = (
        [
            jr.JoinGroupResponseMember(
                member_id=x.member_id, group_instance_id=None, metadata=x.protocols.get(g.protocol, b"")
            )
            for x in g.live.values()
        ]
        if leader
        else []
    )
    return jr(
        version=ctx.version,
        throttle_time_ms=0,
        error_code=code,
        generation_id=g.generation,
        protocol_type=g.protocol_type,
        protocol_name=g.protocol,
        leader=g.leader,
        skip_assignment=False,
        member_id=m.member_id,
        members=members,
    )


def _join_error(ctx: RequestContext, code: int, member_id: str = "") -> Any:
    return JoinGroupResponse(
        version=ctx.version,
        throttle_time_ms=0,
        error_code=code,
        generation_id=-1,
        protocol_type=None,
        protocol_name=None if ctx.version >= 7 else "",
        leader="",
        skip_assignment=False,
        member_id=member_id,
        members=[],
    )


@api(JoinGroupRequest, 0, 9)
def join_group(ctx: RequestContext, req: Any) -> Any:
    """Join (or rejoin) a group; answered when the rebalance completes."""
    st = ctx.state
    code, g = _group(st, req.group_id, ctx)
    if code:
        return _join_error(ctx, code)
    if g is not None and g.type == "consumer":
        if g.consumers:  # Kafka lets a classic member join a consumer group; the sandbox does not
            return _join_error(ctx, INCONSISTENT_PROTOCOL)
        # an empty consumer group becomes a classic group, keeping its offsets
        # (GroupMetadataManager.classicGroupJoinToClassicGroup / maybeDeleteEmptyConsumerGroup)
        g = st.groups[req.group_id] = Group(
            req.group_id, state="Empty", protocol_type=req.protocol_type, offsets=g.offsets
        )
    if g is None:
        g = st.groups[req.group_id] = Group(req.group_id, state="Empty", protocol_type=req.protocol_type)
    if g.members:  # synthetic members stand for another application's consumers
        return _join_error(ctx, INCONSISTENT_PROTOCOL)
    m = g.live.get(req.member_id)
    if m is None:
        if req.member_id:
            return _join_error(ctx, UNKNOWN_MEMBER_ID)
        mid = f"{ctx.client_id or 'client'}-{uuid.uuid4()}"
        m = g.live[mid] = LiveMember(
            mid,
            ctx.client_id or "",
            f"/{ctx.client_host}",
            req.session_timeout_ms,
            req.rebalance_timeout_ms if ctx.version >= 1 else req.session_timeout_ms,
        )
        m.last_seen = time.monotonic()
        if ctx.version >= 4:
            return _join_error(ctx, MEMBER_ID_REQUIRED, mid)
    if not ctx.retried:
        m.protocols = {p.name: bytes(p.metadata) for p in req.protocols}
        m.joined, m.last_seen = True, time.monotonic()
        g.protocol_type = req.protocol_type
        if g.state != "PreparingRebalance":
            g.state, g.rebalance_started = "PreparingRebalance", time.monotonic()
    if m.generation == g.generation and g.state != "PreparingRebalance":
        return _join_response(ctx, g, m)
    m.last_seen = time.monotonic()
    limit = min(MAX_REBALANCE_S, max(x.rebalance_timeout_ms for x in g.live.values()) / 1000.0)
    if all(x.joined for x in g.live.values()) or time.monotonic() - g.rebalance_started > limit:
        _complete(g)
        return _join_response(ctx, g, m)
    return Deferred(POLL_S)


def _member_check(g: Group | None, member_id: str, generation: int) -> int:
    if g is None or member_id not in g.live:
        return UNKNOWN_MEMBER_ID
    if g.state == "PreparingRebalance":
        return REBALANCE_IN_PROGRESS
    if generation != g.generation:
        return ILLEGAL_GENERATION
    return 0


@api(SyncGroupRequest, 0, 5)
def sync_group(ctx: RequestContext, req: Any) -> Any:
    """The leader hands out assignments; followers wait for theirs."""
    code, g = _group(ctx.state, req.group_id, ctx)
    code = code or _member_check(g, req.member_id, req.generation_id)

    def answer(c: int, assignment: bytes = b"") -> Any:
        return SyncGroupResponse(
            version=ctx.version,
            throttle_time_ms=0,
            error_code=c,
            protocol_type=g.protocol_type if g and not c else None,
            protocol_name=g.protocol if g and not c else None,
            assignment=assignment,
        )

    if code:
        return answer(code)
    assert g is not None
    m = g.live[req.member_id]
    m.last_seen = time.monotonic()
    if req.member_id == g.leader and g.state == "CompletingRebalance":
        for a in req.assignments:
            if a.member_id in g.live:
                g.live[a.member_id].assignment = bytes(a.assignment)
        g.state = "Stable"
    if g.state == "Stable":
        return answer(0, m.assignment)
    if time.monotonic() - ctx.started > MAX_REBALANCE_S:
        return answer(REBALANCE_IN_PROGRESS)
    return Deferred(POLL_S)


@api(HeartbeatRequest, 0, 4)
def heartbeat(ctx: RequestContext, req: Any) -> Any:
    """Keep a member alive; tells it to rejoin when a rebalance is under way."""
    code, g = _group(ctx.state, req.group_id, ctx)
    code = code or _member_check(g, req.member_id, req.generation_id)
    if code in (0, REBALANCE_IN_PROGRESS) and g is not None:
        g.live[req.member_id].last_seen = time.monotonic()
    return HeartbeatResponse(version=ctx.version, throttle_time_ms=0, error_code=code)


@api(LeaveGroupRequest, 0, 5)
def leave_group(ctx: RequestContext, req: Any) -> Any:
    """Members leave; the others rebalance (or the group becomes Empty)."""
    code, g = _group(ctx.state, req.group_id, ctx)
    ids = [m.member_id for m in req.members] if ctx.version >= 3 else [req.member_id]
    results = []
    for mid in ids:
        mcode = code or (0 if g is not None and mid in g.live else UNKNOWN_MEMBER_ID)
        if mcode == 0 and g is not None:
            del g.live[mid]
        results.append(
            LeaveGroupResponse.MemberResponse(member_id=mid, group_instance_id=None, error_code=mcode)
        )
    if g is not None and not code:
        membership_changed(g)
    top = code or (results[0].error_code if ctx.version < 3 and results else 0)
    return LeaveGroupResponse(version=ctx.version, throttle_time_ms=0, error_code=top, members=results)
