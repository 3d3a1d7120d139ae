"""The end of a reassignment: verify-and-complete (throttles off, optional election) and cancel.

Both converge when re-entered: rows already settled stay settled, and throttle removal takes
back only what the ledger still holds.
"""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from console.kafka import KafkaOperationError, TopicPartition
from console.models import OperationState
from console.models.reassignment import (
    OPEN_PARTITION_STATES,
    PartitionState,
    Reassignment,
    ReassignmentPartition,
    Stage,
)
from console.reassignment import throttles
from console.reassignment.actions import gateway_for
from console.reassignment.store import set_stage, tps
from console.services import operations
from console.topics import cache as metadata_cache

OUTCOMES_IN_AUDIT = 1000  # above this many partitions the final audit event lists only the ones not done


def close_rows(r: Reassignment, state: str, message: str) -> None:
    r.partitions.filter(state__in=OPEN_PARTITION_STATES).update(state=state, message=message)


def _final_outcomes(r: Reassignment) -> tuple[dict, dict]:
    from django.db.models import Count

    counts = dict(r.partitions.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    rows = (
        r.partitions.all() if r.partitions_total <= OUTCOMES_IN_AUDIT else r.partitions.exclude(state="done")
    )
    outcomes = {
        f"{x.topic}-{x.partition}": {
            "ok": x.state == PartitionState.DONE,
            "state": x.state,
            **({"message": x.message} if x.message else {}),
        }
        for x in rows.only("topic", "partition", "state", "message")
    }
    return counts, outcomes


def complete(r: Reassignment):
    """Every partition settled: remove the ledger's throttles, optional preferred election, finish."""
    set_stage(r, Stage.FINISHED)
    Reassignment.objects.filter(pk=r.pk).update(completed_at=timezone.now())
    metadata_cache.invalidate(r.cluster)  # replicas changed
    throttles.remove_throttles(r, reason="completed")
    election = {}
    if r.elect_preferred:
        election = _elect(r)
    counts, outcomes = _final_outcomes(r)
    diverged = counts.get(PartitionState.DIVERGED, 0)
    bad = sum(n for s, n in counts.items() if s != PartitionState.DONE)
    outcome = "succeeded" if not bad else ("diverged" if diverged else "failed")
    Reassignment.objects.filter(pk=r.pk).update(outcome=outcome)
    error = (
        ""
        if not bad
        else f"{bad} of {sum(counts.values())} partitions did not reach their target"
        + (
            f" ({diverged} diverged: no reassignment in progress, replicas differ from the target)"
            if diverged
            else ""
        )
    )
    return operations.finish(
        r.operation,
        state=OperationState.SUCCEEDED if not bad else OperationState.FAILED,
        error=error,
        result={"outcome": outcome, "partitions": counts, "election": election, "bytes_moved": r.bytes_done},
        outcomes=outcomes,
    )


def _elect(r: Reassignment) -> dict:
    done = tps(r.partitions.filter(state=PartitionState.DONE).only("topic", "partition"))
    try:
        results = gateway_for(r.cluster).elect_leaders("PREFERRED", done)
    except KafkaOperationError as err:
        return {"error": err.name}
    summary: dict[str, int] = defaultdict(int)
    for v in results.values():
        summary["elected" if not isinstance(v, KafkaOperationError) else v.name] += 1
    return dict(summary)


def finish_cancel(r: Reassignment):
    """Revert the in-flight partitions (KIP-455 cancel), settle each row, remove the throttles."""
    set_stage(r, Stage.CANCELLING)
    gw = gateway_for(r.cluster)
    r.partitions.filter(state=PartitionState.PENDING).update(
        state=PartitionState.CANCELLED, message="cancelled before it was submitted"
    )
    rows = list(r.partitions.filter(state=PartitionState.MOVING))
    if rows:
        results = gw.alter_partition_reassignments(dict.fromkeys(tps(rows)))
        described = gw.describe_topics(sorted({x.topic for x in rows}))
        for x in rows:
            res = results.get(TopicPartition(x.topic, x.partition))
            md = described.get(x.topic)
            part = (
                None
                if isinstance(md, KafkaOperationError) or md is None
                else next((p for p in md.partitions if p.id == x.partition), None)
            )
            replicas = list(part.replicas) if part is not None else None
            if not isinstance(res, KafkaOperationError):
                x.state, x.message = PartitionState.CANCELLED, "reverted to the original replicas"
            elif res.name != "NO_REASSIGNMENT_IN_PROGRESS":
                x.state, x.message = PartitionState.FAILED, f"cancel failed: {res.name}: {res.operator_text}"
            elif replicas == list(x.target):
                x.state, x.message = PartitionState.DONE, "completed before the cancel"
            elif replicas == list(x.original):
                x.state, x.message = PartitionState.CANCELLED, "reverted to the original replicas"
            else:
                x.state, x.message = PartitionState.DIVERGED, f"after cancel the replicas are {replicas}"
        ReassignmentPartition.objects.bulk_update(rows, ["state", "message"], batch_size=500)
    set_stage(r, Stage.FINISHED)
    with transaction.atomic():
        Reassignment.objects.filter(pk=r.pk).update(outcome="cancelled", completed_at=timezone.now())
    metadata_cache.invalidate(r.cluster)
    throttles.remove_throttles(r, reason="cancelled")
    counts, outcomes = _final_outcomes(r)
    return operations.finish(
        r.operation,
        state=OperationState.CANCELLED,
        result={"outcome": "cancelled", "partitions": counts},
        outcomes=outcomes,
    )
