"""Drift detection's shell: after each scheduled telemetry snapshot, read what Kafka holds now (the
snapshot's own Metadata, every topic's overridden configs, the reassignments in progress, every ACL
binding),
compare it with the previous look, and record what the console did not change as audit events.

Races with the console's own changes: ``audit_mark()`` is read before the snapshot's first request
and kept with the look; the next look counts as the console's every event of a change to the
resource (requested, outcome, reconciled; not refused) written after that mark. A change the console
was making while a look read Kafka has its "requested" event before Kafka acted and its outcome after,
so whichever look first sees Kafka's new state also sees one of its events. Counting a change that
failed too errs on the side of silence: a change outside the console to the same resource and aspect
in the same interval is not reported.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.urls import reverse

from console import access, notify
from console.acls import core as acl_core
from console.audit import store as audit_store
from console.clusters.actions import gateway_for
from console.drift import audit_names, core, store
from console.kafka import KafkaOperationError
from console.kafka.health import PartitionLayout
from console.models import AuditChainHead, AuditEvent, Cluster, DriftBaseline

log = logging.getLogger(__name__)

#: The console's own changes, by the action names its areas store them under (topics, configs, acls,
#: reassignment's and quotas' audit_names; stored names never change), and what each may change.
CONSOLE_CHANGES: dict[str, frozenset[str]] = {
    "topic.create": core.ALL_ASPECTS,
    "topic.delete": core.ALL_ASPECTS,
    "topic.partitions.add": frozenset({core.PARTITIONS}),
    "config.alter": frozenset({core.CONFIGS}),
    "acl.create": frozenset({core.EXISTS}),
    "acl.delete": frozenset({core.EXISTS}),
    "acl.change": frozenset({core.EXISTS}),
    "reassignment.start": frozenset({core.RF}),
    "reassignment.cancel": frozenset({core.RF}),
    "reassignment.external.cancel": frozenset({core.RF}),
    # a reassignment's replica throttles on its topics, and the janitor's removal of leftovers
    # (targets "topic:<name>/<config>")
    "reassignment.throttle.set": frozenset({core.CONFIGS}),
    "reassignment.throttle.remove": frozenset({core.CONFIGS}),
    "throttle.cleanup": frozenset({core.CONFIGS}),
    # a client quota set or removed (targets "quota:<entity>", quotas' audit_names)
    "quota.alter": frozenset({core.CONFIGS}),
}
#: Outcomes of a change that never reached Kafka.
NOT_SENT = ("refused", "rejected")


@dataclass(frozen=True)
class Look:
    """One look's result: whether it only recorded the baseline, and the external changes found."""

    baseline: bool
    changes: tuple[core.Change, ...] = ()


def audit_mark() -> int:
    """The audit trail's last event id (read before a look's first request to Kafka)."""
    return AuditChainHead.objects.filter(pk=1).values_list("last_id", flat=True).first() or 0


def read_state(gw, layout: PartitionLayout) -> dict[str, Any]:
    """The state drift compares, from the snapshot's Metadata and three more batched requests.
    Kafka's internal topics (``__consumer_offsets``, ...) are left out: Kafka makes them itself."""
    names = [n for n in layout.topics if not n.startswith("__")]
    moving = {tp.topic for tp in gw.list_partition_reassignments()}
    overrides = gw.topic_overrides(names)
    offsets = layout.replica_offsets
    topics: dict[str, list] = {}
    for name in names:
        first, count = layout.topic_rows[name]
        rows = range(first, first + count)
        rf = None if name in moving else max((offsets[r + 1] - offsets[r] for r in rows), default=0)
        found = overrides.get(name)
        topics[name] = core.topic_entry(count, rf, found) if isinstance(found, dict) else [count, rf, None]
    try:
        acls: dict | None = {acl_core.label(b): asdict(b) for b in gw.describe_acls()}
    except KafkaOperationError as exc:  # no authorizer, or not allowed to describe: ACLs are not compared
        log.info("drift: ACLs of %s not read: %s", gw, exc.operator_text)
        acls = None
    try:
        quotas: dict | None = gw.client_quotas()
    except KafkaOperationError as exc:  # e.g. a cluster that does not answer DescribeClientQuotas
        log.info("drift: client quotas of %s not read: %s", gw, exc.operator_text)
        quotas = None
    return {"topics": topics, "acls": acls, "quotas": quotas}


def console_touched(cluster: Cluster, since: int) -> dict[str, frozenset[str]]:
    """What the console's own changes on the cluster touched after audit event ``since``."""
    rows = (
        AuditEvent.objects.filter(cluster_name=cluster.name, action__in=list(CONSOLE_CHANGES), id__gt=since)
        .exclude(outcome__in=NOT_SENT)
        .values_list("action", "targets")
    )
    return core.touched_by(rows.iterator(), CONSOLE_CHANGES)


def look(cluster: Cluster, gw, layout: PartitionLayout, *, mark: int, now: datetime) -> Look:
    """Compare Kafka with the previous look; record each external change (one audit event each, by
    the system actor) and the new baseline in one transaction. The first look records the baseline only."""
    cur = read_state(gw, layout)
    prev = store.load(cluster)
    if prev is None:
        with transaction.atomic():
            store.save(cluster, cur, taken_at=now, audit_mark=mark)
        return Look(baseline=True)
    cur = core.carry_unknown(prev.state, cur)
    changes = tuple(core.diff(prev.state, cur, console_touched(cluster, prev.audit_mark)))
    actor = access.system_actor()
    with transaction.atomic():
        row = DriftBaseline.objects.select_for_update().filter(cluster=cluster).first()
        if row is None or row.taken_at != prev.taken_at:
            return Look(baseline=False)  # another look of this cluster recorded meanwhile: it has these
        for change in changes:
            audit_store.record(
                actor=actor,
                action=audit_names.EXTERNAL_CHANGE,
                cluster=cluster,
                targets=[change.target],
                params=change.details(),
                before=change.before,
                after=change.after,
            )
        store.save(cluster, cur, taken_at=now, audit_mark=mark)
        if changes:
            _notify(cluster, changes, mark)
    return Look(baseline=False, changes=changes)


def _notify(cluster: Cluster, changes: tuple[core.Change, ...], mark: int) -> None:
    shown = ", ".join(f"{c.resource_type} {c.resource} {c.change}" for c in changes[:5])
    more = f" and {len(changes) - 5} more" if len(changes) > 5 else ""
    notify.emit(
        cluster,
        notify.events.DRIFT_EXTERNAL_CHANGE,
        title=f"{len(changes)} change(s) outside the console on {cluster.name}",
        text=f"Not made through the console: {shown}{more}.",
        link=reverse("audit_list") + f"?cluster={cluster.name}&action={audit_names.EXTERNAL_CHANGE}",
        details={"changes": [c.details() for c in changes[:50]], "count": len(changes)},
        key=f"drift:{cluster.pk}:{mark}",
    )


def after_snapshot(cluster: Cluster, layout: PartitionLayout, *, mark: int, now: datetime) -> Look | None:
    """The scheduled snapshot's hook (``telemetry.snapshots.collect_for``, with the snapshot's Metadata
    and the audit mark it read before the snapshot): a look, or None when Kafka could not be read for
    it (logged; the previous baseline stays, so the next look compares against it). Never fails the
    snapshot."""
    try:
        return look(cluster, gateway_for(cluster), layout, mark=mark, now=now)
    except KafkaOperationError as exc:
        log.warning("drift look at %s skipped: %s", cluster.name, exc.operator_text)
    except Exception:  # noqa: BLE001 - drift detection never breaks a snapshot
        log.exception("drift look at %s failed", cluster.name)
    return None
