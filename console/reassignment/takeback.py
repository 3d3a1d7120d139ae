"""A paced move gives its throttles back as its partitions finish, not all at the end.

Once a partition has settled, its ``partition:broker`` entries leave its topic's
``leader.replication.throttled.replicas`` / ``follower.replication.throttled.replicas``: only the
entries the ledger says the console added (``ThrottleEntry.added``), never one that was there
before. A broker's two rates go back (restored exactly, as at the end) once no partition in flight
or queued involves that broker. What is still owed stays in the ledger; the end of the move (its
"remove throttles" step) takes back the rest as before.
"""

from __future__ import annotations

import logging

from django.db import transaction

from console import access
from console.audit import store as audit
from console.clusters.actions import gateway_for
from console.kafka import ConfigChange, ConfigResource, KafkaOperationError
from console.models.reassignment import OPEN_PARTITION_STATES, EntryState, Reassignment, ThrottleEntry
from console.reassignment import audit_names, planner, throttles
from console.reassignment import pacing as pacing_core
from console.reassignment.store import partition_rows

log = logging.getLogger(__name__)

REASON = "partitions finished"
BROKER_REASON = "no partition in flight or queued involves the broker"

# (reassignment id, its operation's creation time) -> open rows at the last give-back, this process:
# the open rows only ever shrink, so an unchanged count means nothing settled since.
_SEEN: dict[tuple[int, object], int] = {}


def give_back_settled(r: Reassignment) -> dict[str, dict]:
    """Take back the throttles only settled partitions needed (one DescribeConfigs and one
    IncrementalAlterConfigs when something settled since the last cycle; nothing otherwise)."""
    key = (r.pk, r.operation.created_at)
    open_count = r.partitions.filter(state__in=OPEN_PARTITION_STATES).count()
    if _SEEN.get(key) == open_count:
        return {}
    entries = list(r.throttles.filter(state__in=throttles.ACTIVE))
    if not entries:
        _SEEN[key] = open_count
        return {}
    rows = partition_rows(r, OPEN_PARTITION_STATES)
    open_moves = planner.plan_moves(
        {(x.topic, x.partition): tuple(x.original) for x in rows},
        {(x.topic, x.partition): tuple(x.target) for x in rows},
    )
    wanted = pacing_core.wanted_entries(open_moves)
    give_back: list[tuple[ThrottleEntry, list[str]]] = []
    for e in entries:
        if e.config in throttles.REPLICA_CONFIGS:
            side = "leader" if e.config == throttles.LEADER_REPLICAS else "follower"
            back = pacing_core.entries_to_give_back(e.added, wanted.get((e.resource_name, side), set()))
            if back:
                give_back.append((e, back))
    released = pacing_core.brokers_to_release(
        {int(e.resource_name) for e in entries if e.config in throttles.RATE_CONFIGS}, open_moves
    )
    outcomes = _replicas(r, give_back) if give_back else {}
    rates = [e for e in entries if e.config in throttles.RATE_CONFIGS and int(e.resource_name) in released]
    if rates:
        outcomes.update(throttles.remove_throttles(r, reason=BROKER_REASON, only=rates))
    if all(v.get("ok") for v in outcomes.values()):
        _SEEN[key] = open_count  # else the next cycle tries again
    return outcomes


def _replicas(r: Reassignment, give_back: list[tuple[ThrottleEntry, list[str]]]) -> dict[str, dict]:
    gw = gateway_for(r.cluster)
    unreadable: dict = {}
    current = throttles.current_values(
        gw,
        [ConfigResource(e.resource_type, e.resource_name) for e, _ in give_back],
        throttles.REPLICA_CONFIGS,
        strict=False,
        errors=unreadable,
    )
    changes: dict[ConfigResource, list[ConfigChange]] = {}
    planned: list[tuple[ThrottleEntry, list[str], str | None]] = []
    for e, back in give_back:
        res = ConfigResource(e.resource_type, e.resource_name)
        if (res, e.config) not in current:
            continue  # unreadable now (or the topic is gone): the end of the move settles it
        now = current[(res, e.config)]
        new = planner.unmerge_throttle(now, back)
        if new != now:
            change = ConfigChange(e.config, "DELETE") if new is None else ConfigChange(e.config, "SET", new)
            changes.setdefault(res, []).append(change)
        planned.append((e, back, new))
    results = gw.incremental_alter_configs(changes) if changes else {}
    outcomes: dict[str, dict] = {}
    for e, back, new in planned:
        res = ConfigResource(e.resource_type, e.resource_name)
        err = results.get(res)
        name = f"topic:{e.resource_name}/{e.config}"
        if isinstance(err, KafkaOperationError):
            outcomes[name] = {"ok": False, "error": err.name, "message": err.operator_text}
            continue
        left = [x for x in e.added if x not in set(back)]
        state = EntryState.SET if left else EntryState.REMOVED
        ThrottleEntry.objects.filter(pk=e.pk).update(
            added=left,
            value=new or "",
            state=state,
            message="" if left else "taken back as its partitions finished",
        )
        outcomes[name] = {"ok": True, "taken_back": back, "left": left}
    if outcomes:
        with transaction.atomic():
            audit.record(
                actor=access.system_actor(),
                action=audit_names.THROTTLE_REMOVE,
                cluster=r.cluster,
                targets=sorted(outcomes),
                params={"reason": REASON},
                outcomes=outcomes,
                operation=r.operation,
            )
    return outcomes


def forget(r: Reassignment) -> None:
    _SEEN.pop((r.pk, r.operation.created_at), None)
