"""Start a move between the log dirs of one broker: the ``logdir.move`` Operation.

Kafka authorises AlterReplicaLogDirs as ALTER on the cluster; the console asks ``reassignment.manage``
of the actor (the permission of every replica move), then change control (``logdir.move``), checks
every move against what its broker reports now (``reads.check_moves``: unknown dir, replica not on
that broker, already in that dir, offline dir, a move already running) and refuses the whole plan
when any is wrong - nothing is sent. A broker that another console move between dirs is working on
is refused too: a throttle is recorded and taken back per broker, and two moves must not take back
each other's. Then the Operation and its ``logdir.move.requested`` event are written together and
the worker runs it (``worker.py``): throttle, AlterReplicaLogDirs, watch, throttle back, finish.
"""

from __future__ import annotations

from django.db import transaction

from console import access, operations
from console.audit.refusals import refused_as
from console.changes import gate
from console.logdirs import audit_names, reads
from console.logdirs.core import Move
from console.logdirs.reads import LogDirInvalid
from console.models import Cluster, Operation, OperationState

GATE = "logdir.move"  # the policy kind (declared in held.py)
KIND = audit_names.KIND
IO_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
MIN_RATE = 1024  # bytes/s: a lower throttle would stall a move for days


def throttle_problem(rate) -> str:
    if rate is None:
        return ""
    if isinstance(rate, bool) or not isinstance(rate, int) or rate < MIN_RATE:
        return f"The throttle is a whole number of bytes per second, at least {MIN_RATE} (got {rate!r})."
    return ""


def busy_brokers(cluster: Cluster, brokers: set[int]) -> dict[int, int]:
    """{broker: operation id} of the brokers an unfinished console move between dirs works on."""
    out: dict[int, int] = {}
    active = Operation.objects.filter(
        cluster=cluster, kind=KIND, state__in=(OperationState.PENDING, OperationState.RUNNING)
    ).only("id", "params")
    for op in active:
        for m in op.params.get("moves", []):
            if m.get("broker") in brokers:
                out.setdefault(m["broker"], op.pk)
    return out


def _targets(kwargs) -> list[str]:
    return [f"replica:{m.key}" for m in kwargs.get("moves") or [] if isinstance(m, Move)]


def check(cluster: Cluster, moves: list[Move], throttle) -> reads.DryRun:
    """The checks a move must pass (the dry run and Start use this one function); LogDirInvalid."""
    problem = throttle_problem(throttle)
    if problem:
        raise LogDirInvalid([problem])
    if not moves:
        raise LogDirInvalid(["Nothing to move."])
    busy = busy_brokers(cluster, {m.broker for m in moves})
    if busy:
        raise LogDirInvalid(
            [
                f"broker {b} is already moving replicas between its dirs (operation #{op}); wait for it to end"
                for b, op in sorted(busy.items())
            ]
        )
    plan = reads.check_moves(cluster, moves)
    if plan.problems:
        raise LogDirInvalid(plan.problems)
    return plan


@refused_as(audit_names.KIND, LogDirInvalid, targets=_targets)
def move_replicas(
    *,
    actor,
    cluster: Cluster,
    moves: list[Move],
    throttle: int | None = None,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> Operation:
    """Start the moves (LogDirInvalid before anything reaches Kafka); the Operation that runs them."""
    access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    gate.check(actor, cluster, GATE)
    plan = check(cluster, moves, throttle)
    params = {
        "moves": [m.as_json() for m in moves],
        "throttle": throttle,
        "request_id": request_id,
    }
    with transaction.atomic():
        return operations.start(
            actor=actor,
            kind=KIND,
            cluster=cluster,
            params=params,
            items=[m.key for m in moves],
            targets=[f"replica:{m.key}" for m in moves][:500],
            source_ip=source_ip,
            on_behalf_of=on_behalf_of,
            audit_details={
                "from": {r.move.key: r.current for r in plan.rows},
                "bytes_to_copy": plan.total_bytes,
            },
        )


def cancel(*, actor, op: Operation, source_ip: str | None = None) -> bool:
    """Ask a running move to stop: the future replicas are dropped (each replica stays where it was)
    and the throttle is taken back. False when it had already ended."""
    access.require(actor, op.cluster, access.MANAGE_REASSIGNMENTS)
    return operations.request_cancel(actor=actor, op=op, source_ip=source_ip)


def get_move(*, actor, cluster: Cluster, op_id: int) -> Operation:
    """A move of this cluster (Operation.DoesNotExist otherwise). Needs ``cluster.view``."""
    access.require(actor, cluster, access.VIEW)
    return Operation.objects.get(pk=op_id, cluster=cluster, kind=KIND)
