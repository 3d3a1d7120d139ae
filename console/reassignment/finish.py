"""The end of a reassignment: take back the throttles, elect, finish; revert on cancel; give up.

Each function converges when re-entered: rows already settled stay settled, and throttle
removal takes back only what the ledger still owes.
"""

from __future__ import annotations

import time
from collections import defaultdict

from django.db.models import Count
from django.utils import timezone

from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, TopicPartition
from console.models import OperationState
from console.models.reassignment import (
    OPEN_PARTITION_STATES,
    PartitionState,
    Reassignment,
    Stage,
)
from console.operations import Done
from console.reassignment import progress, throttles
from console.reassignment.store import row_tps, set_stage, tps, update_rows
from console.topics import cache as metadata_cache

OUTCOMES_IN_AUDIT = 1000  # above this many partitions the final audit event lists only the ones not done
READBACK_S = 5.0  # how long Kafka's metadata may take to show a cancel before what it shows is final
READBACK_EVERY_S = 0.25
NEVER_STARTED = "never started: still queued when cancelled"


class ThrottlesOwed(Exception):
    """Some ledger entries could not be taken back yet (a broker down, a timeout): retry the step."""


def close_rows(r: Reassignment, state: str, message: str) -> None:
    r.partitions.filter(state__in=OPEN_PARTITION_STATES).update(state=state, message=message)


def _final_outcomes(r: Reassignment) -> tuple[dict, dict]:
    counts = dict(r.partitions.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    rows = (
        r.partitions.all() if r.partitions_total <= OUTCOMES_IN_AUDIT else r.partitions.exclude(state="done")
    )
    outcomes = {
        f"{topic}-{partition}": {
            "ok": state == PartitionState.DONE,
            "state": state,
            **({"message": message} if message else {}),
        }
        for topic, partition, state, message in rows.values_list("topic", "partition", "state", "message")
    }
    return counts, outcomes


def remove_owed_throttles(r: Reassignment, *, reason: str) -> None:
    """The step that cannot be skipped: raise while the ledger still owes anything (the runner retries)."""
    metadata_cache.invalidate(r.cluster)  # replicas changed
    outcomes = throttles.remove_throttles(r, reason=reason)
    owed = r.throttles.filter(state__in=throttles.ACTIVE).count()
    if owed:
        failed = sorted(k for k, v in outcomes.items() if not v.get("ok"))
        # Kafka not answering at all is lost contact (raised: the runner waits, no attempt spent);
        # Kafka answering but refusing or a broker down is a failed attempt of this step
        gateway_for(r.cluster).describe_cluster()
        raise ThrottlesOwed(f"{owed} throttle configs could not be taken back yet ({', '.join(failed[:5])})")


def elect(r: Reassignment) -> dict:
    """Preferred-leader election for the partitions that reached their target (best effort)."""
    done = row_tps(r.partitions.filter(state=PartitionState.DONE))
    try:
        results = gateway_for(r.cluster).elect_leaders("PREFERRED", done)
    except KafkaOperationError as err:
        return {"error": err.name}
    summary: dict[str, int] = defaultdict(int)
    for v in results.values():
        summary["elected" if not isinstance(v, KafkaOperationError) else v.name] += 1
    return dict(summary)


def completed(r: Reassignment, election: dict) -> Done:
    """Every partition settled and the throttles are back: the outcome, from the partition rows."""
    counts, outcomes = _final_outcomes(r)
    diverged = counts.get(PartitionState.DIVERGED, 0)
    bad = sum(n for s, n in counts.items() if s != PartitionState.DONE)
    outcome = "succeeded" if not bad else ("diverged" if diverged else "failed")
    Reassignment.objects.filter(pk=r.pk).update(outcome=outcome, completed_at=timezone.now())
    set_stage(r, Stage.FINISHED)
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
    r.refresh_from_db(fields=["bytes_done"])
    return Done(
        OperationState.SUCCEEDED if not bad else OperationState.FAILED,
        error=error,
        result={"outcome": outcome, "partitions": counts, "election": election, "bytes_moved": r.bytes_done},
        outcomes=outcomes,
    )


def revert(r: Reassignment) -> dict[str, dict]:
    """KIP-455 cancel of the in-flight partitions, then settle each row from what Kafka has afterwards.

    Kafka restores the original brokers, not always in their original order (see
    ``progress.after_cancel``): the partitions it put back in another order are returned as
    ``{"topic-partition": {"original": [...], "replicas": [...]}}`` for the rollback plan.
    """
    set_stage(r, Stage.CANCELLING)
    gw = gateway_for(r.cluster)
    r.partitions.filter(state=PartitionState.PENDING).update(
        state=PartitionState.CANCELLED,
        message=NEVER_STARTED if r.paced else "cancelled before it was submitted",
    )
    rows = list(r.partitions.filter(state=PartitionState.MOVING))
    if not rows:
        return {}
    results = gw.alter_partition_reassignments(dict.fromkeys(tps(rows)))
    cancelled = {
        (x.topic, x.partition)
        for x in rows
        if not isinstance(results.get(TopicPartition(x.topic, x.partition)), KafkaOperationError)
    }
    found = replicas_after_cancel(
        gw,
        {
            (x.topic, x.partition): set(x.target) - set(x.original)
            if (x.topic, x.partition) in cancelled
            else set()
            for x in rows
        },
    )
    reordered: dict[str, dict] = {}
    for x in rows:
        res = results.get(TopicPartition(x.topic, x.partition))
        if isinstance(res, KafkaOperationError) and res.name != "NO_REASSIGNMENT_IN_PROGRESS":
            x.state, x.message = PartitionState.FAILED, f"cancel failed: {res.name}: {res.operator_text}"
            continue
        replicas = found.get((x.topic, x.partition))
        kind, x.message = progress.after_cancel(x.original, x.target, replicas)
        if kind == "target":
            x.state = PartitionState.DONE
        elif kind == "other" or (kind == "unknown" and (x.topic, x.partition) not in cancelled):
            x.state = PartitionState.DIVERGED
        else:
            x.state = PartitionState.CANCELLED
        if kind == "reordered":
            reordered[f"{x.topic}-{x.partition}"] = {"original": list(x.original), "replicas": replicas}
    update_rows(rows, ["state", "message"])
    metadata_cache.invalidate(r.cluster)
    return reordered


def replicas_after_cancel(
    gw, adding: dict[tuple[str, int], set[int]]
) -> dict[tuple[str, int], list[int] | None]:
    """Each partition's replicas as Kafka's metadata shows them after a cancel (None: not read).

    The brokers apply a cancel from the metadata log a moment after the controller accepted it:
    while a partition still lists a broker its move was adding (``adding``), the answer predates
    the cancel and is read again, for at most READBACK_S."""
    deadline = time.monotonic() + READBACK_S
    while True:
        described = gw.describe_topics(sorted({t for t, _ in adding}))
        found: dict[tuple[str, int], list[int] | None] = {}
        for topic, partition in adding:
            md = described.get(topic)
            part = (
                None
                if isinstance(md, KafkaOperationError) or md is None
                else next((p for p in md.partitions if p.id == partition), None)
            )
            found[(topic, partition)] = list(part.replicas) if part is not None else None
        stale = [tp for tp, brokers in adding.items() if set(found[tp] or ()) & brokers]
        if not stale or time.monotonic() >= deadline:
            return found
        time.sleep(READBACK_EVERY_S)


def cancelled(r: Reassignment, reordered: dict[str, dict]) -> Done:
    """The cancel's end: per partition what Kafka has (the rows' messages; the replicas of those
    restored in another order), and those partitions in the result for the rollback plan."""
    Reassignment.objects.filter(pk=r.pk).update(outcome="cancelled", completed_at=timezone.now())
    set_stage(r, Stage.FINISHED)
    counts, outcomes = _final_outcomes(r)
    for key, seen in reordered.items():
        if key in outcomes:
            outcomes[key]["replicas"] = seen["replicas"]
    result = {"outcome": "cancelled", "partitions": counts, "reordered": reordered}
    if r.paced:  # the queue was dropped: how many partitions never started
        result["never_started"] = r.partitions.filter(
            state=PartitionState.CANCELLED, message=NEVER_STARTED
        ).count()
    return Done(
        OperationState.CANCELLED,
        result=result,
        outcomes=outcomes,
    )


def give_up(r: Reassignment, error: str) -> None:
    """Before the operation ends errored: take the throttles back if nothing of ours still moves.

    Partitions Kafka is still moving keep their throttles (removing them would let the copy run
    unthrottled); those entries stay owed in the ledger, shown on the Throttles page, and the
    janitor takes them back once Kafka has finished with the partitions.
    """
    Reassignment.objects.filter(pk=r.pk).update(outcome="errored", completed_at=timezone.now())
    set_stage(r, Stage.FINISHED)
    if not r.throttles.filter(state__in=throttles.ACTIVE).exists():
        return
    ours = row_tps(r.partitions.filter(state__in=OPEN_PARTITION_STATES))
    if ours and gateway_for(r.cluster).list_partition_reassignments(ours):
        return
    throttles.remove_throttles(r, reason="operation errored")
