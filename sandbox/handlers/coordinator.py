"""The group coordinator's rules the group handlers share (classic and KIP-848 groups alike).

Which broker coordinates a group, the operations a group's ACLs can allow, and dropping members
whose session timed out before a group is looked at. The classic protocol's member bookkeeping
(``expire_classic``, ``membership_changed``) is here because both the offset handlers
(``groups``) and the membership handlers (``membership``) expire groups; KIP-848 groups expire
in ``sandbox.consumer_groups``.
"""

from __future__ import annotations

import time
import zlib

from sandbox import consumer_groups as cg
from sandbox.state import ClusterState, Group

GROUP_OPS = {3, 6, 8, 10, 11}  # READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
# Kafka's error codes more than one group handler answers with (groups, membership, consumer).
NOT_COORDINATOR, ILLEGAL_GENERATION, INVALID_GROUP_ID, UNKNOWN_MEMBER_ID = 16, 22, 24, 25
REBALANCE_IN_PROGRESS, GROUP_ID_NOT_FOUND = 27, 69


def coordinator(st: ClusterState, group_id: str, live: list[int] | None = None) -> int:
    """The broker coordinating a group (same hash as FindCoordinator); ``live`` (the live brokers)
    when the caller asks about many groups at once."""
    live = st.live_brokers() if live is None else live
    return live[zlib.crc32(group_id.encode()) % len(live)] if live else -1


def expire_group(st: ClusterState, g: Group, node_id: int) -> None:
    """Drop members whose session (or, for consumer groups, rebalance) timeout passed."""
    if g.type == "consumer":
        cg.expire(g, st, node_id)
    elif g.live:
        expire_classic(g)


def expire_classic(g: Group) -> None:
    """Drop live members whose session timed out; a remaining group rebalances."""
    now = time.monotonic()
    gone = [m for m in g.live.values() if now - m.last_seen > m.session_timeout_ms / 1000.0]
    for m in gone:
        del g.live[m.member_id]
    if gone:
        membership_changed(g)


def membership_changed(g: Group) -> None:
    """A classic group lost or gained a live member: rebalance, or become Empty."""
    if g.live:
        if g.state != "PreparingRebalance":
            g.state = "PreparingRebalance"
            g.rebalance_started = time.monotonic()
    elif not g.members:
        g.state = "Empty"
        g.generation += 1
        g.leader = ""
