"""Partition reassignment: read the cluster, preview a plan, start/cancel it, external reassignments.

The worker side is ``reassign_run.py`` (throttles, submission), ``reassign_poll.py`` (the poller)
and ``reassign_finish.py`` (completion, cancel); the
pure planners are ``planner.py``; the throttle ledger is ``throttles.py``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import OuterRef, Subquery

from console import access, collector, operations
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, TopicMetadata, TopicPartition
from console.kafka.deferred import placement
from console.models import Operation
from console.models.reassignment import (
    OPEN_PARTITION_STATES,
    PartitionState,
    Reassignment,
    ReassignmentPartition,
    Stage,
)
from console.reassignment import audit_names, planner, throttles
from console.reassignment import intents as planner_intents
from console.reassignment import pacing as pacing_core
from console.reassignment.store import insert_rows, plan_digest

KIND = "reassignment.execute"
ELECT_KIND = "election.run"
NOT_REVIEWED = (
    "This is not the plan you reviewed: the cluster changed since the dry run. "
    "Run the dry run again, review it, then Start."
)


class PlanRejected(ValueError):
    """A plan with per-partition problems; ``checks`` is the validation table."""

    def __init__(self, message: str, checks: Sequence[planner.PartitionCheck] = ()) -> None:
        super().__init__(message)
        self.checks = list(checks)


@dataclass
class ClusterView:
    """What the planners need from the cluster, read in a few calls."""

    assignment: dict[planner.TP, tuple[int, ...]]
    racks: dict[int, str | None]
    in_progress: dict[planner.TP, object]
    sizes: dict[planner.TP, int] = field(default_factory=dict)
    leaders: dict[planner.TP, int] = field(default_factory=dict)
    balance: object = None  # the balance planner's result, when the plan came from it
    topics: set[str] | None = None  # every topic (``assignment`` may hold only a plan's partitions)


def log_dir_sizes(logs: Mapping[int, object]) -> dict[planner.TP, int]:
    """Largest replica size per partition across the brokers' log dirs (the leader's size)."""
    sizes: dict[planner.TP, int] = {}
    for dirs in logs.values():
        if isinstance(dirs, KafkaOperationError):
            continue
        for d in dirs:
            for tp, info in d.replicas.items():
                if not info.is_future:
                    key = (tp.topic, tp.partition)
                    sizes[key] = max(sizes.get(key, 0), int(info.size))
    return sizes


def read_cluster(
    cluster, *, with_sizes: bool = False, cached: bool = True, only: Iterable[planner.TP] | None = None
) -> ClusterView:
    """Assignment, racks, reassignments in progress (and replica sizes) of the cluster.

    ``only`` limits the assignment and the in-progress list to a plan's partitions. The assignment
    comes from the shared metadata snapshot (at most its TTL old) when it is fresh in this process;
    a plan read without one reads its own topics by name (a 10,000-partition plan on a cluster of
    1M partitions read the whole cluster, ~100 MB and 2 s, for 10 topics); the whole cluster's
    assignment is always the snapshot's. The worker re-checks every partition against Kafka when
    it submits, so a stale row is refused there.
    """
    from console.topics import cache as metadata_cache

    gw = gateway_for(cluster)
    racks = {b.id: b.rack for b in gw.describe_cluster().brokers}
    assignment: dict[planner.TP, tuple[int, ...]] = {}
    leaders: dict[planner.TP, int] = {}
    only = None if only is None else list(only)
    snap = metadata_cache.peek(cluster) if cached else None
    if only is None or snap is not None:
        md = snap or metadata_cache.get_snapshot(cluster, refresh=not cached)
        by_name = {t.name: t for t in md.metadata.topics}
    else:
        by_name = _named_topics(gw, {t for t, _ in only})
    names = set(by_name)
    if only is None:
        for name, topic in by_name.items():
            for p in topic.partitions:
                assignment[(name, p.id)] = p.replicas
                leaders[(name, p.id)] = p.leader
    else:
        # for a plan only its partitions are read out of the answer (placement)
        wanted: dict[str, list[int]] = defaultdict(list)
        for name, pid in only:
            wanted[name].append(pid)
        for name, pids in wanted.items():
            topic = by_name.get(name)
            if topic is None:
                continue
            for pid, (leader, replicas) in placement(topic, pids).items():
                assignment[(name, pid)] = replicas
                leaders[(name, pid)] = leader
    asked = None if only is None else [TopicPartition(t, p) for t, p in only if t in names]
    listed = {} if asked == [] else gw.list_partition_reassignments(asked)
    in_progress = {(tp.topic, tp.partition): r for tp, r in listed.items()}
    sizes = {}
    if with_sizes and asked != []:
        sizes = log_dir_sizes(gw.describe_log_dirs(partitions=asked))
    return ClusterView(assignment, racks, in_progress, sizes, leaders, topics=names)


def _named_topics(gw, names: set[str]) -> dict[str, TopicMetadata]:
    """The named topics that exist (one Metadata of those names); another error than a missing
    topic (not authorised, no answer) is raised: the plan cannot be checked."""
    found = {}
    for name, got in gw.describe_topics(sorted(names)).items():
        if isinstance(got, KafkaOperationError):
            if got.name != "UNKNOWN_TOPIC_OR_PARTITION":
                raise got
            continue
        found[name] = got
    return found


def fresh_view(
    cluster,
    proposed: Mapping[planner.TP, Sequence[int]],
    view: ClusterView | None,
    *,
    with_sizes: bool = False,
) -> ClusterView:
    """The view to validate against; re-read once when the plan names partitions the snapshot lacks."""
    view = view or read_cluster(cluster, with_sizes=with_sizes, only=proposed)
    if any(tp not in view.assignment for tp in proposed):
        view = read_cluster(cluster, with_sizes=with_sizes, cached=False, only=proposed)
    return view


def console_busy(cluster, exclude: int | None = None) -> dict[planner.TP, int]:
    """Partitions an unfinished console reassignment owns: {partition: reassignment id}."""
    rows = ReassignmentPartition.objects.filter(
        reassignment__cluster=cluster,
        state__in=OPEN_PARTITION_STATES,
        reassignment__operation__state__in=("pending", "running"),
    )
    if exclude is not None:
        rows = rows.exclude(reassignment_id=exclude)
    return {(t, p): rid for t, p, rid in rows.values_list("topic", "partition", "reassignment_id")}


def console_conflicts(r: Reassignment) -> dict[planner.TP, int]:
    """Of ``r``'s pending partitions, those another unfinished console reassignment also holds:
    {partition: the lowest such reassignment id}. One query probing the (topic, partition) index
    per pending row, rather than loading every open row of the cluster as ``console_busy`` does;
    none at all when no other console reassignment of the cluster is unfinished (the usual case)."""
    unfinished = Reassignment.objects.filter(
        cluster_id=r.cluster_id, operation__state__in=("pending", "running")
    ).exclude(pk=r.pk)
    if not unfinished.exists():
        return {}
    holder = (
        ReassignmentPartition.objects.filter(
            reassignment__cluster_id=r.cluster_id,
            state__in=OPEN_PARTITION_STATES,
            reassignment__operation__state__in=("pending", "running"),
            topic=OuterRef("topic"),
            partition=OuterRef("partition"),
        )
        .exclude(reassignment_id=r.pk)
        .order_by("reassignment_id")
        .values("reassignment_id")[:1]
    )
    rows = (
        r.partitions.filter(state=PartitionState.PENDING)
        .annotate(holder=Subquery(holder))
        .filter(holder__isnull=False)
        .order_by()
    )
    return {(t, p): rid for t, p, rid in rows.values_list("topic", "partition", "holder")}


@dataclass(frozen=True)
class Preview:
    """The dry run shown before starting: validation table, diff, bytes and time."""

    checks: list[planner.PartitionCheck]
    diff: planner.PlanDiff
    throttle: int | None

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def sha256(self) -> str:
        """The digest of what Start would run (every moving partition's original -> target)."""
        return plan_digest((c.topic, c.partition, c.current, c.target) for c in self.checks if c.moving)

    @property
    def problems(self) -> int:
        return sum(1 for c in self.checks if not c.ok)

    @property
    def estimated_seconds(self) -> float | None:
        return self.diff.estimated_seconds(self.throttle)


def _checks(
    cluster, proposed: Mapping[planner.TP, Sequence[int]], view: ClusterView, *, rf_change: bool
) -> list[planner.PartitionCheck]:
    """Every partition of the plan checked against the view, partitions moving in Kafka or in a
    reassignment of this console counting as busy (the dry run and Start check alike)."""
    busy = set(view.in_progress) | set(console_busy(cluster))
    return planner.validate_plan(
        proposed,
        current=view.assignment,
        racks=view.racks,
        in_progress=busy,
        rf_change=rf_change,
        topics=view.topics,
    )


@collector.paused()  # a plan's rows, checks and the cluster's answers: 10,000s of acyclic objects
def preview_plan(
    cluster,
    proposed: Mapping[planner.TP, Sequence[int]],
    *,
    throttle: int | None = None,
    rf_change: bool = False,
    view: ClusterView | None = None,
) -> Preview:
    """Validate every partition and compute the diff (no change is made)."""
    if not proposed:
        raise PlanRejected("The plan is empty: there is nothing to move.")
    view = fresh_view(cluster, proposed, view, with_sizes=True)
    checks = _checks(cluster, proposed, view, rf_change=rf_change)
    return Preview(checks, planner.plan_diff(proposed, view.assignment, view.sizes), throttle)


def build_plan(
    view: ClusterView,
    *,
    intent: str,
    topics: Iterable[str] = (),
    brokers: Iterable[int] = (),
    replication_factor: int | None = None,
) -> tuple[dict[planner.TP, tuple[int, ...]], bool]:
    """A plan from an operator's intent (move off / spread onto brokers, set RF) and whether RF changes."""
    wanted = set(topics)
    missing = sorted(wanted - {t for t, _ in view.assignment})
    if intent == "balance" and not view.sizes:
        raise PlanRejected("Balancing needs replica sizes; they could not be read (DescribeLogDirs).")
    if missing:
        raise PlanRejected(f"Unknown topic(s): {', '.join(missing)}.")
    selected = [tp for tp in view.assignment if tp[0] in wanted]
    try:
        if intent == "move_off":
            return planner_intents.move_off_brokers(view.assignment, view.racks, brokers, selected), False
        if intent == "spread":
            return planner_intents.spread_onto(view.assignment, view.racks, brokers, selected), False
        if intent == "balance":
            from console.reassignment.balance import balance_plan

            scope = {tp: r for tp, r in view.assignment.items() if not wanted or tp[0] in wanted}
            result = balance_plan(scope, view.sizes, view.racks)
            view.balance = result
            return result.plan, False
        if intent == "rf":
            return planner_intents.set_replication_factor(
                view.assignment, view.racks, int(replication_factor or 0), selected
            ), True
    except ValueError as exc:
        raise PlanRejected(str(exc)) from None
    raise PlanRejected(f"Unknown intent {intent!r}.")


def export_assignment(cluster, topics: Iterable[str]) -> str:
    """The current assignment of the topics as a plan file (the rollback file)."""
    wanted = set(topics)
    view = read_cluster(cluster, cached=False)  # a rollback file must be exact
    return planner.export_plan({tp: r for tp, r in view.assignment.items() if not wanted or tp[0] in wanted})


MOVES_IN_AUDIT = 1000  # larger plans: the event lists the first ones; the digest covers all


@refused_as(
    audit_names.REASSIGNMENT_START,
    PlanRejected,
    throttles.ThrottleError,
    targets=lambda k: sorted({f"topic:{t}" for t, _ in k.get("proposed") or ()}),
)
@collector.paused()  # as preview_plan
def start_reassignment(
    *,
    actor,
    cluster,
    proposed: Mapping[planner.TP, Sequence[int]],
    throttle: int | None,
    elect_preferred: bool = False,
    rf_change: bool = False,
    source_ip: str | None = None,
    view: ClusterView | None = None,
    expected_sha256: str | None = None,
    pacing: pacing_core.Pacing | None = None,
) -> Operation:
    """Validate the plan, then create the Operation, its partition rows and audit event together.

    ``expected_sha256`` (the dry run's ``Preview.sha256``): refused unless the plan to run is the
    one previewed, partition for partition, original and target (a partition moved since: a new
    dry run is needed)."""
    access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    gate.check(actor, cluster, "reassignment")
    throttle = throttles.validate_rate(throttle)
    if not proposed:
        raise PlanRejected("The plan is empty: there is nothing to move.")
    # Start checks Kafka as it is now (as kafka-reassign-partitions re-reads the metadata): the
    # original replicas are what throttles, cancel and the audit trail rely on, and a partition
    # moved since the dry run must fail the digest, not ride on a cached snapshot.
    view = view or read_cluster(cluster, cached=False, only=proposed)
    checks = _checks(cluster, proposed, view, rf_change=rf_change)
    bad = [c for c in checks if not c.ok]
    if bad:
        raise PlanRejected(f"{len(bad)} of {len(checks)} partitions cannot be moved; see the table.", checks)
    moving = [c for c in checks if c.moving]
    if not moving:
        raise PlanRejected("Every partition is already at its target; nothing to move.", checks)
    digest = plan_digest((c.topic, c.partition, c.current, c.target) for c in moving)
    if expected_sha256 is not None and digest != expected_sha256:
        raise PlanRejected(NOT_REVIEWED, checks)
    pacing = checked_pacing(pacing, moving)
    topics = sorted({c.topic for c in moving})
    params = {
        **({"pacing": pacing.as_json()} if not pacing.empty else {}),
        "partitions": len(moving),
        "topics": topics[:50],
        "throttle": throttle,
        "elect_preferred": elect_preferred,
        "rf_change": rf_change,
        # what moves where: every partition's original -> target in the event up to
        # MOVES_IN_AUDIT partitions; always the digest of the plan rows kept with the reassignment
        "plan_sha256": digest,
        "moves": [[c.topic, c.partition, list(c.current), list(c.target)] for c in moving[:MOVES_IN_AUDIT]],
    }
    with transaction.atomic():
        op = operations.start(
            actor=actor,
            kind=KIND,
            cluster=cluster,
            params=params,
            targets=[f"topic:{t}" for t in topics],
            source_ip=source_ip,
        )
        r = Reassignment.objects.create(
            operation=op,
            cluster=cluster,
            throttle_bytes_per_s=throttle,
            leader_throttle_bytes_per_s=pacing.leader,
            follower_throttle_bytes_per_s=pacing.follower,
            broker_throttles={str(b): v for b, v in pacing.brokers.items()},
            max_moves_per_broker=pacing.max_moves,
            elect_preferred=elect_preferred,
            partitions_total=len(moving),
        )
        insert_rows(r, moving)
    return op


def checked_pacing(
    pacing: pacing_core.Pacing | None, moving: Sequence[planner.PartitionCheck]
) -> pacing_core.Pacing:
    """The pacing as asked, every rate within the throttle's limits and every override on a broker
    the move involves; refused (nothing started) otherwise."""
    pacing = pacing or pacing_core.Pacing()
    try:
        for rate in (pacing.leader, pacing.follower, *pacing.brokers.values()):
            throttles.validate_rate(pacing_core.check_rate(rate, "throttle"))
        pacing_core.check_max_moves(pacing.max_moves)
        involved = planner.brokers_involved(
            planner.plan_moves(
                {(c.topic, c.partition): c.current for c in moving},
                {(c.topic, c.partition): c.target for c in moving},
            )
        )
        pacing_core.check_overrides(pacing.brokers, involved)
    except pacing_core.PacingInvalid as exc:
        raise PlanRejected(str(exc)) from None
    return pacing


@refused_as(
    audit_names.REASSIGNMENT_CANCEL,
    PlanRejected,
    targets=lambda k: [f"operation:{k['reassignment'].operation_id}"],
)
def cancel_reassignment(*, actor, reassignment: Reassignment, source_ip: str | None = None) -> None:
    """Ask the runner to switch to the cancel steps: revert the in-flight partitions (KIP-455), then
    take the throttles back. Audited as "reassignment.cancel" (requested); the end as "cancelled"."""
    access.require(actor, reassignment.cluster, access.MANAGE_REASSIGNMENTS)
    with transaction.atomic():
        flagged = operations.request_cancel(
            actor=actor,
            op=reassignment.operation,
            source_ip=source_ip,
            action=audit_names.REASSIGNMENT_CANCEL,
        )
        if not flagged:
            raise PlanRejected("This reassignment has already finished.")
        Reassignment.objects.filter(pk=reassignment.pk).update(cancel_requested=True)


def rollback_plan(r: Reassignment) -> dict[planner.TP, tuple[int, ...]]:
    """After a cancel, the original assignment of the partitions Kafka put back on their brokers in
    another order (their preferred leader may have changed): the exact rollback, to download or to
    start as a new move. Empty when there are none or the operation has not ended."""
    op = r.operation
    reordered = ((op.result or {}).get("reordered") or {}) if op.finished else {}
    plan = {}
    for key, seen in reordered.items():
        topic, _, partition = key.rpartition("-")
        plan[(topic, int(partition))] = tuple(seen["original"])
    return plan


def stage_label(r: Reassignment) -> str:
    if r.cancel_requested and r.stage != Stage.FINISHED:
        return "Cancelling"
    return r.get_stage_display()
