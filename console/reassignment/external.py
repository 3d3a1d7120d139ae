"""Reassignments started outside the console: listing them with their progress, and cancelling
them (requested, then the outcome)."""

from __future__ import annotations

from collections.abc import Iterable

from console import access
from console.audit import outcomes as outcomes_log
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, TopicPartition
from console.reassignment import audit_names, planner
from console.reassignment.actions import PlanRejected, console_busy
from console.reassignment.finish import replicas_after_cancel
from console.reassignment.progress import flatten_logs, hosts, partition_progress


@refused_as(
    audit_names.EXTERNAL_CANCEL,
    PlanRejected,
    targets=lambda k: sorted({f"topic:{t}" for t, _ in k.get("partitions") or ()}),
)
def cancel_external(
    *, actor, cluster, partitions: Iterable[planner.TP], source_ip: str | None = None
) -> dict:
    """Cancel reassignments started outside the console; per-partition outcome (with the replicas
    Kafka has afterwards), audited."""
    access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    ours = set(console_busy(cluster))
    wanted = [TopicPartition(t, p) for t, p in partitions if (t, p) not in ours]
    if not wanted:
        raise PlanRejected("Select at least one reassignment started outside the console.")
    req = outcomes_log.requested(
        actor=actor,
        action=audit_names.EXTERNAL_CANCEL,
        cluster=cluster,
        targets=[f"{tp.topic}-{tp.partition}" for tp in wanted],
        params={"partitions": [[tp.topic, tp.partition] for tp in wanted]},
        source_ip=source_ip,
    )
    gw = gateway_for(cluster)
    moving = gw.list_partition_reassignments(wanted)
    results = gw.alter_partition_reassignments(dict.fromkeys(wanted))
    # Kafka keeps the move's replica list without the brokers it was adding: say what it has now.
    adding = {
        (tp.topic, tp.partition): set(moving[tp].adding) if tp in moving else set()
        for tp, v in results.items()
        if not isinstance(v, KafkaOperationError)
    }
    after = replicas_after_cancel(gw, adding) if adding else {}
    outcomes = {}
    for tp, v in results.items():
        outcome = audit.result_outcome(v)
        replicas = after.get((tp.topic, tp.partition))
        if outcome["ok"] and replicas is not None:
            outcome.update(replicas=replicas, message=f"cancelled: Kafka has {replicas}")
        outcomes[f"{tp.topic}-{tp.partition}"] = outcome
    outcomes_log.settle(req, targets=list(outcomes), outcomes=outcomes)
    return outcomes


def _reread_moving(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: whether each partition the cancel named is still being moved."""
    tps = [TopicPartition(t, int(p)) for t, p in params.get("partitions", [])]
    moving = gateway_for(cluster).list_partition_reassignments(tps)
    return {f"{tp.topic}-{tp.partition}": {"moving": tp in moving} for tp in tps}


outcomes_log.register_reader(audit_names.EXTERNAL_CANCEL, _reread_moving)


def external_reassignments(cluster) -> list[dict]:
    """Reassignments in progress that no console reassignment owns, with their progress."""
    gw = gateway_for(cluster)
    listed = gw.list_partition_reassignments()
    ours = set(console_busy(cluster))
    rows = [r for tp, r in listed.items() if (tp.topic, tp.partition) not in ours]
    if not rows:
        return []
    # Each replica's broker is asked about its partitions only (as the poller does).
    logs = gw.describe_log_dirs(
        partitions=hosts((TopicPartition(r.topic, r.partition), r.replicas, ()) for r in rows)
    )
    flat = flatten_logs(logs)
    isr = _isr_of(gw, {r.topic for r in rows})  # "In sync" only once Kafka lists the replica in the ISR
    out = []
    for r in sorted(rows, key=lambda r: (r.topic, r.partition)):
        original = [b for b in r.replicas if b not in r.adding]
        target = [b for b in r.replicas if b not in r.removing]
        prog = partition_progress(
            (r.topic, r.partition), original, target, True, flat, isr=isr.get((r.topic, r.partition))
        )
        pct = round(100 * prog.bytes_done / prog.bytes_total) if prog.bytes_total else 0
        out.append(
            {
                "topic": r.topic,
                "partition": r.partition,
                "original": original,
                "target": target,
                "adding": list(r.adding),
                "removing": list(r.removing),
                "percent": pct,
                "replicas": prog.replicas,
                "key": f"{r.topic}|{r.partition}",
            }
        )
    return out


def _isr_of(gw, topics: set[str]) -> dict[tuple[str, int], tuple[int, ...]]:
    described = gw.describe_topics(sorted(topics))
    return {
        (t, p.id): tuple(p.isr)
        for t, md in described.items()
        if md is not None and not isinstance(md, KafkaOperationError)
        for p in md.partitions
    }
