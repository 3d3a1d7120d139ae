"""The ``reassignment.execute`` kind: its steps, run by the one runner (console/operations).

throttle → submit → move (one poll cycle per run, ``poll.py``) → remove throttles → elect →
finish; a cancel switches to revert → remove throttles → finish cancelled (``finish.py``).
Every step converges when re-entered (after a crash, a redelivery, a retry): throttles already
in the ledger are re-set, partitions already moving towards our target are adopted, partitions
already at the target are done, throttle removal takes back only what the ledger still owes.
The move and the throttle removal wait out an unreachable Kafka ("lost contact", no attempt
spent). Removing the throttles cannot be skipped: it is retried until the ledger owes nothing, or the
operation ends errored with the entries still owed (shown on the Throttles page, taken back
by the janitor once Kafka no longer moves those partitions).
"""

from __future__ import annotations

import logging
from collections import defaultdict

from django.conf import settings

from console import collector, operations
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, TopicPartition
from console.models import OperationState
from console.models.reassignment import (
    OPEN_PARTITION_STATES,
    PartitionState,
    Reassignment,
    Stage,
)
from console.operations import Done, Kind, Step, Wait
from console.reassignment import finish, pacing, planner, poll, takeback, throttles
from console.reassignment.actions import KIND, console_conflicts
from console.reassignment.finish import close_rows
from console.reassignment.store import Row, partition_rows, set_stage, set_states

log = logging.getLogger(__name__)

#: How often a paused move with nothing in flight looks again (for a resume or a cancel): nothing moves.
PAUSED_POLL_S = 3.0
SUBMIT_BATCH = settings.REASSIGN_SUBMIT_BATCH  # partitions per AlterPartitionReassignments request


def _throttle(r: Reassignment) -> Done | None:
    """Record then set the throttles; on failure take back what was set and fail the operation."""
    if not r.throttled:
        return None
    # The plan was validated against Kafka moments ago (nothing in progress); the originals stand.
    rows = partition_rows(r, OPEN_PARTITION_STATES)
    current = {(x.topic, x.partition): tuple(x.original) for x in rows}
    moves = planner.plan_moves(current, {(x.topic, x.partition): tuple(x.target) for x in rows})
    throttles.record_throttles(r, moves)
    outcomes = throttles.apply_throttles(r)
    failed = {k: v for k, v in outcomes.items() if not v.get("ok")}
    if failed:
        throttles.remove_throttles(r, actor=None, reason="could not set every throttle")
        set_stage(r, Stage.FINISHED)
        close_rows(r, PartitionState.CANCELLED, "not started: the throttles could not be set")
        Reassignment.objects.filter(pk=r.pk).update(outcome="failed")
        return Done(
            OperationState.FAILED,
            outcomes=failed,
            error="Could not set the throttles: " + ", ".join(sorted(failed)) + ". Nothing was moved.",
            result={"outcome": "failed"},
        )
    return None


def submit(r: Reassignment, rows: list[Row] | None = None) -> None:
    """AlterPartitionReassignments in batches; conflicts are refused per partition, never merged.
    ``rows``: only those pending rows (a paced move's next batch); else every pending row."""
    whole = rows is None
    if rows is None:
        rows = partition_rows(r, [PartitionState.PENDING], original=False)
    if not rows:
        return
    gw = gateway_for(r.cluster)
    updates: dict[tuple[str, str], list[int]] = defaultdict(list)
    others = console_conflicts(r)
    tps = [TopicPartition(x.topic, x.partition) for x in rows]
    # every reassignment in progress, as kafka-reassign-partitions asks (the answer lists only
    # partitions that are moving, where naming 10,000 partitions makes a request of them all)
    listed = gw.list_partition_reassignments()
    todo: list[tuple[TopicPartition, Row]] = []
    for tp, row in zip(tps, rows, strict=True):
        holder = others.get(tp) if others else None
        if holder is not None and holder < r.pk:
            updates[(PartitionState.REFUSED, f"Already being reassigned by reassignment #{holder}")].append(
                row.id
            )
            continue
        found = listed.get(tp) if listed else None
        if found is not None:
            target = [b for b in found.replicas if b not in found.removing]
            if target == list(row.target):
                updates[(PartitionState.MOVING, "")].append(row.id)  # ours, submitted before a crash
            else:
                updates[(PartitionState.REFUSED, "Already being reassigned outside this operation")].append(
                    row.id
                )
            continue
        todo.append((tp, row))
    # Deleted topics and partitions already at their target need no pre-check: Kafka answers
    # UNKNOWN_TOPIC_OR_PARTITION for the first, and the poller's verification marks the second done.
    moving = updates[(PartitionState.MOVING, "")]
    for i in range(0, len(todo), SUBMIT_BATCH):
        batch = todo[i : i + SUBMIT_BATCH]
        results = gw.alter_partition_reassignments({tp: row.target for tp, row in batch})
        for tp, row in batch:
            res = results[tp]
            if isinstance(res, KafkaOperationError):
                state = (
                    PartitionState.REFUSED
                    if res.name == "REASSIGNMENT_IN_PROGRESS"
                    else PartitionState.FAILED
                )
                updates[(state, f"{res.name}: {res.operator_text}")].append(row.id)
            else:
                moving.append(row.id)
        heartbeat(r, text=f"submitted {min(i + SUBMIT_BATCH, len(todo))} of {len(todo)}")
    outcomes = {k: v for k, v in updates.items() if v}
    if whole and len(outcomes) == 1 and sum(map(len, outcomes.values())) == len(rows):
        # Every pending row has the same outcome (the usual case): one UPDATE, not one per 900 ids.
        ((state, message),) = outcomes
        r.partitions.filter(state=PartitionState.PENDING).update(state=state, message=message)
    else:
        set_states(outcomes)


def submit_next(r: Reassignment) -> int:
    """A paced move's next batch: queued partitions that fit under N in flight on every broker they
    add or remove, in queue order, in one AlterPartitionReassignments (none while paused or
    cancelling). The queue is the pending rows, so a restarted worker goes on where it was: a batch
    Kafka accepted before a crash is adopted by ``submit`` (it is moving towards our target)."""
    if not r.paced or r.paused or r.cancel_requested:
        return 0
    queued = partition_rows(r, [PartitionState.PENDING])
    if not queued:
        return 0
    moving = [(x.original, x.target) for x in partition_rows(r, [PartitionState.MOVING])]
    chosen = set(
        pacing.next_batch(
            [pacing.Queued(x.id, x.original, x.target) for x in queued],
            moving,
            r.max_moves_per_broker,
            SUBMIT_BATCH,
        )
    )
    if chosen:
        submit(r, [x for x in queued if x.id in chosen])
    return len(chosen)


def heartbeat(r: Reassignment, *, progress: float | None = None, text: str | None = None) -> None:
    operations.heartbeat(r.operation, progress=progress, text=text)


class ReassignmentGone(Exception):
    """The reassignment row is gone (its cluster was removed before a throttle was recorded)."""


def reassignment_of(ctx) -> Reassignment:
    r = Reassignment.objects.select_related("cluster").filter(operation_id=ctx.op.pk).first()
    if r is None:
        raise ReassignmentGone("the cluster was removed from the console before anything was set on Kafka")
    r.operation = ctx.op
    return r


# The throttle and submit steps hold every partition row of the plan (and Kafka's answers about
# them) at once, objects without reference cycles: the collector is paused meanwhile, as for a
# poll cycle (console.collector).
@collector.paused()
def _throttle_step(ctx) -> Done | None:
    r = reassignment_of(ctx)
    if r.stage != Stage.THROTTLING:
        return None
    failed = _throttle(r)
    if failed is not None:
        return failed
    set_stage(r, Stage.SUBMITTING)
    heartbeat(r, text="throttles set; submitting")
    return None


@collector.paused()
def _submit_step(ctx) -> None:
    r = reassignment_of(ctx)
    if r.stage == Stage.SUBMITTING:
        if r.paced:
            submit_next(r)  # the first batch; the move step submits the rest as others finish
        else:
            submit(r)
        set_stage(r, Stage.MOVING)


def _move_step(ctx):
    r = reassignment_of(ctx)
    # back from lost contact: what this process kept from before (rate, offsets) is stale
    waiting = poll.poll_once(r, fresh=ctx.lost_contact is not None)
    if r.paced:
        # settled partitions give their throttles back; then the next batch (the poll read
        # ``paused`` and ``cancel_requested`` afresh)
        takeback.give_back_settled(r)
        if waiting is not None:
            submit_next(r)
            if r.paused and not r.partitions.filter(state=PartitionState.MOVING).exists():
                return Wait(PAUSED_POLL_S)  # the progress text already says "paused (N queued)"
        else:
            takeback.forget(r)
    return waiting


def _remove_throttles_step(reason: str):
    def step(ctx) -> None:
        finish.remove_owed_throttles(reassignment_of(ctx), reason=reason)

    return step


def _elect_step(ctx) -> None:
    r = reassignment_of(ctx)
    if r.elect_preferred and "election" not in ctx.data:
        ctx.data["election"] = finish.elect(r)


def _finish_step(ctx) -> Done:
    return finish.completed(reassignment_of(ctx), ctx.data.get("election", {}))


def _revert_step(ctx) -> None:
    # kept with the operation until its end: the partitions Kafka restored in another order
    ctx.data.setdefault("reordered", {}).update(finish.revert(reassignment_of(ctx)))


def _cancelled_step(ctx) -> Done:
    return finish.cancelled(reassignment_of(ctx), ctx.data.get("reordered", {}))


def _give_up(ctx, error: str) -> None:
    finish.give_up(reassignment_of(ctx), error)


STEPS = (
    Step("throttle", _throttle_step),
    Step("submit", _submit_step),
    # Kafka moves the partitions whether or not it answers us: an unreachable cluster is "lost
    # contact" (the operation waits, backing off), never an attempt towards giving up.
    Step("move", _move_step, watches_kafka=True),
    # the throttles stay on Kafka until taken back: an unreachable cluster is waited out too
    Step("remove throttles", _remove_throttles_step("completed"), cancellable=False, watches_kafka=True),
    Step("elect", _elect_step, cancellable=False),
    Step("finish", _finish_step, cancellable=False),
)
CANCEL_STEPS = (
    Step("revert", _revert_step),
    Step("remove throttles", _remove_throttles_step("cancelled"), watches_kafka=True),
    Step("finish", _cancelled_step),
)

operations.register(Kind(KIND, STEPS, cancel_steps=CANCEL_STEPS, give_up=_give_up))
