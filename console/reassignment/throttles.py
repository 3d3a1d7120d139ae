"""Replication throttles of reassignments: the ledger, setting, removing/restoring, the janitor.

Configs are the ones Kafka's ``kafka-reassign-partitions`` sets: the throttled-replicas lists
on the moving topics and the two rates on every broker involved. Every value is written to the
ledger (``ThrottleEntry``) with the value it replaces *before* it is set, so whoever removes it
later (the poller, the janitor after a crash, an operator) takes back exactly what was set.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console import access
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.formatting import human_bytes
from console.kafka import ConfigChange, ConfigResource, KafkaOperationError
from console.models.reassignment import OWED_STATES, EntryState, Reassignment, Stage, ThrottleEntry
from console.reassignment import audit_names, planner
from console.reassignment import pacing as pacing_core

log = logging.getLogger(__name__)

LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
REPLICA_CONFIGS = (LEADER_REPLICAS, FOLLOWER_REPLICAS)
RATE_CONFIGS = (LEADER_RATE, FOLLOWER_RATE)

# Limits (to move to settings.py): a throttle below 1 KB/s never finishes, above 10 GB/s is a typo.
MIN_THROTTLE_BYTES_PER_S = settings.REASSIGN_MIN_THROTTLE_BYTES_PER_S
MAX_THROTTLE_BYTES_PER_S = settings.REASSIGN_MAX_THROTTLE_BYTES_PER_S
# The janitor leaves a reassignment alone while its worker submitted within this many seconds.
JANITOR_GRACE_S = settings.REASSIGN_JANITOR_GRACE_S

ACTIVE = OWED_STATES


class ThrottleError(ValueError):
    """A throttle value an operator must correct."""


def validate_rate(rate: int | None) -> int | None:
    """None (no throttle) or a rate within the limits, in bytes/s."""
    if rate is None:
        return None
    if rate < MIN_THROTTLE_BYTES_PER_S:
        raise ThrottleError(
            f"A throttle of {human_bytes(rate)}/s is too low (at least {human_bytes(MIN_THROTTLE_BYTES_PER_S)}/s); "
            "to stop a reassignment, cancel it."
        )
    if rate > MAX_THROTTLE_BYTES_PER_S:
        raise ThrottleError(
            f"A throttle of {human_bytes(rate)}/s is not plausible (at most {human_bytes(MAX_THROTTLE_BYTES_PER_S)}/s)."
        )
    return rate


def current_values(
    gw, resources: Iterable[ConfigResource], names: Iterable[str], strict: bool = True, errors=None
) -> dict:
    """{(resource, config): override value or None}; an unreadable resource raises (or, not strict, is left out).

    An override is a topic's or a broker's own dynamic config; on the cluster-wide default broker
    resource (``BROKER ""``) the dynamic default itself (Kafka applies it to every broker without
    an override of its own, so a leftover default throttles the whole cluster). Read lean
    (``gateway.config_overrides``: at 20,000 topics kafka-python's decoding of every entry cost
    more than the answer's trip over the wire).
    """
    wanted = list(dict.fromkeys(names))
    out: dict[tuple[ConfigResource, str], str | None] = {}
    for res, got in gw.config_overrides(resources, wanted).items():
        if isinstance(got, KafkaOperationError):
            if strict:
                raise got
            if errors is not None:
                errors[res] = got
            continue
        out.update(((res, name), got.get(name)) for name in wanted)
    return out


def throttle_plan(
    moves: Mapping[planner.TP, planner.Move], rate: int | None, pacing: pacing_core.Pacing | None = None
) -> dict[tuple[str, str, str], str]:
    """{(TOPIC|BROKER, name, config): value we want} for the moves (pure). Each broker's leader and
    follower rates are its override, else the direction's own rate, else ``rate`` (a direction
    without any rate is not throttled on that broker)."""
    pacing = pacing or pacing_core.Pacing()
    wanted: dict[tuple[str, str, str], str] = {}
    for topic, value in planner.leader_throttles(moves).items():
        wanted[("TOPIC", topic, LEADER_REPLICAS)] = value
    for topic, value in planner.follower_throttles(moves).items():
        wanted[("TOPIC", topic, FOLLOWER_REPLICAS)] = value
    for broker in sorted(planner.brokers_involved(moves)):
        for config, value in zip(RATE_CONFIGS, pacing_core.rates_of(broker, rate, pacing), strict=True):
            if value:
                wanted[("BROKER", str(broker), config)] = str(value)
    return wanted


def pacing_of(reassignment: Reassignment) -> pacing_core.Pacing:
    """The move's split rates, overrides and N as the pure planners take them."""
    return pacing_core.Pacing(
        leader=reassignment.leader_throttle_bytes_per_s,
        follower=reassignment.follower_throttle_bytes_per_s,
        brokers={int(b): int(v) for b, v in (reassignment.broker_throttles or {}).items()},
        max_moves=reassignment.max_moves_per_broker,
    )


def record_throttles(reassignment: Reassignment, moves: Mapping[planner.TP, planner.Move]) -> None:
    """Write the ledger (values to set and the values they replace) before anything is set; a
    ledger already written (a step re-entered after a crash) is kept as it is."""
    if not reassignment.throttled or reassignment.throttles.exists():
        return
    pacing = pacing_of(reassignment)
    wanted = throttle_plan(moves, reassignment.throttle_bytes_per_s, pacing)
    if not wanted:
        return
    gw = gateway_for(reassignment.cluster)
    current = current_values(gw, (ConfigResource(t, n) for t, n, _ in wanted), REPLICA_CONFIGS + RATE_CONFIGS)
    holders = _holders(reassignment)
    rows = []
    for (rtype, name, config), value in wanted.items():
        previous = current.get((ConfigResource(rtype, name), config))
        if config in REPLICA_CONFIGS:
            value, added = planner.merge_throttle(previous, value)
        else:
            # Another console reassignment may hold this rate: remember the value before it.
            holder = holders.get((rtype, name, config))
            previous = holder.previous if holder is not None else previous
            added = [value]
        rows.append(
            ThrottleEntry(
                reassignment=reassignment,
                cluster=reassignment.cluster,
                resource_type=rtype,
                resource_name=name,
                config=config,
                value=value,
                previous=previous,
                added=added,
            )
        )
    op = reassignment.operation
    with transaction.atomic():
        ThrottleEntry.objects.bulk_create(rows)
        audit.record(
            actor=op.created_by,
            action=audit_names.THROTTLE_RECORD,
            cluster=reassignment.cluster,
            targets=sorted({f"{r.resource_type.lower()}:{r.resource_name}" for r in rows}),
            params={"rate": reassignment.throttle_bytes_per_s, **_split(pacing)},
            before={_key(r): r.previous for r in rows},
            after={_key(r): r.value for r in rows},
            outcome="requested",
            operation=op,
        )


def _split(pacing: pacing_core.Pacing) -> dict:
    """The audit's params of split rates and overrides (nothing when the single throttle is used)."""
    out = {}
    if pacing.leader is not None:
        out["leader_rate"] = pacing.leader
    if pacing.follower is not None:
        out["follower_rate"] = pacing.follower
    if pacing.brokers:
        out["broker_rates"] = {str(b): v for b, v in sorted(pacing.brokers.items())}
    return out


def _key(e: ThrottleEntry) -> str:
    return f"{e.resource_type.lower()}:{e.resource_name}/{e.config}"


def _holders(reassignment: Reassignment) -> dict[tuple[str, str, str], ThrottleEntry]:
    """The entry another console reassignment holds on each (resource, config): the oldest active one."""
    out: dict[tuple[str, str, str], ThrottleEntry] = {}
    others = (
        ThrottleEntry.objects.filter(cluster=reassignment.cluster, state__in=ACTIVE)
        .exclude(reassignment=reassignment)
        .order_by("id")
    )
    for e in others:
        out.setdefault((e.resource_type, e.resource_name, e.config), e)
    return out


def _set_entry_states(updates: dict[tuple[str, str], list[int]]) -> None:
    """Ledger state changes in one UPDATE per outcome: {(state, message): [entry ids]}."""
    for (state, message), ids in updates.items():
        for i in range(0, len(ids), 900):
            ThrottleEntry.objects.filter(pk__in=ids[i : i + 900]).update(state=state, message=message)


def apply_throttles(reassignment: Reassignment) -> dict[str, dict]:
    """Set every recorded ledger entry (idempotent: re-setting the same value converges)."""
    # what setting needs (``previous`` and ``added``, JSON of up to thousands of entries, are not
    # read); ``reassignment`` stays in: Django reads a left-out key back per entry, a query each
    entries = list(
        reassignment.throttles.filter(state=EntryState.RECORDED).only(
            "id", "reassignment", "resource_type", "resource_name", "config", "value"
        )
    )
    if not entries:
        return {}
    changes: dict[ConfigResource, list[ConfigChange]] = {}
    for e in entries:
        changes.setdefault(ConfigResource(e.resource_type, e.resource_name), []).append(
            ConfigChange(e.config, "SET", e.value)
        )
    results = gateway_for(reassignment.cluster).incremental_alter_configs(changes)
    outcomes = {}
    updates: dict[tuple[str, str], list[int]] = {}
    for e in entries:
        res = results.get(ConfigResource(e.resource_type, e.resource_name))
        ok = not isinstance(res, KafkaOperationError)
        state = (EntryState.SET, "") if ok else (EntryState.RECORDED, res.operator_text)
        updates.setdefault(state, []).append(e.pk)
        outcomes[_key(e)] = {"ok": ok, "value": e.value} if ok else {"ok": False, "error": res.name}
    _set_entry_states(updates)
    op = reassignment.operation
    with transaction.atomic():
        audit.record(
            actor=op.created_by,
            action=audit_names.THROTTLE_SET,
            cluster=reassignment.cluster,
            targets=list(outcomes),
            outcomes=outcomes,
            operation=op,
        )
    return outcomes


def remove_throttles(
    reassignment: Reassignment,
    *,
    actor=None,
    reason: str = "completed",
    only: list[ThrottleEntry] | None = None,
) -> dict[str, dict]:
    """Take back exactly the ledger's throttles: our replica entries, and rates still at our value
    (``only``: just those entries, e.g. the rates of a broker a paced move no longer involves)."""
    entries = list(reassignment.throttles.filter(state__in=ACTIVE)) if only is None else only
    if not entries:
        if only is None:
            _mark_removed(reassignment)
        return {}
    gw = gateway_for(reassignment.cluster)
    resources = [ConfigResource(e.resource_type, e.resource_name) for e in entries]
    unreadable: dict[ConfigResource, KafkaOperationError] = {}
    try:
        current = current_values(
            gw, resources, REPLICA_CONFIGS + RATE_CONFIGS, strict=False, errors=unreadable
        )
    except KafkaOperationError as err:
        log.warning("throttle removal of reassignment %s postponed: %s", reassignment.pk, err)
        return {"describe": {"ok": False, "error": err.name}}
    changes: dict[ConfigResource, list[ConfigChange]] = {}
    decided: dict[int, tuple[str, str]] = {}
    holders = _holders(reassignment)
    for e in entries:
        res = ConfigResource(e.resource_type, e.resource_name)
        if (res, e.config) not in current:
            gone = (
                res.type == "TOPIC"
                and getattr(unreadable.get(res), "name", "") == "UNKNOWN_TOPIC_OR_PARTITION"
            )
            if gone:  # a deleted topic takes its configs with it: nothing is left to take back
                decided[e.pk] = (EntryState.REMOVED, "the topic no longer exists")
            else:  # unreadable now (broker down): retried
                decided[e.pk] = (EntryState.SET, "could not read the current value; will retry")
            continue
        now = current[(res, e.config)]
        if e.config in REPLICA_CONFIGS:
            new = planner.unmerge_throttle(now, e.added)
            if new == now:
                decided[e.pk] = (EntryState.REMOVED, "nothing of ours left")
                continue
        else:
            holder = holders.get((e.resource_type, e.resource_name, e.config))
            if holder is not None:
                decided[e.pk] = (EntryState.REMOVED, f"still used by reassignment #{holder.reassignment_id}")
                continue
            if now is not None and now not in {*e.added, e.value}:
                decided[e.pk] = (EntryState.LEFT, f"changed by someone else to {now}; left in place")
                continue
            new = e.previous
        change = ConfigChange(e.config, "DELETE") if new is None else ConfigChange(e.config, "SET", new)
        changes.setdefault(res, []).append(change)
    results = gw.incremental_alter_configs(changes) if changes else {}
    outcomes: dict[str, dict] = {}
    updates: dict[tuple[str, str], list[int]] = {}
    for e in entries:
        res = ConfigResource(e.resource_type, e.resource_name)
        if e.pk in decided:
            state, message = decided[e.pk]
        elif isinstance(results.get(res), KafkaOperationError):
            state, message = EntryState.SET, results[res].operator_text  # retried by the janitor
        else:
            state, message = EntryState.REMOVED, "restored" if e.previous is not None else "removed"
        updates.setdefault((state, message[:2000]), []).append(e.pk)
        outcomes[_key(e)] = {"ok": state != EntryState.SET, "state": state, "message": message}
    _set_entry_states(updates)
    if not changes and all(state == EntryState.SET for state, _ in updates):
        return outcomes  # nothing changed (e.g. a broker still down): no event for a retry that did nothing
    with transaction.atomic():
        audit.record(
            actor=actor or access.system_actor(),
            action=audit_names.THROTTLE_REMOVE,
            cluster=reassignment.cluster,
            targets=list(outcomes),
            params={"reason": reason},
            outcomes=outcomes,
            operation=reassignment.operation,
        )
    if not reassignment.throttles.filter(state__in=ACTIVE).exists():
        _mark_removed(reassignment)
    return outcomes


def _mark_removed(reassignment: Reassignment) -> None:
    if reassignment.throttles_removed_at is None:
        reassignment.throttles_removed_at = timezone.now()
        Reassignment.objects.filter(pk=reassignment.pk).update(
            throttles_removed_at=reassignment.throttles_removed_at
        )


@refused_as(
    audit_names.THROTTLE_CHANGE,
    ThrottleError,
    targets=lambda k: [f"operation:{k['reassignment'].operation_id}"],
)
def change_throttle(*, actor, reassignment: Reassignment, rate: int, source_ip: str | None = None) -> dict:
    """Change the rate of a running reassignment: ledger and audit first, then the brokers."""
    access.require(actor, reassignment.cluster, access.MANAGE_REASSIGNMENTS)
    gate.check(actor, reassignment.cluster, "throttle")
    rate = validate_rate(rate)
    if reassignment.operation.finished or reassignment.stage in (Stage.FINISHED, Stage.CANCELLING):
        raise ThrottleError("This reassignment is no longer running.")
    entries = list(reassignment.throttles.filter(state__in=ACTIVE, config__in=RATE_CONFIGS))
    if not entries:
        raise ThrottleError("This reassignment runs without a throttle; start it with one to change it.")
    before = reassignment.throttle_bytes_per_s
    with transaction.atomic():
        # one rate for every direction and broker from now on: split rates and overrides give way
        Reassignment.objects.filter(pk=reassignment.pk).update(
            throttle_bytes_per_s=rate,
            leader_throttle_bytes_per_s=None,
            follower_throttle_bytes_per_s=None,
            broker_throttles={},
        )
        for e in entries:
            ThrottleEntry.objects.filter(pk=e.pk).update(value=str(rate), added=[*e.added, str(rate)])
        audit.record(
            actor=actor,
            action=audit_names.THROTTLE_CHANGE,
            cluster=reassignment.cluster,
            targets=[f"broker:{e.resource_name}" for e in entries if e.config == LEADER_RATE],
            before={"rate": before},
            after={"rate": rate},
            outcome="requested",
            operation=reassignment.operation,
            source_ip=source_ip,
        )
    changes: dict[ConfigResource, list[ConfigChange]] = {}
    for e in entries:
        changes.setdefault(ConfigResource("BROKER", e.resource_name), []).append(
            ConfigChange(e.config, "SET", str(rate))
        )
    results = gateway_for(reassignment.cluster).incremental_alter_configs(changes)
    outcomes = {f"broker:{r.name}": audit.result_outcome(v) for r, v in results.items()}
    with transaction.atomic():
        audit.record(
            actor=actor,
            action=audit_names.THROTTLE_CHANGED,
            cluster=reassignment.cluster,
            targets=list(outcomes),
            before={"rate": before},
            after={"rate": rate},
            outcomes=outcomes,
            operation=reassignment.operation,
            source_ip=source_ip,
        )
    reassignment.throttle_bytes_per_s = rate
    reassignment.leader_throttle_bytes_per_s = reassignment.follower_throttle_bytes_per_s = None
    reassignment.broker_throttles = {}
    return outcomes
