"""Replication model on the virtual clock: log growth, throttled follower catch-up, ISR,
reassignment completion, broker and controller failures.

Throttling follows Kafka's replication quotas: a (partition, follower) copy is leader-throttled
when ``partition:leader`` (or ``*``) is in the topic's ``leader.replication.throttled.replicas``
and follower-throttled when ``partition:follower`` (or ``*``) is in
``follower.replication.throttled.replicas``; throttled copies share the leader broker's
``leader.replication.throttled.rate`` and the follower broker's
``follower.replication.throttled.rate``. Every copy also shares the follower broker's bandwidth.
"""

from __future__ import annotations

import math
from collections import defaultdict

from sandbox import logdirs
from sandbox.state import AVG_RECORD_BYTES, ClusterState, Partition, Topic

UNLIMITED = float(2**63 - 1)
QUORUM_NOOP_PER_S = 2  # KRaft appends a no-op record every 500 ms


def throttled(spec: str | None, partition: int, broker: int) -> bool:
    """Whether ``partition:broker`` is covered by a ``*.replication.throttled.replicas`` value."""
    parsed = parse_throttled(spec)
    return parsed is True or (partition, broker) in parsed  # type: ignore[operator]


def broker_rate(state: ClusterState, broker: int, name: str) -> float:
    """A dynamic broker rate config (per broker, then cluster default), unlimited if unset."""
    for key in (str(broker), ""):
        val = state.broker_configs.get(key, {}).get(name)
        if val is not None:
            try:
                return float(val)
            except ValueError:
                return UNLIMITED
    return UNLIMITED


def tick(state: ClusterState, dt: float) -> None:
    """Advance the virtual clock by ``dt`` seconds."""
    if dt <= 0:
        return
    state.now_ms += dt * 1000.0
    _grow_logs(state, dt)
    _copy_followers(state, dt)
    logdirs.tick(state, dt)
    _quorum(state, dt)
    _auto_rebalance(state)
    _consume(state)


def append(p: Partition, nbytes: float, records: int) -> None:
    """Append to a partition's leader; in-sync live followers follow immediately."""
    if p.leader < 0:
        return
    p.end_offset += records
    size = p.sizes.get(p.leader, 0.0) + nbytes
    for b in p.isr:
        if b in p.sizes:
            p.sizes[b] = size


def _grow_logs(state: ClusterState, dt: float) -> None:
    for t in state.topics.values():
        if t.synthetic_bytes_per_s <= 0 or not t.partitions:
            continue
        per = t.synthetic_bytes_per_s * dt / len(t.partitions)
        recs = max(1, int(per / AVG_RECORD_BYTES))
        cap = _retained_bytes(state, t)
        for p in t.partitions:
            append(p, per, recs)
            if cap is not None:
                _apply_retention(p, *cap)


def _retained_bytes(state: ClusterState, t: Topic) -> tuple[float, float] | None:
    """(bytes a partition keeps, segment size) under delete retention; None to keep everything.

    Synthetic writes are steady, so retention.ms keeps rate x retention.ms bytes.
    """
    from sandbox.configs import topic_value

    node = t.partitions[0].leader if t.partitions[0].leader >= 0 else next(iter(state.brokers))
    policy = topic_value(state, t, "cleanup.policy", node)[0] or "delete"
    if "delete" not in policy:
        return None
    caps = []
    rbytes = int(topic_value(state, t, "retention.bytes", node)[0] or -1)
    if rbytes >= 0:
        caps.append(float(rbytes))
    rms = int(topic_value(state, t, "retention.ms", node)[0] or -1)
    if rms >= 0:
        caps.append(t.synthetic_bytes_per_s / len(t.partitions) * rms / 1000.0)
    segment = float(topic_value(state, t, "segment.bytes", node)[0] or 1 << 30)
    return (min(caps), segment) if caps else None


def _apply_retention(p: Partition, keep: float, segment: float) -> None:
    """Delete whole old segments beyond what retention keeps (never the active segment)."""
    size = p.leader_size()
    excess = size - keep - segment
    if excess <= 0:
        return
    removed = (excess // segment + 1) * segment
    records = p.end_offset - p.log_start_offset
    p.log_start_offset += int(records * removed / size) if size > 0 else 0
    for b in p.sizes:
        p.sizes[b] = max(0.0, p.sizes[b] - removed)
    while p.batches and p.batches[0].last_offset < p.log_start_offset:
        p.batches.popleft()


def _copies(state: ClusterState) -> list[tuple[Topic, Partition, int]]:
    """(topic, partition, follower) for every live replica that is out of the ISR."""
    out = []
    for key in list(state.catching_up):
        t = state.topics.get(key[0])
        if t is None or key[1] >= len(t.partitions):
            state.catching_up.discard(key)
            continue
        p = t.partitions[key[1]]
        lagging = [b for b in p.replicas if b not in p.isr and state.brokers[b].up]
        if not lagging and not p.adding and not p.removing:
            state.catching_up.discard(key)
        for b in lagging:
            if p.leader >= 0:
                out.append((t, p, b))
        if not lagging and (p.adding or p.removing):
            maybe_complete_reassignment(state, p)
    return out


def parse_throttled(spec: str | None) -> bool | frozenset[tuple[int, int]]:
    """A ``*.replication.throttled.replicas`` value: True for ``*``, else its (partition, broker) set."""
    if not spec or not spec.strip():
        return frozenset()
    if spec.strip() == "*":
        return True
    out = set()
    for item in spec.split(","):
        part, _, broker = item.strip().partition(":")
        if part.isdigit() and broker.isdigit():
            out.add((int(part), int(broker)))
    return frozenset(out)


def _copy_followers(state: ClusterState, dt: float) -> None:
    copies = _copies(state)
    if not copies:
        return
    specs: dict[str, tuple[bool | frozenset[tuple[int, int]], bool | frozenset[tuple[int, int]]]] = {}
    lt_count: dict[int, int] = defaultdict(int)
    ft_count: dict[int, int] = defaultdict(int)
    flags = []
    for t, p, b in copies:
        spec = specs.get(t.name)
        if spec is None:
            spec = specs[t.name] = (
                parse_throttled(t.configs.get("leader.replication.throttled.replicas")),
                parse_throttled(t.configs.get("follower.replication.throttled.replicas")),
            )
        lt = spec[0] is True or (p.index, p.leader) in spec[0]  # type: ignore[operator]
        ft = spec[1] is True or (p.index, b) in spec[1]  # type: ignore[operator]
        flags.append((lt, ft))
        lt_count[p.leader] += int(lt)
        ft_count[b] += int(ft)
    leader_rate = {
        n: broker_rate(state, n, "leader.replication.throttled.rate") for n in lt_count if lt_count[n]
    }
    follower_rate = {
        n: broker_rate(state, n, "follower.replication.throttled.rate") for n in ft_count if ft_count[n]
    }
    # Each copy's throttle cap this tick, then each follower's bandwidth shared max-min fair among
    # its copies: as Kafka's fetchers ask every lagging partition in one request and a partition with
    # fewer bytes to copy than its share answers with what it has, the rest goes to the others (an
    # empty or level replica takes none).
    by_follower: dict[int, list[tuple[float, float, Partition, float]]] = defaultdict(list)
    for (_t, p, b), (lt, ft) in zip(copies, flags, strict=True):
        cap = math.inf
        if lt:
            cap = min(cap, leader_rate[p.leader] * dt / lt_count[p.leader])
        if ft:
            cap = min(cap, follower_rate[b] * dt / ft_count[b])
        before = p.sizes.get(b, 0.0)
        need = max(0.0, p.sizes.get(p.leader, 0.0) - before)
        by_follower[b].append((min(need, cap), cap, p, before))
    for b, wanted in by_follower.items():
        left = state.bandwidth_bytes_per_s * dt
        wanted.sort(key=lambda w: w[0])
        for i, (want, cap, p, before) in enumerate(wanted):
            offered = min(cap, left / (len(wanted) - i))  # its fair share of what is left
            got = min(want, offered)
            left -= got
            lead = p.sizes.get(p.leader, 0.0)
            have = min(before + got, lead)
            p.sizes[b] = have
            if have >= lead:
                # when in this tick it got level: the ISR delay runs from there, whatever the tick length
                used = dt * (lead - before) / offered if offered > 0 else 0.0
                _join_isr_when_due(state, p, b, state.now_ms - (dt - used) * 1000.0)


def _join_isr_when_due(state: ClusterState, p: Partition, b: int, level_ms: float) -> None:
    """A caught-up follower joins the ISR ``isr_join_delay_s`` after it first caught up (as on Kafka,
    where the leader asks the controller with AlterPartition): until then it is level but not in sync."""
    if p.caught_up_ms is None:
        p.caught_up_ms = {}
    since = p.caught_up_ms.setdefault(b, level_ms)
    if state.now_ms - since < state.isr_join_delay_s * 1000.0:
        return
    del p.caught_up_ms[b]
    p.isr.append(b)
    p.partition_epoch += 1
    state.touch(p.topic)
    maybe_complete_reassignment(state, p)


def maybe_complete_reassignment(state: ClusterState, p: Partition) -> None:
    """Finish a reassignment once every target replica is in the ISR (KIP-455)."""
    if not p.adding and not p.removing:
        return
    target = [b for b in p.replicas if b not in p.removing]
    if not all(b in p.isr for b in target):
        return
    state.set_replicas(p, target)
    p.isr = [b for b in p.isr if b in target]
    for b in list(p.sizes):
        if b not in target:
            del p.sizes[b]
    p.adding, p.removing = [], []
    if p.leader not in target:
        live = [b for b in target if b in p.isr and state.brokers[b].up]
        p.leader = live[0] if live else -1
        p.leader_epoch += 1
    p.partition_epoch += 1
    state.touch(p.topic)


def elect(state: ClusterState, p: Partition) -> None:
    """Pick a new leader among live ISR members (preferred order), or none."""
    live = [b for b in p.replicas if b in p.isr and state.brokers[b].up]
    new = live[0] if live else -1
    if new != p.leader:
        p.leader = new
        p.leader_epoch += 1


def broker_down(state: ClusterState, broker: int) -> None:
    """A broker stopped: shrink ISRs (never below one member) and move leadership."""
    state.brokers[broker].up = False
    for p in state.replicas_on(broker):
        if broker in p.isr and len(p.isr) > 1:
            p.isr.remove(broker)
            p.partition_epoch += 1
        if p.leader == broker:
            elect(state, p)
        state.touch(p.topic)  # offline replicas changed even where nothing else did
    state.touch("")  # the broker list changed (and bump the generation when it hosts nothing)


def broker_up(state: ClusterState, broker: int) -> None:
    """A broker restarted: leaderless partitions it is in sync for get it back; others catch up."""
    state.brokers[broker].up = True
    for p in state.replicas_on(broker):
        if p.leader < 0 and broker in p.isr:
            p.leader = broker
            p.leader_epoch += 1
        if broker not in p.isr:
            state.catching_up.add((p.topic, p.index))
        state.touch(p.topic)
    state.touch("")


def controller_down(state: ClusterState, controller: int) -> None:
    """A controller stopped: the next live voter becomes active with a new epoch."""
    if controller in state.controllers:
        state.controllers[controller].up = False
    if state.active_controller == controller or state.active_controller < 0:
        live = sorted(c for c, n in state.controllers.items() if n.up)
        state.active_controller = live[0] if live else -1
        state.quorum_epoch += 1
    state.record()


def _quorum(state: ClusterState, dt: float) -> None:
    """Grow the metadata log; live voters and broker observers fetch and stay caught up."""
    state.metadata_offset += max(1, int(dt * QUORUM_NOOP_PER_S))
    now = int(state.now_ms)
    if state.active_controller < 0:
        return
    for n in [*state.controllers.values(), *state.brokers.values()]:
        if n.up:
            n.log_end_offset = state.metadata_offset
            n.last_fetch_ms = now
            n.last_caught_up_ms = now


def _setting(state: ClusterState, name: str, default: str) -> str:
    from sandbox.configs import broker_value

    live = state.live_brokers()
    return (broker_value(state, live[0], name) if live else None) or default


def _auto_rebalance(state: ClusterState) -> None:
    """Kafka's auto leader rebalance: every leader.imbalance.check.interval.seconds, brokers whose
    share of partitions not led by them (of those they are preferred for) exceeds
    leader.imbalance.per.broker.percentage get their preferred leadership back."""
    if state.next_rebalance_ms < 0:
        interval = float(_setting(state, "leader.imbalance.check.interval.seconds", "300"))
        state.next_rebalance_ms = state.now_ms + interval * 1000
        return
    if state.now_ms < state.next_rebalance_ms:
        return
    state.next_rebalance_ms = -1
    if _setting(state, "auto.leader.rebalance.enable", "true") != "true":
        return
    limit = float(_setting(state, "leader.imbalance.per.broker.percentage", "10"))
    by_pref: dict[int, list[Partition]] = defaultdict(list)
    for t in state.topics.values():
        for p in t.partitions:
            if not p.adding and not p.removing:
                by_pref[p.preferred].append(p)
    for broker, parts in by_pref.items():
        if not state.brokers[broker].up:
            continue
        off = [p for p in parts if p.leader != broker]
        if parts and 100.0 * len(off) / len(parts) > limit:
            for p in off:
                if broker in p.isr:
                    p.leader = broker
                    p.leader_epoch += 1
                    p.partition_epoch += 1
                    state.touch(p.topic)


def _consume(state: ClusterState) -> None:
    """Synthetic groups commit offsets following what was produced since the last tick."""
    for g in state.groups.values():
        if g.consume_ratio <= 0 or not (g.members or g.consumers):
            continue
        for key, offset in list(g.offsets.items()):
            p = state.partition(*key)
            if p is None:
                continue
            produced = p.end_offset - g.seen_end.get(key, p.end_offset)
            g.seen_end[key] = p.end_offset
            g.offsets[key] = min(p.end_offset, offset + round(produced * g.consume_ratio))
