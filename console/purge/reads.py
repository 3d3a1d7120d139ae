"""The dry run of a purge: what Kafka says now about the topic, planned by ``core.plan``.

Reads, in this order: the partitions' log start and high watermark (one Metadata of the topic, one
ListOffsets per leader for each end), for a time the offsets by time (one ListOffsets per leader), the
leader replicas' sizes (one DescribeLogDirs per leader, naming only this topic's partitions), and the
consumer groups with a committed offset on the topic the way the groups area finds a topic's consumers
(one ListGroups per broker, one OffsetFetch per coordinator for all its groups: never each group
asked on its own). A size or groups read that fails leaves those figures unknown, and says so; the
offsets must be read or nothing is planned.
"""

from __future__ import annotations

from console import access
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.models import Cluster
from console.purge import core
from console.purge.core import Plan, Target, TargetError


class PurgeInvalid(ChangeInvalid):
    """The purge is refused as asked (bad input, the confirmation, an internal topic, an offset past
    the end); nothing was sent to Kafka."""


def checked(make, *args) -> Target:
    """A target built by one of ``core``'s constructors, its errors as the area's refusal."""
    try:
        return make(*args)
    except TargetError as exc:
        raise PurgeInvalid(exc.errors) from None


def refuse_internal(cluster: Cluster, topic: str) -> None:
    """Kafka's internal topics are never purged (Kafka itself answers INVALID_TOPIC_EXCEPTION)."""
    meta = gateway_for(cluster).describe_topics([topic])[topic]
    flagged = not isinstance(meta, KafkaOperationError) and bool(getattr(meta, "internal", False))
    if core.is_internal(topic, flagged):
        raise PurgeInvalid([f"'{topic}' is one of Kafka's internal topics: its records are never purged"])


def bounds_of(cluster: Cluster, topic: str) -> dict[int, tuple[int, int]]:
    """Each partition's (log start, high watermark); KafkaOperationError when any cannot be read."""
    got = gateway_for(cluster).partition_bounds(topic)
    for answer in got.values():
        if isinstance(answer, KafkaOperationError):
            raise answer
    return {p: b for p, b in got.items() if not isinstance(b, KafkaOperationError)}


def _committed(cluster: Cluster, topic: str, partitions: list[int]) -> tuple[dict[str, dict[int, int]], str]:
    gw = gateway_for(cluster)
    try:
        listings = gw.list_consumer_groups()
        if not listings:
            return {}, ""
        answers = gw.topic_committed_offsets(topic, partitions, listings)
    except KafkaOperationError as exc:
        return {}, f"the consumer groups could not be read: {exc.name}: {exc.operator_text}"
    failed = sorted(g for g, a in answers.items() if isinstance(a, KafkaOperationError))
    note = f"{len(failed)} group(s) did not answer: {', '.join(failed[:5])}" if failed else ""
    return {g: a for g, a in answers.items() if isinstance(a, dict) and a}, note


def _sizes(cluster: Cluster, topic: str) -> dict[int, int | None]:
    try:
        return gateway_for(cluster).partition_sizes(topic)
    except KafkaOperationError:
        return {}


def plan_for(cluster: Cluster, target: Target) -> Plan:
    """The plan from Kafka's answers now (no permission check: callers check)."""
    bounds = bounds_of(cluster, target.topic)
    time_offsets = None
    if target.mode == core.TIME and target.before_ms is not None:
        asked = [p for p in (target.partitions or tuple(bounds)) if p in bounds]
        got = gateway_for(cluster).offsets_for_time(target.topic, asked, target.before_ms) if asked else {}
        for answer in got.values():
            if isinstance(answer, KafkaOperationError):
                raise answer
        time_offsets = {p: o for p, o in got.items() if not isinstance(o, KafkaOperationError)}
    committed, note = _committed(cluster, target.topic, sorted(bounds))
    plan = core.plan(
        target, bounds, time_offsets=time_offsets, sizes=_sizes(cluster, target.topic), committed=committed
    )
    return Plan(plan.target, plan.partitions, note, plan.problems) if note else plan


def dry_run(*, actor, cluster: Cluster, target: Target) -> Plan:
    """What the purge would do now; nothing is changed. Needs ``topic.manage`` (the purge's own
    permission: the dry run shows what only its operators decide on)."""
    access.require(actor, cluster, access.MANAGE_TOPICS)
    refuse_internal(cluster, target.topic)
    return plan_for(cluster, target)
