"""Worker side of a reassignment: throttles, then submission in batches.

Every step converges when re-entered (after a crash, a redelivery, or a second beat tick):
throttles already in the ledger are re-set, partitions already moving towards our target are
adopted, partitions already at the target are done. The poller is ``reassign_poll.py``;
completion and cancel are ``reassign_finish.py``.
"""

from __future__ import annotations

import logging
from collections import defaultdict

from django.conf import settings

from console.kafka import KafkaOperationError, TopicPartition
from console.models import OperationState
from console.models.reassignment import (
    OPEN_PARTITION_STATES,
    PartitionState,
    Reassignment,
    Stage,
)
from console.reassignment import planner, throttles
from console.reassignment.actions import console_conflicts, gateway_for
from console.reassignment.finish import OUTCOMES_IN_AUDIT, close_rows, complete, finish_cancel
from console.reassignment.poll import POLL_INTERVAL_S, claim_poll, due_reassignments, poll_due, poll_once
from console.reassignment.store import partition_rows, set_stage, set_states
from console.services import operations

# The poller and the end of a run are used through this module by tasks, views and tests.
__all__ = [
    "OUTCOMES_IN_AUDIT",
    "POLL_INTERVAL_S",
    "SUBMIT_BATCH",
    "claim_poll",
    "complete",
    "due_reassignments",
    "finish_cancel",
    "poll_due",
    "poll_once",
    "run_reassignment",
    "submit",
]

log = logging.getLogger(__name__)

SUBMIT_BATCH = settings.REASSIGN_SUBMIT_BATCH  # partitions per AlterPartitionReassignments request


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
            set_stage(r, Stage.SUBMITTING)
            operations.heartbeat(op, text="throttles set; submitting")
        if r.stage == Stage.SUBMITTING:
            submit(r)
            set_stage(r, Stage.MOVING)
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
    rows = partition_rows(r, OPEN_PARTITION_STATES)
    current = {(x.topic, x.partition): tuple(x.original) for x in rows}
    moves = planner.plan_moves(current, {(x.topic, x.partition): tuple(x.target) for x in rows})
    throttles.record_throttles(r, moves)
    outcomes = throttles.apply_throttles(r)
    failed = {k: v for k, v in outcomes.items() if not v.get("ok")}
    if failed:
        throttles.remove_throttles(r, reason="could not set every throttle")
        set_stage(r, Stage.FINISHED)
        close_rows(r, PartitionState.CANCELLED, "not started: the throttles could not be set")
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
    rows = partition_rows(r, [PartitionState.PENDING])
    if not rows:
        return
    gw = gateway_for(r.cluster)
    updates: dict[tuple[str, str], list[int]] = defaultdict(list)
    others = console_conflicts(r)
    listed = gw.list_partition_reassignments([TopicPartition(x.topic, x.partition) for x in rows])
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
    if len(updates) == 1 and sum(map(len, updates.values())) == len(rows):
        # Every pending row has the same outcome (the usual case): one UPDATE, not one per 900 ids.
        ((state, message),) = updates
        r.partitions.filter(state=PartitionState.PENDING).update(state=state, message=message)
    else:
        set_states(updates)
