"""Held moves between log dirs: the dry run's rows (broker, replica, dir now -> target, bytes to copy),
pinned to each replica's dir now. A replica that moved meanwhile (or a move that started on it) sends
the change back for a fresh review; run again after it ran, the replicas are already in their dirs
and the check refuses it ("already in ..."): it does not run twice, and a retry of the same change
(``retry``) counts that as done."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import gate
from console.changes.kinds import HeldKind, Prepared, checked, kafka_text, register, review
from console.formatting import human_bytes
from console.kafka import KafkaOperationError
from console.logdirs import actions, core, reads

KIND = "change.logdir_move"  # the held kind (stored with the change request)
GATE = gate.declare(actions.GATE, "Moves between log dirs", access.MANAGE_REASSIGNMENTS)
COLUMNS = ["broker", "replica", "dir now", "target dir", "bytes to copy"]


def rows(plan: reads.DryRun) -> list[list[str]]:
    return [
        [
            str(r.move.broker),
            f"{r.move.topic}-{r.move.partition}",
            r.current or "-",
            r.move.target if not r.problem else r.problem,
            "unknown" if r.size is None else human_bytes(r.size),
        ]
        for r in plan.rows
    ]


def _moves(payload: Mapping[str, Any]) -> list[core.Move]:
    return [core.move_from_json(m) for m in payload["moves"]]


def _review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    moves = _moves(payload)
    try:
        plan = reads.check_moves(cluster, moves)
    except KafkaOperationError as exc:
        return review(
            COLUMNS,
            [],
            ok=False,
            kafka=f"the log dirs cannot be read: {kafka_text(exc)}",
            pinned=["unreadable"],
        )
    problems = plan.problems
    rate = payload.get("throttle")
    kafka = "; ".join(problems) or (
        f"{len(moves)} replica(s) move, {human_bytes(plan.total_bytes)} to copy"
        + (f", throttled to {human_bytes(rate)}/s per broker" if rate else "")
    )
    return review(
        COLUMNS,
        rows(plan),
        ok=not problems,
        kafka=kafka,
        pinned=[[r.move.key, r.current, r.move.target] for r in plan.rows],
        facts=[["throttle", f"{human_bytes(rate)}/s" if rate else "none"]],
    )


def prepare(actor, cluster, moves: list[core.Move], throttle: int | None = None) -> Prepared:
    """The moves as they will run, with their dry run."""
    access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    problem = actions.throttle_problem(throttle)
    if problem:
        raise reads.LogDirInvalid([problem])
    if not moves:
        raise reads.LogDirInvalid(["Nothing to move."])
    payload = {"moves": [m.as_json() for m in moves], "throttle": throttle}
    brokers = sorted({m.broker for m in moves})
    return checked(
        Prepared(
            KIND,
            GATE,
            "broker:" + ",".join(map(str, brokers)),
            payload,
            _review(actor, cluster, payload),
            f"move {len(moves)} replica(s) between the log dirs of broker(s) {', '.join(map(str, brokers))}",
        )
    )


def _run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    try:
        op = actions.move_replicas(
            actor=actor,
            cluster=cluster,
            moves=_moves(payload),
            throttle=payload.get("throttle"),
            on_behalf_of=on_behalf_of,
            request_id=request_id,
        )
    except reads.LogDirInvalid as exc:
        if retry and _all_there(cluster, payload):
            return True, "already started or done: every replica is in (or moving to) its target dir"
        return False, str(exc)
    return True, f"move between log dirs started (operation #{op.pk})"


def _all_there(cluster, payload) -> bool:
    """A run again after the move started (an operation of the console with these very moves, not
    failed) or ended (every replica in its target dir) converges."""
    from console.models import Operation, OperationState

    wanted = sorted(payload["moves"], key=lambda m: (m["topic"], m["partition"], m["broker"]))
    ops = Operation.objects.filter(cluster=cluster, kind=actions.KIND).exclude(
        state__in=(OperationState.FAILED, OperationState.ERRORED, OperationState.CANCELLED)
    )
    for op in ops.order_by("-id")[:50]:
        if (
            sorted(op.params.get("moves", []), key=lambda m: (m["topic"], m["partition"], m["broker"]))
            == wanted
        ):
            return True
    rows = reads.check_moves(cluster, _moves(payload)).rows
    return all(r.current == r.move.target for r in rows)


register(HeldKind(KIND, GATE, prepare, _review, _run))
