"""Worker side of a reassignment: throttles, submission in batches, the poller, completion, cancel.

Every step converges when re-entered (after a crash, a redelivery, or a second beat tick):
throttles already in the ledger are re-set, partitions already moving towards our target are
adopted, partitions already at the target are done.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
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
from console.services import metadata_cache, operations, planner, throttles
from console.services.reassign_progress import human_bytes, human_duration, partition_progress, rate_and_eta
from console.services.reassignment import console_busy, flatten_logs, gateway_for

log = logging.getLogger(__name__)

# Limits (to move to settings.py).
SUBMIT_BATCH = settings.REASSIGN_SUBMIT_BATCH  # partitions per AlterPartitionReassignments request
POLL_INTERVAL_S = 1.0  # the poller's beat interval; a cycle is skipped if the last one is fresher than half
OUTCOMES_IN_AUDIT = 1000  # above this many partitions the final audit event lists only the ones not done


def _tps(rows) -> list[TopicPartition]:
    return [TopicPartition(r.topic, r.partition) for r in rows]


def _set_states(updates: dict[tuple[str, str], list[int]]) -> None:
    """Bulk state changes: {(state, message): [row ids]}."""
    for (state, message), ids in updates.items():
        for i in range(0, len(ids), 900):
            ReassignmentPartition.objects.filter(pk__in=ids[i : i + 900]).update(state=state, message=message)


def _stage(r: Reassignment, stage: str) -> None:
    Reassignment.objects.filter(pk=r.pk).update(stage=stage)
    r.stage = stage


def run_reassignment(op_id: int, *, worker: str):
    """The Operation's task: set throttles, submit, then leave the moving partitions to the poller."""
    op = operations.claim(op_id, worker)
    if op is None:
        return None
    r = Reassignment.objects.select_related("cluster", "operation").get(operation=op)
    r.operation = op
    try:
        if r.cancel_requested and r.stage in (Stage.THROTTLING, Stage.SUBMITTING):
            return finish_cancel(r)
        if r.stage == Stage.THROTTLING:
            if not _throttle(r):
                return None
            _stage(r, Stage.SUBMITTING)
            operations.heartbeat(op, text="throttles set; submitting")
        if r.stage == Stage.SUBMITTING:
            submit(r)
            _stage(r, Stage.MOVING)
    except KafkaOperationError as err:
        # Nothing is assumed: a later attempt (beat re-queues stale operations) re-reads and converges.
        operations.heartbeat(op, text=f"retrying after {err.name}")
        log.warning("reassignment %s: %s; will retry", r.pk, err)
        raise
    if r.stage in (Stage.MOVING, Stage.CANCELLING):
        return poll_once(r)
    return None


def _throttle(r: Reassignment) -> bool:
    """Record then set the throttles; on failure take back what was set and fail the operation."""
    if not r.throttle_bytes_per_s:
        return True
    # The plan was validated against Kafka moments ago (nothing in progress); the originals stand.
    rows = r.partitions.filter(state__in=OPEN_PARTITION_STATES).values_list(
        "topic", "partition", "original", "target"
    )
    current = {(t, p): tuple(orig) for t, p, orig, _ in rows}
    moves = planner.plan_moves(current, {(t, p): tuple(target) for t, p, _, target in rows})
    throttles.record_throttles(r, moves)
    outcomes = throttles.apply_throttles(r)
    failed = {k: v for k, v in outcomes.items() if not v.get("ok")}
    if failed:
        throttles.remove_throttles(r, reason="could not set every throttle")
        _stage(r, Stage.FINISHED)
        _close_rows(r, PartitionState.CANCELLED, "not started: the throttles could not be set")
        operations.finish(
            r.operation,
            state=OperationState.FAILED,
            outcomes=failed,
            error="Could not set the throttles: " + ", ".join(sorted(failed)) + ". Nothing was moved.",
            result={"outcome": "failed"},
        )
        Reassignment.objects.filter(pk=r.pk).update(outcome="failed")
        return False
    return True


def submit(r: Reassignment) -> None:
    """AlterPartitionReassignments in batches; conflicts are refused per partition, never merged."""
    rows = list(
        r.partitions.filter(state=PartitionState.PENDING).values_list(
            "id", "topic", "partition", "target", named=True
        )
    )
    if not rows:
        return
    gw = gateway_for(r.cluster)
    updates: dict[tuple[str, str], list[int]] = defaultdict(list)
    others = console_busy(r.cluster, exclude=r.pk)
    listed = gw.list_partition_reassignments(_tps(rows))
    todo = []
    for row in rows:
        tp = (row.topic, row.partition)
        if others.get(tp, r.pk) < r.pk:
            updates[
                (PartitionState.REFUSED, f"Already being reassigned by reassignment #{others[tp]}")
            ].append(row.id)
            continue
        found = listed.get(TopicPartition(*tp))
        if found is not None:
            target = [b for b in found.replicas if b not in found.removing]
            if target == list(row.target):
                updates[(PartitionState.MOVING, "")].append(row.id)  # ours, submitted before a crash
            else:
                updates[(PartitionState.REFUSED, "Already being reassigned outside this operation")].append(
                    row.id
                )
            continue
        todo.append(row)
    # Deleted topics and partitions already at their target need no pre-check: Kafka answers
    # UNKNOWN_TOPIC_OR_PARTITION for the first, and the poller's verification marks the second done.
    for i in range(0, len(todo), SUBMIT_BATCH):
        batch = todo[i : i + SUBMIT_BATCH]
        results = gw.alter_partition_reassignments(
            {TopicPartition(x.topic, x.partition): list(x.target) for x in batch}
        )
        for x in batch:
            res = results[TopicPartition(x.topic, x.partition)]
            if isinstance(res, KafkaOperationError):
                state = (
                    PartitionState.REFUSED
                    if res.name == "REASSIGNMENT_IN_PROGRESS"
                    else PartitionState.FAILED
                )
                updates[(state, f"{res.name}: {res.operator_text}")].append(x.id)
            else:
                updates[(PartitionState.MOVING, "")].append(x.id)
        operations.heartbeat(r.operation, text=f"submitted {min(i + SUBMIT_BATCH, len(todo))} of {len(todo)}")
    _set_states(updates)


# ---- the poller ------------------------------------------------------------------------------


def due_reassignments() -> list[int]:
    """Reassignments whose partitions are moving (or being cancelled) on a running operation."""
    return list(
        Reassignment.objects.filter(
            Q(stage__in=(Stage.MOVING, Stage.CANCELLING)) | Q(cancel_requested=True, stage=Stage.MOVING),
            operation__state=OperationState.RUNNING,
        ).values_list("pk", flat=True)
    )


def poll_due() -> list[int]:
    """Beat job: one poll cycle for every moving reassignment (skipped if another poller just did it)."""
    done = []
    for pk in due_reassignments():
        r = Reassignment.objects.select_related("cluster", "operation").get(pk=pk)
        if claim_poll(r):
            try:
                poll_once(r)
            except KafkaOperationError as err:
                log.warning("poll of reassignment %s failed: %s", pk, err)
                operations.heartbeat(r.operation, text=f"poll failed ({err.name}); retrying")
            done.append(pk)
    return done


def claim_poll(r: Reassignment) -> bool:
    """Take this cycle with a conditional UPDATE so two pollers never run the same cycle."""
    now = timezone.now()
    fresh = now - timedelta(seconds=POLL_INTERVAL_S / 2)
    q = Q(last_poll_at__isnull=True) | Q(last_poll_at__lt=fresh)
    if r.last_poll_at is not None:
        q &= Q(last_poll_at=r.last_poll_at)
    return bool(Reassignment.objects.filter(q, pk=r.pk).update(last_poll_at=now))


def poll_once(r: Reassignment):
    """One cycle: one ListPartitionReassignments + one DescribeLogDirs per involved broker.

    Progress of the moving partitions goes to ``Reassignment.live`` in one UPDATE; a partition
    row is written only when its state changes.
    """
    r.refresh_from_db()
    if r.operation.finished:
        return r.operation
    if r.cancel_requested:
        return finish_cancel(r)
    started = time.monotonic()
    rows = list(
        r.partitions.filter(state=PartitionState.MOVING).values_list(
            "id", "topic", "partition", "original", "target", named=True
        )
    )
    gw = gateway_for(r.cluster)
    tps = _tps(rows)
    listed = gw.list_partition_reassignments(tps) if rows else {}
    brokers = sorted({b for x in rows for b in (*x.original, *x.target)})
    logs = flatten_logs(gw.describe_log_dirs(broker_ids=brokers, partitions=tps)) if rows else {}
    live: dict[str, list] = {}
    finished = []
    for x in rows:
        moving = TopicPartition(x.topic, x.partition) in listed
        prog = partition_progress((x.topic, x.partition), x.original, x.target, moving, logs)
        entry = [prog.bytes_total, prog.bytes_done, list(prog.replicas)]
        if moving:
            live[f"{x.topic}|{x.partition}"] = entry
        else:
            finished.append((x, entry))
    _verify(gw, finished)
    _summarise(r, live, started)
    if not r.partitions.filter(state__in=OPEN_PARTITION_STATES).exists():
        return complete(r)
    return r.operation


def _verify(gw, finished) -> None:
    """No reassignment in progress is not "reached the target": compare the replicas (else DIVERGED)."""
    if not finished:
        return
    described = gw.describe_topics(sorted({x.topic for x, _ in finished}))
    updated = []
    for x, (total, _done, replicas) in finished:
        md = described.get(x.topic)
        part = (
            None
            if isinstance(md, KafkaOperationError) or md is None
            else next((p for p in md.partitions if p.id == x.partition), None)
        )
        row = ReassignmentPartition(
            pk=x.id, bytes_total=total, bytes_done=total, replicas=replicas, message=""
        )
        if part is None:
            row.state, row.message, row.bytes_done = (
                PartitionState.DIVERGED,
                "Unknown partition (topic deleted?)",
                0,
            )
        elif list(part.replicas) == list(x.target):
            row.state = PartitionState.DONE
        else:
            row.state, row.bytes_done = PartitionState.DIVERGED, _done
            row.message = (
                f"No reassignment in progress but replicas are {list(part.replicas)}, not {list(x.target)}"
            )
        updated.append(row)
    ReassignmentPartition.objects.bulk_update(
        updated, ["bytes_total", "bytes_done", "replicas", "state", "message"], batch_size=500
    )


def _summarise(r: Reassignment, live: dict[str, list], started: float) -> None:
    """Totals, rate and ETA on the Reassignment and the Operation (what the progress page reads)."""
    from django.db.models import Count, Sum

    settled_rows = r.partitions.exclude(state__in=OPEN_PARTITION_STATES)
    agg = settled_rows.aggregate(total=Sum("bytes_total"), done=Sum("bytes_done"))
    counts = dict(r.partitions.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    total = int(agg["total"] or 0) + sum(e[0] for e in live.values())
    done = int(agg["done"] or 0) + sum(e[1] for e in live.values())
    now = time.time()
    last = r.live.get("_at") if isinstance(r.live, dict) else None
    seconds = now - last if last else 0.0
    rate, eta = rate_and_eta(done, r.bytes_done, seconds, total - done, r.rate_bytes_per_s)
    settled = sum(n for s, n in counts.items() if s not in OPEN_PARTITION_STATES)
    Reassignment.objects.filter(pk=r.pk).update(
        bytes_total=total,
        bytes_done=done,
        rate_bytes_per_s=rate,
        partitions_done=counts.get("done", 0),
        polls=r.polls + 1,
        last_poll_at=timezone.now(),
        live={**live, "_at": now},
    )
    text = (
        f"{settled}/{r.partitions_total} partitions · {human_bytes(done)} of {human_bytes(total)}"
        f" · {human_bytes(rate)}/s · ETA {human_duration(eta)} · cycle {1000 * (time.monotonic() - started):.0f} ms"
    )
    progress = done / total if total else (settled / r.partitions_total if r.partitions_total else 0.0)
    operations.heartbeat(r.operation, progress=progress, text=text)


def _close_rows(r: Reassignment, state: str, message: str) -> None:
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
    _stage(r, Stage.FINISHED)
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
    tps = _tps(r.partitions.filter(state=PartitionState.DONE).only("topic", "partition"))
    try:
        results = gateway_for(r.cluster).elect_leaders("PREFERRED", tps)
    except KafkaOperationError as err:
        return {"error": err.name}
    summary: dict[str, int] = defaultdict(int)
    for v in results.values():
        summary["elected" if not isinstance(v, KafkaOperationError) else v.name] += 1
    return dict(summary)


def finish_cancel(r: Reassignment):
    """Revert the in-flight partitions (KIP-455 cancel), settle each row, remove the throttles."""
    _stage(r, Stage.CANCELLING)
    gw = gateway_for(r.cluster)
    r.partitions.filter(state=PartitionState.PENDING).update(
        state=PartitionState.CANCELLED, message="cancelled before it was submitted"
    )
    rows = list(r.partitions.filter(state=PartitionState.MOVING))
    if rows:
        results = gw.alter_partition_reassignments(dict.fromkeys(_tps(rows)))
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
    _stage(r, Stage.FINISHED)
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
