"""Held aborts: the partition's open transactions as the review saw them (producer id, epoch, start
offset, coordinator epoch, last timestamp), pinned to that set. A transaction that ended meanwhile (its
coordinator or anyone closed it) or a new one opened is drift: the change goes back for a fresh
review. Run again after it ran, the transaction is no longer open: it converges."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import gate
from console.changes.kinds import HeldKind, Indeterminate, Prepared, checked, kafka_text, register, review
from console.kafka import KafkaOperationError
from console.transactions import actions, core, reads

KIND = "change.txn_abort"  # the held kind (stored with the change request)
GATE = gate.declare(actions.GATE, "Transaction aborts", access.ADMINISTER)
COLUMNS = [
    "producer id",
    "epoch",
    "coordinator epoch",
    "start offset",
    "last timestamp",
    "open (min)",
    "aborted",
]


def _review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    topic, partition, start = payload["topic"], int(payload["partition"]), int(payload["start_offset"])
    try:
        states = reads.producers_of(cluster, topic, partition)
    except KafkaOperationError as exc:
        return review(
            COLUMNS, [], ok=False, kafka=f"the partition's producers cannot be read: {kafka_text(exc)}",
            pinned=["unreadable"],
        )  # fmt: skip
    now = int(time.time() * 1000)
    rows = [
        [
            str(s.producer_id),
            str(s.producer_epoch),
            str(s.coordinator_epoch),
            str(s.txn_start_offset),
            str(s.last_timestamp),
            str(max(0, now - s.last_timestamp) // 60_000),
            "yes" if s.txn_start_offset == start else "",
        ]
        for s in states
        if s.txn_start_offset >= 0
    ]
    found = core.abort_spec(topic, partition, start, states)
    ok = not isinstance(found, str)
    kafka = (
        found
        if isinstance(found, str)
        else f"an ABORT marker for producer {found.producer_id} (epoch {found.producer_epoch}, coordinator "
        f"epoch {found.coordinator_epoch}) goes to the leader of {topic}-{partition}"
    )
    return review(
        COLUMNS,
        rows,
        ok=ok,
        kafka=kafka,
        pinned=[f"{topic}-{partition}", core.pin(states)],
        facts=[["abort", f"the open transaction at offset {start} of {topic}-{partition}"]],
    )


def prepare(actor, cluster, topic, partition, start_offset, confirmation: str | None) -> Prepared:
    """The abort as it will run, after the typed confirmation, with the partition's open transactions."""
    access.require(actor, cluster, access.ADMINISTER)
    topic, partition, start = reads.checked(core.check_partition_target, topic, partition, start_offset)
    problem = actions.confirmation_problem(topic, partition, confirmation)
    if problem:
        raise reads.TxnInvalid([problem.replace("nothing was aborted", "nothing was submitted")])
    payload = {"topic": topic, "partition": partition, "start_offset": start}
    return checked(
        Prepared(
            KIND,
            GATE,
            f"partition:{topic}-{partition}",
            payload,
            _review(actor, cluster, payload),
            f"abort the transaction at offset {start} of {topic}-{partition}",
        )
    )


def _run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    """Run again after it ran, no transaction starts there any more: success (it converges)."""
    topic, partition, start = payload["topic"], int(payload["partition"]), int(payload["start_offset"])
    try:
        result = actions.abort_transaction(
            actor=actor,
            cluster=cluster,
            topic=topic,
            partition=partition,
            start_offset=start,
            confirmation=f"{topic}-{partition}",  # typed when it was submitted (prepare checked it)
            on_behalf_of=on_behalf_of,
            request_id=request_id,
        )
    except reads.TxnInvalid as exc:
        if retry:
            return (
                True,
                f"No open transaction starts at offset {start} on {topic}-{partition}: already aborted.",
            )
        return False, str(exc)
    if result.error is not None and result.error.retriable:
        raise Indeterminate(result.message)
    return result.ok, result.message


register(HeldKind(KIND, GATE, prepare, _review, _run))
