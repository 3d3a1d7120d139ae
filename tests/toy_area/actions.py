"""The toy area's actions: read every topic's retention.ms; change one (authorised, held when the
cluster's policy holds it, audited "requested" before Kafka is called and the outcome after)."""

from __future__ import annotations

from console import access
from console.audit import outcomes
from console.changes import gate
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.kafka import ConfigChange, ConfigResource, KafkaOperationError
from console.models import Cluster

AUDIT_SET = "retention.set"  # the area's audit action name
GATE = "retention"  # its policy kind (declared in held.py)
MIN_MS = 60_000


def retention_of(cluster: Cluster, topics: list[str]) -> dict[str, str]:
    """Each topic's retention.ms as Kafka says it now."""
    wanted = [ConfigResource("TOPIC", t) for t in topics]
    described = gateway_for(cluster).describe_configs(wanted) if wanted else {}
    return {r.name: described[r]["retention.ms"].value for r in wanted}


def list_retention(*, actor, cluster: Cluster) -> list[dict[str, str]]:
    """Every non-internal topic with its retention.ms, by name."""
    access.require(actor, cluster, access.VIEW)
    meta = gateway_for(cluster).list_topics_metadata()
    names = sorted(t.name for t in meta.topics if not t.name.startswith("__"))
    return [{"topic": n, "retention_ms": v} for n, v in retention_of(cluster, names).items()]


def check_input(topic: str, retention_ms: int) -> None:
    if not topic:
        raise ChangeInvalid(["name the topic"])
    if retention_ms < MIN_MS:
        raise ChangeInvalid([f"retention.ms must be at least {MIN_MS} (one minute)"])


def set_retention(
    *, actor, cluster: Cluster, topic: str, retention_ms: int, source_ip: str | None = None
) -> tuple[bool, str]:
    """Set a topic's retention.ms; (ok, message)."""
    access.require(actor, cluster, access.MANAGE_CONFIGS)
    check_input(topic, retention_ms)
    gate.check(actor, cluster, GATE)
    target = [f"topic:{topic}"]
    asked = outcomes.requested(
        actor=actor,
        action=AUDIT_SET,
        cluster=cluster,
        targets=target,
        params={"retention.ms": retention_ms},
        source_ip=source_ip,
    )
    resource = ConfigResource("TOPIC", topic)
    change = {resource: [ConfigChange("retention.ms", "SET", str(retention_ms))]}
    answer = gateway_for(cluster).incremental_alter_configs(change)[resource]
    ok = not isinstance(answer, KafkaOperationError)
    message = (
        f"retention.ms of {topic} is {retention_ms}"
        if ok
        else f"Kafka: {answer.name}: {answer.operator_text}"
    )
    outcomes.settle(
        asked,
        targets=target,
        params={"retention.ms": retention_ms},
        outcome="success" if ok else "failed",
        outcomes={target[0]: {"ok": ok, "message": message}},
    )
    return ok, message
