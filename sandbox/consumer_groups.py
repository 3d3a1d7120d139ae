"""The KIP-848 consumer group model: epochs, server-side assignment, reconciliation, fencing.

Mirrors Kafka 4.1's new group coordinator:

- ``GroupMetadataManager.consumerGroupHeartbeat``: a member's subscription change (or a new
  group, or a change of the subscribed topics' metadata) bumps the group epoch; a group epoch
  ahead of the assignment epoch computes a new target assignment for every member; the member
  is then reconciled towards its target (``maybeReconcile``).
- ``CurrentAssignmentBuilder``: the member keeps the partitions of its target it already owns;
  the ones it owns outside its target must be revoked first (state ``unrevoked_partitions``, the
  member stays in its epoch); target partitions still owned by another member wait (state
  ``unreleased_partitions``); otherwise the member moves to the target epoch (``stable``).
- ``ConsumerGroup.maybeUpdateGroupState``: Empty / Assigning / Reconciling / Stable.
- ``UniformAssignor`` (the default of ``group.consumer.assignors=uniform,range``) and
  ``RangeAssignor``: the sandbox's own sticky, balanced implementations (the partitions each
  member gets may differ from Kafka's; the balance and stickiness rules are the same).
- Session timeout (``group.consumer.session.timeout.ms``) and rebalance timeout (a member that
  does not revoke within its ``RebalanceTimeoutMs``) fence the member, which bumps the group
  epoch (``consumerGroupFenceMembers``). Timers run on real time and are checked whenever the
  group is touched (a heartbeat, a describe, a list), which is what a client can observe.
"""

from __future__ import annotations

import base64
import re
import time
import uuid
from typing import TYPE_CHECKING

from sandbox.configs import broker_value
from sandbox.state import ClusterState, ConsumerMember, Group

if TYPE_CHECKING:
    from collections.abc import Iterable

ASSIGNORS = ("uniform", "range")  # group.consumer.assignors default; the first is the default
DEFAULT_SESSION_TIMEOUT_MS = 45000
DEFAULT_HEARTBEAT_INTERVAL_MS = 5000

Assignment = dict[uuid.UUID, set[int]]
SYNTHETIC = float("inf")  # last_seen of members that never time out (add_group)


def group_config_ms(st: ClusterState, node_id: int, name: str, default: int) -> int:
    """A group.consumer.* broker setting (static in Kafka; server.properties overrides count)."""
    value = broker_value(st, node_id, name)
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def new_consumer_group(group_id: str, offsets: dict[tuple[str, int], int] | None = None) -> Group:
    """An empty consumer-protocol group (offsets carried over from a converted empty group)."""
    return Group(
        group_id, state="Empty", protocol_type="consumer", protocol="", type="consumer", offsets=offsets or {}
    )


def member_topics(st: ClusterState, m: ConsumerMember) -> set[str]:
    """A member's topics: the names it subscribes to plus the topics its regex matches (Kafka
    resolves regexes in the background, at most every 10 s; the sandbox at every heartbeat,
    with Python's ``re`` full match standing in for RE2/J, internal topics left out)."""
    out = set(m.subscribed_topic_names)
    if m.subscribed_topic_regex:
        try:
            rx = re.compile(m.subscribed_topic_regex)
        except re.error:
            return out
        out.update(name for name, t in st.topics.items() if not t.internal and rx.fullmatch(name))
    return out


def synthetic_consumer_group(
    st: ClusterState,
    group_id: str,
    members: dict[str, list[tuple[str, int]]],
    offsets: dict[tuple[str, int], int],
) -> Group:
    """A consumer group whose members (client id -> partitions) own their partitions at epoch 1
    and never time out (``SandboxCluster.add_group(protocol="consumer")``); their member ids are
    stable per group and client."""
    g = new_consumer_group(group_id, dict(offsets))
    for client, parts in members.items():
        raw = uuid.uuid5(uuid.NAMESPACE_OID, f"{group_id}/{client}").bytes
        mid = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        assigned: Assignment = {}
        for topic, p in parts:
            t = st.topics.get(topic)
            if t is not None:
                assigned.setdefault(t.topic_id, set()).add(p)
        g.consumers[mid] = ConsumerMember(
            mid,
            client,
            "/127.0.0.1",
            300000,
            subscribed_topic_names=sorted({topic for topic, _ in parts}),
            member_epoch=1,
            previous_member_epoch=0,
            assigned=assigned,
            last_seen=SYNTHETIC,
        )
        g.targets[mid] = {t: set(ps) for t, ps in assigned.items()}
    if g.consumers:
        g.group_epoch = g.assignment_epoch = 1
        g.subscribed_metadata = subscription_metadata(st, g)
    update_state(g)
    return g


def subscribed_topics(st: ClusterState, g: Group) -> set[str]:
    """Topics any member subscribes to (ModernGroup.subscribedTopicNames)."""
    out: set[str] = set()
    for m in g.consumers.values():
        out |= member_topics(st, m)
    return out


def subscription_metadata(st: ClusterState, g: Group) -> tuple[tuple[str, uuid.UUID, int], ...]:
    """(name, id, partition count) of the subscribed topics that exist: a change bumps the
    group epoch (Kafka compares a hash of the same facts, ModernGroup.computeMetadataHash)."""
    out = []
    for name in sorted(subscribed_topics(st, g)):
        t = st.topics.get(name)
        if t is not None:
            out.append((name, t.topic_id, len(t.partitions)))
    return tuple(out)


def update_state(g: Group) -> None:
    """ConsumerGroup.maybeUpdateGroupState."""
    if not g.consumers:
        g.state = "Empty"
    elif g.group_epoch > g.assignment_epoch:
        g.state = "Assigning"
    elif any(not reconciled(m, g.assignment_epoch) for m in g.consumers.values()):
        g.state = "Reconciling"
    else:
        g.state = "Stable"


def reconciled(m: ConsumerMember, epoch: int) -> bool:
    """ModernGroupMember.isReconciledTo."""
    return m.state == "stable" and m.member_epoch == epoch


def partition_epoch(g: Group, topic_id: uuid.UUID, partition: int) -> int:
    """ConsumerGroup.currentPartitionEpoch: the epoch of the member holding (or still revoking)
    the partition, -1 when it is free."""
    for m in g.consumers.values():
        if partition in m.assigned.get(topic_id, ()) or partition in m.pending_revocation.get(topic_id, ()):
            return m.member_epoch
    return -1


def _copy(a: Assignment) -> Assignment:
    return {t: set(ps) for t, ps in a.items() if ps}


# ---- assignors -----------------------------------------------------------------------------


def _partitions_of(st: ClusterState, names: Iterable[str]) -> list[tuple[uuid.UUID, int]]:
    out = []
    for name in sorted(set(names)):
        t = st.topics.get(name)
        if t is not None:
            out.extend((t.topic_id, i) for i in range(len(t.partitions)))
    return out


def _uniform(st: ClusterState, g: Group) -> dict[str, Assignment]:
    """Sticky balanced assignment. All members subscribed to the same topics: each gets
    ``total // members`` partitions, ``total % members`` of them one more, keeping what they had
    (members holding more get the extra slots first). Different subscriptions: each partition
    goes to the least-loaded subscriber, its previous owner winning ties and keeping it while
    it is not more than one partition above the least-loaded."""
    members = sorted(g.consumers)
    if not members:
        return {}
    subs = {mid: frozenset(member_topics(st, g.consumers[mid])) for mid in members}
    previous = {mid: g.targets.get(mid, {}) for mid in members}
    result: dict[str, Assignment] = {mid: {} for mid in members}
    if len(set(subs.values())) == 1:
        parts = _partitions_of(st, next(iter(subs.values())))
        if not parts:
            return result
        quota, extra = divmod(len(parts), len(members))
        valid = set(parts)
        kept: dict[str, list[tuple[uuid.UUID, int]]] = {
            mid: sorted((t, p) for t, ps in previous[mid].items() for p in ps if (t, p) in valid)
            for mid in members
        }
        order = sorted(members, key=lambda mid: (-len(kept[mid]), mid))
        quotas = {mid: quota + (1 if i < extra else 0) for i, mid in enumerate(order)}
        taken: set[tuple[uuid.UUID, int]] = set()
        for mid in members:
            for tp in kept[mid][: quotas[mid]]:
                result[mid].setdefault(tp[0], set()).add(tp[1])
                taken.add(tp)
        free = [tp for tp in parts if tp not in taken]
        for mid in members:
            have = sum(len(ps) for ps in result[mid].values())
            while have < quotas[mid] and free:
                t, p = free.pop(0)
                result[mid].setdefault(t, set()).add(p)
                have += 1
        return result
    load = dict.fromkeys(members, 0)
    owner = {(t, p): mid for mid in members for t, ps in previous[mid].items() for p in ps}
    names = set().union(*subs.values())
    for name in sorted(names):
        t = st.topics.get(name)
        if t is None:
            continue
        eligible = [mid for mid in members if name in subs[mid]]
        for p in range(len(t.partitions)):
            low = min(load[mid] for mid in eligible)
            prev = owner.get((t.topic_id, p))
            if prev in eligible and load[prev] <= low:
                pick = prev
            else:
                pick = min(eligible, key=lambda mid: (load[mid], mid))
            result[pick].setdefault(t.topic_id, set()).add(p)
            load[pick] += 1
    return result


def _range(st: ClusterState, g: Group) -> dict[str, Assignment]:
    """Per topic, its subscribers (in RangeAssignor's order) get contiguous ranges of partitions,
    the first ``partitions % subscribers`` one more (RangeAssignor's co-partitioning)."""
    # static members first (by instance id), then the others by member id, as RangeAssignor
    members = sorted(
        g.consumers,
        key=lambda mid: (g.consumers[mid].instance_id is None, g.consumers[mid].instance_id or mid),
    )
    result: dict[str, Assignment] = {mid: {} for mid in members}
    topics = {mid: member_topics(st, g.consumers[mid]) for mid in members}
    for name in sorted(subscribed_topics(st, g)):
        t = st.topics.get(name)
        if t is None:
            continue
        subs = [mid for mid in members if name in topics[mid]]
        quota, extra = divmod(len(t.partitions), len(subs))
        start = 0
        for i, mid in enumerate(subs):
            n = quota + (1 if i < extra else 0)
            if n:
                result[mid][t.topic_id] = set(range(start, start + n))
            start += n
    return result


def preferred_assignor(g: Group) -> str:
    """ConsumerGroup.preferredServerAssignor: the assignor most members ask for, else the
    default (the first of group.consumer.assignors)."""
    counts: dict[str, int] = {}
    for m in g.consumers.values():
        if m.server_assignor:
            counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
    if not counts:
        return ASSIGNORS[0]
    return max(sorted(counts), key=lambda name: counts[name])


def compute_target(st: ClusterState, g: Group) -> None:
    """A new target assignment for every member at the group epoch (updateTargetAssignment)."""
    assignor = _range if preferred_assignor(g) == "range" else _uniform
    g.targets = {mid: _copy(a) for mid, a in assignor(st, g).items()}
    g.assignment_epoch = g.group_epoch


# ---- reconciliation (CurrentAssignmentBuilder) ---------------------------------------------


Owned = list[tuple[uuid.UUID, list[int]]] | None


def _owns_any(owned: Owned, revoking: Assignment) -> bool:
    """ownsRevokedPartitions: a member that did not report what it owns still owns them."""
    if owned is None:
        return True
    return any(p in revoking.get(t, ()) for t, ps in owned for p in ps)


def _next_assignment(g: Group, m: ConsumerMember, epoch: int, owned: Owned) -> None:
    target = g.targets.get(m.member_id, {})
    assigned: Assignment = {}
    revoking: Assignment = {}
    pending: Assignment = {}
    unreleased = False
    for tid in set(target) | set(m.assigned):
        want = target.get(tid, set())
        have = m.assigned.get(tid, set())
        keep = have & want
        drop = have - keep
        add = {p for p in want - keep if partition_epoch(g, tid, p) == -1}
        unreleased = unreleased or len(add) < len(want - keep)
        if keep:
            assigned[tid] = keep
        if drop:
            revoking[tid] = drop
        if add:
            pending[tid] = add
    m.previous_member_epoch = m.member_epoch
    if revoking and _owns_any(owned, revoking):
        m.state, m.member_epoch = "unrevoked_partitions", epoch
        m.assigned, m.pending_revocation = assigned, revoking
        return
    for tid, ps in pending.items():
        assigned.setdefault(tid, set()).update(ps)
    m.state = "unreleased_partitions" if unreleased else "stable"
    m.member_epoch = g.assignment_epoch
    m.assigned, m.pending_revocation = assigned, {}


def reconcile(g: Group, m: ConsumerMember, owned: Owned, rebalance_deadline: float) -> None:
    """Move a member towards its target assignment (GroupMetadataManager.maybeReconcile); a
    member left revoking gets a rebalance timeout (``rebalance_deadline``)."""
    if reconciled(m, g.assignment_epoch):
        return
    before = (m.state, m.member_epoch)
    if m.state == "stable":
        if m.member_epoch != g.assignment_epoch:
            _next_assignment(g, m, m.member_epoch, owned)
    elif m.state == "unrevoked_partitions":
        if not _owns_any(owned, m.pending_revocation):
            _next_assignment(g, m, m.member_epoch + 1, owned)
    else:
        _next_assignment(g, m, m.member_epoch, owned)
    if (m.state, m.member_epoch) != before:
        m.revoke_deadline = rebalance_deadline if m.state == "unrevoked_partitions" else None


# ---- membership changes --------------------------------------------------------------------


def fence(st: ClusterState, g: Group, members: Iterable[str]) -> None:
    """Remove members (leave, session or rebalance timeout) and bump the group epoch, recording
    the subscribed topics' metadata without them (consumerGroupFenceMembers); the new target
    assignment is computed on the next heartbeat."""
    gone = [mid for mid in members if mid in g.consumers]
    if not gone:
        return
    for mid in gone:
        del g.consumers[mid]
        g.targets.pop(mid, None)
    g.group_epoch += 1
    g.subscribed_metadata = subscription_metadata(st, g)
    update_state(g)


def expire(g: Group, st: ClusterState, node_id: int, now: float | None = None) -> None:
    """Fence members whose session timed out, or that did not revoke within their rebalance
    timeout (scheduleConsumerGroupSessionTimeout / scheduleConsumerGroupRebalanceTimeout)."""
    if g.type != "consumer" or not g.consumers:
        return
    if all(m.last_seen == SYNTHETIC and m.revoke_deadline is None for m in g.consumers.values()):
        return  # add_group's members never time out (and a list of 10k groups stays cheap)
    now = time.monotonic() if now is None else now
    session_s = (
        group_config_ms(st, node_id, "group.consumer.session.timeout.ms", DEFAULT_SESSION_TIMEOUT_MS) / 1000.0
    )
    # a static member that left temporarily (epoch -2) keeps its place for a session timeout too
    gone = [
        m.member_id
        for m in g.consumers.values()
        if now - m.last_seen > session_s or (m.revoke_deadline is not None and now > m.revoke_deadline)
    ]
    fence(st, g, gone)


def is_subscribed(st: ClusterState, g: Group, topic: str) -> bool:
    """ModernGroup.isSubscribedToTopic."""
    return topic in subscribed_topics(st, g)


def assignment_list(a: Assignment) -> list[tuple[uuid.UUID, list[int]]]:
    """An assignment as (topic id, sorted partitions), topics in a stable order."""
    return [(t, sorted(ps)) for t, ps in sorted(a.items(), key=lambda kv: str(kv[0])) if ps]
