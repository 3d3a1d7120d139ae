"""The health check: an Operation that proves web → queue → worker → database → Kafka end to end."""

from __future__ import annotations

from django.db import connection as db_connection

from console import access, operations
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.models import Operation, OperationState
from console.operations import Done, Kind, Step

KIND = "health.check"
ITEMS = ("queue", "database", "kafka")


def start_health_check(*, actor, cluster, source_ip: str | None = None) -> Operation:
    """Queue a health check of the console's wiring against one cluster."""
    access.require(actor, cluster, access.RUN_OPERATIONS)
    return operations.start(
        actor=actor,
        kind=KIND,
        cluster=cluster,
        params={"cluster": cluster.name},
        items=ITEMS,
        targets=[f"cluster:{cluster.name}"],
        source_ip=source_ip,
    )


def _check(ctx, item: str, ok: bool, message: str) -> None:
    state = OperationState.SUCCEEDED if ok else OperationState.FAILED
    ctx.set_item(item, state=state, progress=1.0, message=message)
    ctx.data.setdefault("checks", {})[item] = {"ok": ok, "message": message}
    ctx.heartbeat(progress=len(ctx.data["checks"]) / len(ITEMS), text=f"{item}: {message}")


def _queue(ctx) -> None:
    _check(ctx, "queue", True, f"task delivered to worker {ctx.worker}")


def _database(ctx) -> None:
    with db_connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        _check(ctx, "database", cursor.fetchone() == (1,), f"{db_connection.vendor} answered")


def _kafka(ctx) -> None:
    if ctx.op.cluster is None:
        return _check(ctx, "kafka", False, "the cluster was removed from the registry")
    try:
        info = gateway_for(ctx.op.cluster).describe_cluster()
        _check(ctx, "kafka", True, f"cluster {info.cluster_id} answered with {len(info.brokers)} brokers")
    except KafkaOperationError as exc:  # what the check is for: report it, don't retry it
        _check(ctx, "kafka", False, exc.operator_text)


def _report(ctx) -> Done:
    checks = ctx.data["checks"]
    ok = all(c["ok"] for c in checks.values())
    return Done(
        OperationState.SUCCEEDED if ok else OperationState.FAILED,
        result={"checks": checks},
        outcomes=checks,
        error="" if ok else "; ".join(f"{k}: {v['message']}" for k, v in checks.items() if not v["ok"]),
    )


operations.register(
    Kind(
        KIND,
        (Step("queue", _queue), Step("database", _database), Step("kafka", _kafka), Step("report", _report)),
    )
)
