"""Share groups (KIP-932) as Kafka 4.1's group coordinator keeps them: members that join and leave
with ShareGroupHeartbeat, a group epoch bumped on each change, the simple assignor's assignment, and
per-partition share-partition start offsets (SPSO).

Kept beside the cluster state (one ``ShareGroups`` per ``ClusterState``, found with ``of(st)``), not in
it: share groups are not saved by ``persist.py`` (a restarted sandbox has none). The sandbox serves no
ShareFetch: a partition's share state is initialised at its log end (``share.auto.offset.reset``'s
default, latest) when it is first assigned, and its start offset only moves by DeleteShareGroupOffsets
(back to uninitialised, -1). The group's state reads as Kafka's: Empty without members, else Stable.
Members whose session (``group.share.session.timeout.ms``, 45 s) passed without a heartbeat leave.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field

from sandbox.state import ClusterState

SESSION_TIMEOUT_S = 45.0
HEARTBEAT_INTERVAL_MS = 5000
_STORES: weakref.WeakKeyDictionary[ClusterState, ShareGroups] = weakref.WeakKeyDictionary()


@dataclass
class ShareMember:
    member_id: str
    client_id: str
    client_host: str
    rack_id: str | None
    subscribed: list[str]
    epoch: int = 0
    last_seen: float = field(default_factory=time.monotonic)
    assignment: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class ShareGroup:
    group_id: str
    members: dict[str, ShareMember] = field(default_factory=dict)
    group_epoch: int = 0
    assignment_epoch: int = 0
    start: dict[tuple[str, int], int] = field(default_factory=dict)  # initialised partitions' SPSO

    @property
    def state(self) -> str:
        return "Stable" if self.members else "Empty"


class ShareGroups:
    """A cluster's share groups by id."""

    def __init__(self) -> None:
        self.groups: dict[str, ShareGroup] = {}


def of(st: ClusterState) -> ShareGroups:
    store = _STORES.get(st)
    if store is None:
        store = _STORES[st] = ShareGroups()
    return store


def enabled(st: ClusterState) -> bool:
    """Kafka 4.1 serves share groups only while the finalized ``share.version`` is at least 1."""
    return st.features.get("share.version", 0) >= 1


def expire(st: ClusterState, g: ShareGroup) -> None:
    now = time.monotonic()
    gone = [m for m in g.members.values() if now - m.last_seen > SESSION_TIMEOUT_S]
    for m in gone:
        del g.members[m.member_id]
    if gone:
        changed(st, g)


def changed(st: ClusterState, g: ShareGroup) -> None:
    """A member joined, left or changed its subscription: a new group epoch and a new assignment
    (the simple assignor: each subscribed partition to one member in turn, every member getting one
    when there are fewer partitions than members), new partitions' share state initialised."""
    g.group_epoch += 1
    members = sorted(g.members.values(), key=lambda m: m.member_id)
    for m in members:
        m.assignment = {}
    topics = sorted({t for m in members for t in m.subscribed if t in st.topics})
    for topic in topics:
        subs = [m for m in members if topic in m.subscribed]
        count = len(st.topics[topic].partitions)
        for p in range(max(count, len(subs)) if count else 0):
            m = subs[p % len(subs)]
            part = p % count
            if part not in m.assignment.setdefault(topic, []):
                m.assignment[topic].append(part)
            key = (topic, part)
            if key not in g.start:
                g.start[key] = st.topics[topic].partitions[part].end_offset
    for m in members:
        m.epoch = g.group_epoch
    g.assignment_epoch = g.group_epoch


def join_or_beat(
    st: ClusterState,
    group_id: str,
    member_id: str,
    epoch: int,
    client_id: str,
    host: str,
    rack_id: str | None,
    subscribed: list[str] | None,
) -> ShareMember | None:
    """A heartbeat: epoch 0 joins (a new member), -1 leaves (None), else refreshes the session; a new
    subscription list reassigns."""
    g = of(st).groups.setdefault(group_id, ShareGroup(group_id))
    expire(st, g)
    if epoch == -1:
        if g.members.pop(member_id, None) is not None:
            changed(st, g)
        return None
    m = g.members.get(member_id)
    if m is None:
        m = g.members[member_id] = ShareMember(member_id, client_id, host, rack_id, list(subscribed or []))
        changed(st, g)
        return m
    m.last_seen = time.monotonic()
    if subscribed is not None and sorted(subscribed) != sorted(m.subscribed):
        m.subscribed = list(subscribed)
        changed(st, g)
    return m
