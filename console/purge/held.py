"""Held purges: the dry run's rows per partition (start, end, new start, what goes, the groups left
below), pinned to each partition's start and new start as the review saw them. Records purged meanwhile
(by anyone, or retention), or records arriving where a whole-topic or by-time purge would reach them,
are drift: the change goes back for a fresh review. Run again after it ran, nothing moves: it converges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import gate
from console.changes.kinds import HeldKind, Indeterminate, Prepared, checked, kafka_text, register, review
from console.formatting import human_bytes
from console.kafka import KafkaOperationError
from console.purge import actions, core, reads

KIND = "change.purge"  # the held kind (stored with the change request)
GATE = gate.declare(actions.GATE, "Record purges", access.MANAGE_TOPICS)
COLUMNS = [
    "partition",
    "start",
    "end",
    "new start",
    "records that go",
    "bytes (estimate)",
    "groups below the new start",
]


def rows(plan: core.Plan) -> list[list[str]]:
    """The review's (and the CLI's) rows of a plan."""
    out = []
    for p in plan.partitions:
        est = p.bytes_estimate
        out.append(
            [
                str(p.partition),
                str(p.start),
                str(p.end),
                str(p.new_start) if not p.problem else p.problem,
                str(p.messages),
                "unknown" if est is None else human_bytes(est),
                ", ".join(f"{g} ({o})" for g, o in p.groups_below),
            ]
        )
    return out


def _review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    target = core.target_from_json(payload["target"])
    try:
        plan = reads.plan_for(cluster, target)
    except KafkaOperationError as exc:
        return review(
            COLUMNS,
            [],
            ok=False,
            kafka=f"the topic's offsets cannot be read: {kafka_text(exc)}",
            pinned=["unreadable"],
        )
    problems = list(plan.problems)
    if not problems and not plan.offsets:
        problems.append("nothing to purge: no partition's start would move")
    kafka = "; ".join(problems) or (
        f"{plan.messages} record(s) go, about {human_bytes(plan.bytes_estimate or 0)} ({core.BYTES_NOTE})"
        + (f"; groups below the new start: {', '.join(plan.groups_below)}" if plan.groups_below else "")
    )
    return review(
        COLUMNS,
        rows(plan),
        ok=not problems,
        kafka=kafka,
        pinned=[target.topic, core.pin(plan)],
        facts=[["purge", target.summary]]
        + ([["consumer groups", plan.groups_note]] if plan.groups_note else []),
    )


def prepare(actor, cluster, target: core.Target, confirmation: str | None) -> Prepared:
    """The purge as it will run, after the typed confirmation, with its dry run."""
    access.require(actor, cluster, access.MANAGE_TOPICS)
    problem = actions.confirmation_problem(target.topic, confirmation)
    if problem:
        raise reads.PurgeInvalid([problem.replace("nothing was purged", "nothing was submitted")])
    reads.refuse_internal(cluster, target.topic)
    payload = {"target": target.as_json()}
    return checked(
        Prepared(
            KIND,
            GATE,
            f"topic:{target.topic}",
            payload,
            _review(actor, cluster, payload),
            f"purge {target.summary}",
        )
    )


def _run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    """A purge run again moves nothing (the starts are already there): it converges."""
    target = core.target_from_json(payload["target"])
    try:
        result = actions.purge_records(
            actor=actor,
            cluster=cluster,
            target=target,
            confirmation=target.topic,  # typed when it was submitted (prepare checked it)
            on_behalf_of=on_behalf_of,
            request_id=request_id,
        )
    except reads.PurgeInvalid as exc:
        return False, str(exc)
    if any(e.retriable for e in result.errors.values()):
        raise Indeterminate(result.message)
    return result.ok, result.message


register(HeldKind(KIND, GATE, prepare, _review, _run))
