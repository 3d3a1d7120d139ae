"""The health check: an Operation that proves web → queue → worker → database → Kafka end to end."""

from __future__ import annotations

from django.db import connection as db_connection

from console import access
from console.clusters.actions import connection_for
from console.kafka import KafkaOperationError, get_gateway
from console.models import Operation, OperationState
from console.services import operations

KIND = "health.check"
ITEMS = ("queue", "database", "kafka")


def start_health_check(*, actor, cluster, source_ip: str | None = None) -> Operation:
    """Queue a health check of the console's wiring against one cluster."""
    access.require(actor, cluster, access.RUN_OPERATIONS)
    return operations.start_operation(
        actor=actor,
        kind=KIND,
        cluster=cluster,
        params={"cluster": cluster.name},
        items=ITEMS,
        targets=[f"cluster:{cluster.name}"],
        source_ip=source_ip,
    )


def run_health_check(op_id: int, *, worker: str) -> Operation | None:
    """Worker side: each step records its own outcome; the operation fails if any step did."""
    op = operations.claim(op_id, worker)
    if op is None:
        return None
    outcomes: dict[str, dict] = {}

    def step(item: str, ok: bool, message: str, progress: float) -> None:
        state = OperationState.SUCCEEDED if ok else OperationState.FAILED
        operations.set_item(op, item, state=state, progress=1.0, message=message)
        operations.heartbeat(op, progress=progress, text=f"{item}: {message}")
        outcomes[item] = {"ok": ok, "message": message}

    step("queue", True, f"task delivered to worker {worker}", 1 / 3)
    with db_connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        step("database", cursor.fetchone() == (1,), f"{db_connection.vendor} answered", 2 / 3)
    if op.cluster is None:
        step("kafka", False, "the cluster was removed from the registry", 1.0)
    else:
        try:
            info = get_gateway(connection_for(op.cluster)).describe_cluster()
            step("kafka", True, f"cluster {info.cluster_id} answered with {len(info.brokers)} brokers", 1.0)
        except KafkaOperationError as exc:
            step("kafka", False, exc.operator_text, 1.0)
    ok = all(o["ok"] for o in outcomes.values())
    return operations.finish(
        op,
        state=OperationState.SUCCEEDED if ok else OperationState.FAILED,
        result={"checks": outcomes},
        error="" if ok else "; ".join(f"{k}: {v['message']}" for k, v in outcomes.items() if not v["ok"]),
        outcomes=outcomes,
    )
