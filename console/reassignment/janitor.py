"""The throttle janitor, the reconciler of errored moves, and throttles left behind by others (DESIGN §5).

The janitor (beat) first takes up again the moves that ended ``errored`` while Kafka went on
moving their partitions (``reconcile_errored``: they finish from what Kafka has, with their
final audit event and their throttles taken back), then takes back the ledger's throttles of
reassignments Kafka no longer runs, whether or not the worker that set them is alive. Throttle configs that no running console
reassignment recorded, on topics (or a cluster) where nothing is moving, are listed for an
audited one-click cleanup.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction
from django.db.models import Q

from console import access, notify, operations
from console.audit import outcomes as outcomes_log
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.clusters.actions import gateway_for
from console.kafka import ConfigChange, ConfigResource
from console.models.operations import FINISHED_STATES, OperationState
from console.models.reassignment import (
    OPEN_PARTITION_STATES,
    PartitionState,
    Reassignment,
    Stage,
    ThrottleEntry,
)
from console.reassignment import audit_names
from console.reassignment.actions import KIND
from console.reassignment.store import row_tps
from console.reassignment.throttles import (
    ACTIVE,
    RATE_CONFIGS,
    REPLICA_CONFIGS,
    current_values,
    remove_throttles,
)

log = logging.getLogger(__name__)


def reconcile_errored() -> list[int]:
    """Beat job: moves whose operation ended ``errored`` after their partitions were submitted are
    taken up again at the move step, once Kafka can be asked (returns the reassignments reopened).

    Kafka does not stop a submitted move because the console gave up watching it. The poll then
    reads what Kafka has (still moving, or at the target: done), the throttles are taken back and
    the operation ends as any move does, with its final audit event. Rows never submitted are
    adopted if Kafka moves them to our target, else closed as not started. A move that errored
    after the move step (taking back the throttles, electing) is finished the same way. Once per
    operation.
    """
    steps = [s.name for s in operations.kind_for(KIND).steps]
    found = (
        Reassignment.objects.filter(operation__state=OperationState.ERRORED, outcome="errored")
        .filter(
            Q(partitions__state=PartitionState.MOVING)
            | Q(operation__path="run", operation__step__gt=steps.index("move"))
        )
        .distinct()
        .select_related("operation", "cluster")
    )
    by_cluster: dict[int, list[Reassignment]] = {}
    for r in found:
        if not (r.operation.data or {}).get("reconciled"):
            by_cluster.setdefault(r.cluster_id, []).append(r)
    reopened = []
    for items in by_cluster.values():
        try:  # Kafka must answer first: reopening into lost contact would only wait there
            listed = gateway_for(items[0].cluster).list_partition_reassignments()
        except Exception as err:  # noqa: BLE001 - logged; the next sweep retries this cluster
            log.warning("reconciler: skipping cluster %s this time: %s", items[0].cluster, err)
            continue
        for r in items:
            if _reopen(r, listed):
                reopened.append(r.pk)
    return reopened


def _reopen(r: Reassignment, listed) -> bool:
    adopted, closed = [], []
    moving = {(tp.topic, tp.partition): v for tp, v in listed.items()}
    for x in r.partitions.filter(state=PartitionState.PENDING):
        found = moving.get((x.topic, x.partition))
        ours = found is not None and [b for b in found.replicas if b not in found.removing] == list(x.target)
        (adopted if ours else closed).append(x.pk)
    with transaction.atomic():
        r.partitions.filter(pk__in=adopted).update(state=PartitionState.MOVING, message="")
        r.partitions.filter(pk__in=closed).update(
            state=PartitionState.CANCELLED, message="not submitted before the operation ended errored"
        )
        Reassignment.objects.filter(pk=r.pk).update(stage=Stage.MOVING, outcome="", completed_at=None)
        reason = f"reassignment #{r.pk}: Kafka went on with the move after the operation ended errored"
        if not operations.reopen(r.operation, step="move", reason=reason):
            transaction.set_rollback(True)
            return False
    return True


def sweep_throttles() -> list[int]:
    """Beat job: take back throttles still owed by reassignments whose operation has ended.

    A running operation removes its own throttles (a step the runner retries); the janitor only
    takes what an operation left owed when it ended errored, and only once Kafka no longer
    moves any of that reassignment's partitions. So each throttle has exactly one remover.
    """
    cleaned = []
    owing = (
        Reassignment.objects.filter(throttles__state__in=ACTIVE, operation__state__in=FINISHED_STATES)
        .distinct()
        .select_related("operation", "cluster")
    )
    by_cluster: dict[int, list[Reassignment]] = {}
    for r in owing:
        by_cluster.setdefault(r.cluster_id, []).append(r)
    for items in by_cluster.values():
        for r in items:  # announced once each, whether or not Kafka can be asked this time
            _announce_leftovers(r)
        try:  # one cluster's trouble (unreachable, undecryptable password) never stops the others
            moving = set(gateway_for(items[0].cluster).list_partition_reassignments())
            for r in items:
                ours = set(row_tps(r.partitions.filter(state__in=OPEN_PARTITION_STATES)))
                if not moving.isdisjoint(ours):
                    continue
                remove_throttles(r, reason="janitor: owed by an operation that ended")
                cleaned.append(r.pk)
        except Exception as err:  # noqa: BLE001 - logged; the next sweep retries this cluster
            log.warning("throttle janitor: skipping cluster %s this time: %s", items[0].cluster, err)
    return cleaned


def _announce_leftovers(r: Reassignment) -> None:
    """Notification channels hear once per reassignment that it ended owing throttles."""
    owed = r.throttles.filter(state__in=ACTIVE).count()
    notify.emit(
        r.cluster,
        notify.events.THROTTLES_LEFTOVER,
        title=f"Reassignment #{r.pk} ended ({r.operation.state}) owing {owed} throttle setting(s)",
        text="The janitor takes them back once Kafka no longer moves its partitions; see the Throttles page.",
        link=f"/operations/{r.operation_id}/",
        details={"reassignment": r.pk, "operation": r.operation_id, "owed": owed},
        key=f"reassignment-{r.pk}",
    )


def find_foreign_throttles(cluster) -> list[dict]:
    """Throttle configs no running console reassignment recorded, while Kafka moves nothing there."""
    gw = gateway_for(cluster)
    md = gw.list_topics_metadata()
    moving_topics = {tp.topic for tp in gw.list_partition_reassignments()}
    ours = set(
        ThrottleEntry.objects.filter(cluster=cluster, state__in=ACTIVE).values_list(
            "resource_type", "resource_name", "config"
        )
    )
    resources = [ConfigResource("TOPIC", t.name) for t in md.topics]
    resources += [ConfigResource("BROKER", str(b.id)) for b in md.brokers]
    resources.append(ConfigResource("BROKER", ""))  # a cluster-wide default rate throttles every broker
    found = []
    for (res, config), value in current_values(gw, resources, REPLICA_CONFIGS + RATE_CONFIGS).items():
        if value is None or (res.type, res.name, config) in ours:
            continue
        if (res.type == "TOPIC" and res.name in moving_topics) or (res.type == "BROKER" and moving_topics):
            continue
        found.append(
            {
                "type": res.type,
                "name": res.name,
                "config": config,
                "value": value,
                "key": f"{res.type}|{res.name}|{config}",
            }
        )
    return sorted(found, key=lambda f: (f["type"], f["name"], f["config"]))


@refused_as(audit_names.THROTTLE_CLEANUP)
def clean_foreign_throttles(*, actor, cluster, keys: Iterable[str], source_ip: str | None = None) -> dict:
    """Delete the chosen leftover throttle configs (re-checked now); audited with their values."""
    access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    wanted = set(keys)
    if not wanted:
        return {}
    leftovers = [f for f in find_foreign_throttles(cluster) if f["key"] in wanted]
    if not leftovers:
        return {}
    changes: dict[ConfigResource, list[ConfigChange]] = {}
    for f in leftovers:
        changes.setdefault(ConfigResource(f["type"], f["name"]), []).append(
            ConfigChange(f["config"], "DELETE")
        )
    before = {f"{f['type'].lower()}:{f['name']}/{f['config']}": f["value"] for f in leftovers}
    topics = sorted({f"topic:{f['name']}" for f in leftovers if f["type"] == "TOPIC"})
    req = outcomes_log.requested(
        actor=actor,
        action=audit_names.THROTTLE_CLEANUP,
        cluster=cluster,
        targets=[*topics, *before],
        params={"configs": [[f["type"], f["name"], f["config"]] for f in leftovers]},
        source_ip=source_ip,
    )
    results = gateway_for(cluster).incremental_alter_configs(changes)
    outcomes = {}
    for f in leftovers:
        res = results.get(ConfigResource(f["type"], f["name"]))
        outcomes[f"{f['type'].lower()}:{f['name']}/{f['config']}"] = audit.result_outcome(res)
    outcomes_log.settle(req, targets=[*topics, *outcomes], before=before, outcomes=outcomes)
    return outcomes


def _reread_throttles(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: each throttle config the cleanup named, as Kafka has it now."""
    wanted = [(t, n, c) for t, n, c in params.get("configs", [])]
    resources = list(dict.fromkeys(ConfigResource(t, n) for t, n, _ in wanted))
    got = gateway_for(cluster).describe_configs(resources)
    state = {}
    for t, n, c in wanted:
        entries = got.get(ConfigResource(t, n))
        entry = entries.get(c) if isinstance(entries, dict) else None
        override = entry is not None and entry.source in ("DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG")
        state[f"{t.lower()}:{n}/{c}"] = {"set": override, "value": entry.value if override else None}
    return state


outcomes_log.register_reader(audit_names.THROTTLE_CLEANUP, _reread_throttles)
