"""What needs the operator on a cluster: the overview's "attention" part, from what the console already
read and kept, never a read of Kafka.

- partition problems by topic: the topic area's metadata snapshot the overview's counts come from
  (``topics.cache``; per-topic health as the decoder counted it), under min ISR where the topic's
  ``min.insync.replicas`` is in the snapshot's config cache; the cluster's count under min ISR from the
  last telemetry summary (``ClusterSummary``), with its time;
- brokers down or fenced and the active controller: the overview's kept states (``brokers.overview``);
- the most lagging groups and the brokers' disks: the newest telemetry snapshot (``telemetry.newest``),
  lag marked against the cluster's ``group_lag`` alert threshold;
- running operations, changes waiting for approval (scoped as the requests list scopes them) and the
  console's recent changes (the audit trail, for its readers): the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from console import access
from console.alerts import rules
from console.audit import review
from console.brokers.overview import unhealthy_topics
from console.drift import audit_names as drift_names
from console.models import ChangeRequest, ClusterSummary, Operation
from console.models.operations import FINISHED_STATES
from console.models.requests import RequestState
from console.overview import core
from console.requests import actions as requests
from console.telemetry import newest
from console.topics import cache as metadata_cache

RECENT_CHANGES = 5


@dataclass(frozen=True)
class Lag:
    """The most lagging groups of the newest snapshot, and the threshold the ``group_lag`` rule uses."""

    groups: tuple = ()  # telemetry.newest.GroupLag, most lag first
    threshold: float = 0.0
    as_of: datetime | None = None
    over: int = 0  # groups over the threshold (of all in the snapshot)


@dataclass(frozen=True)
class Quorum:
    """The KRaft quorum as DescribeQuorum answered the overview's read (None fields: not asked)."""

    leader: int | None = None
    epoch: int | None = None
    voters: int = 0
    observers: int = 0
    lagging: tuple = ()  # QuorumReplica of the voters behind by more than the quorum_lag threshold
    threshold: float = 0.0


@dataclass(frozen=True)
class Headroom:
    brokers: tuple = ()  # telemetry.newest.LogDirUse, fullest first
    as_of: datetime | None = None


@dataclass(frozen=True)
class Attention:
    """The overview's "what needs me" part (display values; the template holds no rule)."""

    problems: core.Problems | None = None  # None: no metadata snapshot to count from
    under_min_isr: int | None = None  # the cluster's, from the last telemetry summary
    under_min_isr_topics: tuple = ()  # its topics with the most, ``[name, partitions]``, most first
    summary_at: datetime | None = None
    down: tuple = ()  # BrokerStatus of the nodes down, fenced or missing
    controller_known: bool = True
    quorum: Quorum | None = None  # None: DescribeQuorum was not asked (controller-mode connection)
    lag: Lag = field(default_factory=Lag)
    headroom: Headroom = field(default_factory=Headroom)
    operations: tuple = ()  # Operation rows not finished, newest first
    waiting: tuple = ()  # ChangeRequest rows waiting for approval the actor may see
    changes: tuple | None = None  # the console's recent audit events; None: not an audit reader

    @property
    def needs(self) -> list[str]:
        """What needs attention, one phrase each (empty: the cluster is OK)."""
        found = []
        if self.down:
            found.append(f"{len(self.down)} broker{'s' if len(self.down) > 1 else ''} down or fenced")
        if not self.controller_known:
            found.append("no active controller known")
        if self.quorum and self.quorum.lagging:
            n = len(self.quorum.lagging)
            found.append(f"{n} quorum voter{'s' if n > 1 else ''} behind the leader")
        if self.problems and self.problems.count:
            found.append(
                f"{self.problems.count} topic{'s' if self.problems.count > 1 else ''} with partition problems"
            )
        if self.under_min_isr:
            found.append(
                f"{self.under_min_isr} partition{'s' if self.under_min_isr > 1 else ''} under min ISR"
            )
        if self.lag.over:
            found.append(
                f"{self.lag.over} group{'s' if self.lag.over > 1 else ''} lagging over the alert threshold"
            )
        return found


def _problems(cluster) -> core.Problems | None:
    snap = metadata_cache.peek(cluster)  # the snapshot the overview's counts come from; never a read
    if snap is None:
        return None

    found = unhealthy_topics(snap)
    configs, _ = metadata_cache.cached_configs(snap, [name for name, _ in found])
    return core.problems(found, {name: core.min_isr_of(cfg) for name, cfg in configs.items()})


def _quorum(info, threshold: float) -> Quorum | None:
    if info is None:
        return None
    lagging = core.lagging_voters(info.voters, info.leader_id, threshold)
    return Quorum(
        info.leader_id, info.leader_epoch, len(info.voters), len(info.observers), tuple(lagging), threshold
    )


def _lag(cluster, threshold: float) -> Lag:
    got = newest.newest(cluster.name, "groups")
    over = sum(1 for g in got.rows if g.lag > threshold)
    return Lag(tuple(core.most_lagging(got.rows)), threshold, got.ts, over)


def _waiting(actor, cluster) -> tuple:
    qs = ChangeRequest.objects.filter(cluster=cluster, state=RequestState.PENDING)
    if not requests.may_see_all(actor, cluster):
        qs = qs.filter(requested_by=actor)
    return tuple(qs.order_by("-id")[: core.SHOWN])


def _changes(actor, cluster) -> tuple | None:
    if not access.can(actor, cluster, access.VIEW_AUDIT):
        return None
    events = review.filtered_events(actor=actor, audit_filter=review.AuditFilter(cluster=cluster.name))
    events = events.exclude(action=drift_names.EXTERNAL_CHANGE).order_by("-id")
    fields = ("id", "created_at", "actor_name", "action", "targets", "outcome")
    return tuple(events.values(*fields)[:RECENT_CHANGES])


def attention(*, actor, cluster, overview) -> Attention:
    """What needs the actor on ``cluster``, beside the overview's own figures (``overview``)."""
    access.require(actor, cluster, access.VIEW)
    summary = ClusterSummary.objects.filter(cluster=cluster).first()
    disks = newest.newest(cluster.name, "brokers")
    thresholds = rules.settings_for(cluster)
    running = Operation.objects.filter(cluster=cluster).exclude(state__in=FINISHED_STATES).order_by("-id")
    return Attention(
        problems=None if cluster.controller_mode else _problems(cluster),
        under_min_isr=summary.under_min_isr if summary and summary.reachable else None,
        under_min_isr_topics=tuple(summary.under_min_isr_topics[: core.SHOWN]) if summary else (),
        summary_at=summary.taken_at if summary else None,
        down=overview.down,
        controller_known=overview.active_controller is not None,
        quorum=_quorum(overview.quorum, thresholds["quorum_lag"].threshold),
        lag=Lag() if cluster.controller_mode else _lag(cluster, thresholds["group_lag"].threshold),
        headroom=Headroom(tuple(core.fullest(disks.rows)), disks.ts),
        operations=tuple(running[: core.SHOWN]),
        waiting=_waiting(actor, cluster),
        changes=_changes(actor, cluster),
    )
