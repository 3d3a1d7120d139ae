"""Reassignments started outside the console: cancelling them (requested, then the outcome)."""

from __future__ import annotations

from collections.abc import Iterable

from console import access
from console.audit import outcomes as outcomes_log
from console.audit import store as audit
from console.clusters.actions import gateway_for
from console.kafka import TopicPartition
from console.reassignment import planner
from console.reassignment.actions import PlanRejected, console_busy


def cancel_external(
    *, actor, cluster, partitions: Iterable[planner.TP], source_ip: str | None = None
) -> dict:
    """Cancel reassignments started outside the console; per-partition outcome, audited."""
    access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    ours = set(console_busy(cluster))
    wanted = [TopicPartition(t, p) for t, p in partitions if (t, p) not in ours]
    if not wanted:
        raise PlanRejected("Select at least one reassignment started outside the console.")
    req = outcomes_log.requested(
        actor=actor,
        action="reassignment.external.cancel",
        cluster=cluster,
        targets=[f"{tp.topic}-{tp.partition}" for tp in wanted],
        params={"partitions": [[tp.topic, tp.partition] for tp in wanted]},
        source_ip=source_ip,
    )
    results = gateway_for(cluster).alter_partition_reassignments(dict.fromkeys(wanted))
    outcomes = {f"{tp.topic}-{tp.partition}": audit.result_outcome(v) for tp, v in results.items()}
    outcomes_log.settle(req, targets=list(outcomes), outcomes=outcomes)
    return outcomes


def _reread_moving(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: whether each partition the cancel named is still being moved."""
    tps = [TopicPartition(t, int(p)) for t, p in params.get("partitions", [])]
    moving = gateway_for(cluster).list_partition_reassignments(tps)
    return {f"{tp.topic}-{tp.partition}": {"moving": tp in moving} for tp in tps}


outcomes_log.register_reader("reassignment.external.cancel", _reread_moving)
