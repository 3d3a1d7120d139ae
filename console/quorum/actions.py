"""The KRaft metadata quorum as the quorum page shows it (both connection modes).

Reads only: DescribeQuorum (leader, epoch, high watermark, voters, observers, and in v2 every
controller's endpoints), ApiVersions (finalized features) and, in controller mode, DescribeCluster
when DescribeQuorum named no endpoints or the active controller stopped answering. Each read
fails on its own: a quorum that answers while the features do not still shows the quorum,
with the features' error beside it.

``classify`` and ``endpoint_rows`` are pure so the highlighting rules are tested without Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings

from console import access
from console.clusters.actions import gateway_for
from console.kafka import (
    ClusterInfo,
    FeatureInfo,
    KafkaOperationError,
    QuorumInfo,
    QuorumReplica,
)

#: A voter this many records behind the high watermark is highlighted as lagging.
DEFAULT_LAG_WARN_RECORDS = 100
#: ... or one that last caught up this long before the freshest voter did.
DEFAULT_CAUGHT_UP_WARN_MS = 5000


def lag_limits() -> tuple[int, int]:
    """(records, milliseconds) beyond which a replica counts as lagging (settings may override)."""
    return (
        int(settings.QUORUM_LAG_WARN_RECORDS),
        int(settings.QUORUM_CAUGHT_UP_WARN_MS),
    )


def _when(ms: int | None) -> str:
    if ms is None:
        return "—"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _behind(ms: int | None, reference: int | None) -> str:
    if ms is None or reference is None:
        return "never" if ms is None else ""
    delta = max(0, reference - ms)
    return "current" if delta < 1000 else f"{delta / 1000:.1f} s behind"


@dataclass(frozen=True)
class ReplicaRow:
    """A voter or observer of the metadata log, ready to display."""

    id: int
    role: str  # "voter" or "observer"
    log_end_offset: int
    lag: int
    last_fetch: str
    last_fetch_behind: str
    last_caught_up: str
    last_caught_up_behind: str
    is_leader: bool
    lagging: bool
    lag_reason: str = ""


@dataclass(frozen=True)
class EndpointRow:
    """A controller: its listeners, whether it is the active controller, whether it votes."""

    id: int
    endpoints: tuple[str, ...]
    active: bool
    voter: bool


def classify(
    info: QuorumInfo, lag_records: int, caught_up_ms: int
) -> tuple[list[ReplicaRow], list[ReplicaRow]]:
    """Voter and observer rows with the lagging flag (pure).

    Timestamps are compared with the freshest one in the same answer, not with this machine's
    clock, so a skewed console clock (or the sandbox's virtual clock) cannot flag everyone.
    """
    voter_stamps = [r.last_caught_up_timestamp for r in info.voters if r.last_caught_up_timestamp is not None]
    fetch_stamps = [
        r.last_fetch_timestamp for r in (*info.voters, *info.observers) if r.last_fetch_timestamp is not None
    ]
    caught_ref = max(voter_stamps) if voter_stamps else None
    fetch_ref = max(fetch_stamps) if fetch_stamps else None

    def row(r: QuorumReplica, role: str) -> ReplicaRow:
        reasons = []
        if r.lag > lag_records:
            reasons.append(f"{r.lag:,} records behind the high watermark")
        if (
            role == "voter"
            and r.id != info.leader_id
            and caught_ref is not None
            and (r.last_caught_up_timestamp is None or caught_ref - r.last_caught_up_timestamp > caught_up_ms)
        ):
            reasons.append("not caught up recently")
        return ReplicaRow(
            id=r.id,
            role=role,
            log_end_offset=r.log_end_offset,
            lag=r.lag,
            last_fetch=_when(r.last_fetch_timestamp),
            last_fetch_behind=_behind(r.last_fetch_timestamp, fetch_ref),
            last_caught_up=_when(r.last_caught_up_timestamp),
            last_caught_up_behind=_behind(r.last_caught_up_timestamp, caught_ref),
            is_leader=r.id == info.leader_id,
            lagging=bool(reasons),
            lag_reason="; ".join(reasons),
        )

    voters = sorted((row(r, "voter") for r in info.voters), key=lambda x: x.id)
    observers = sorted((row(r, "observer") for r in info.observers), key=lambda x: x.id)
    return voters, observers


def endpoint_rows(quorum: QuorumInfo | None, controllers: ClusterInfo | None) -> list[EndpointRow]:
    """Controllers from DescribeCluster (controller mode) merged with DescribeQuorum v2's nodes."""
    voters = {v.id for v in quorum.voters} if quorum else set()
    active = controllers.controller_id if controllers is not None else None
    if active is None and quorum is not None and quorum.leader_id >= 0:
        active = quorum.leader_id
    listeners: dict[int, tuple[str, ...]] = dict(quorum.nodes) if quorum else {}
    if controllers is not None:
        for c in controllers.brokers:
            address = f"{c.host}:{c.port}"
            known = listeners.get(c.id, ())
            listeners[c.id] = known if address in known else (address, *known)
    ids = sorted(set(listeners) | voters)
    return [EndpointRow(i, listeners.get(i, ()), i == active, i in voters) for i in ids]


@dataclass(frozen=True)
class QuorumView:
    """Everything on the quorum page; each part carries its own error (None when it was read)."""

    cluster: object
    controller_mode: bool
    quorum: QuorumInfo | None = None
    quorum_error: KafkaOperationError | None = None
    voters: list[ReplicaRow] = field(default_factory=list)
    observers: list[ReplicaRow] = field(default_factory=list)
    endpoints: list[EndpointRow] = field(default_factory=list)
    controllers_error: KafkaOperationError | None = None
    features: list[FeatureInfo] = field(default_factory=list)
    features_error: KafkaOperationError | None = None
    lag_records: int = DEFAULT_LAG_WARN_RECORDS
    caught_up_ms: int = DEFAULT_CAUGHT_UP_WARN_MS

    @property
    def leader_missing(self) -> bool:
        return self.quorum is not None and self.quorum.leader_id < 0

    @property
    def lagging_voters(self) -> list[int]:
        return [v.id for v in self.voters if v.lagging]

    @property
    def finalized_features(self) -> list[FeatureInfo]:
        return [f for f in self.features if f.finalized_max is not None]


_UNREACHABLE = frozenset({"NETWORK_EXCEPTION", "REQUEST_TIMED_OUT"})
_MOVED = frozenset({"NOT_LEADER_OR_FOLLOWER", "NOT_CONTROLLER"})


def describe_quorum(*, actor, cluster) -> QuorumView:
    """Read the quorum, the controllers and the features; never raises for Kafka trouble."""
    access.require(actor, cluster, access.VIEW)
    gateway = gateway_for(cluster)
    lag_records, caught_up_ms = lag_limits()
    parts: dict = {"lag_records": lag_records, "caught_up_ms": caught_up_ms}
    quorum = controllers = None
    try:
        quorum = gateway.describe_quorum()
    except KafkaOperationError as exc:
        parts["quorum_error"] = exc
        if cluster.controller_mode and exc.name in _UNREACHABLE | _MOVED:
            # The active controller may have stopped or lost the leadership. The gateway re-learns
            # it through DescribeCluster (by itself only on a top-level NOT_CONTROLLER).
            try:
                controllers = gateway.describe_cluster()
                quorum = gateway.describe_quorum()
                del parts["quorum_error"]
            except KafkaOperationError as retry_exc:
                parts["quorum_error"] = retry_exc
    if quorum is not None:
        parts["quorum"] = quorum
        parts["voters"], parts["observers"] = classify(quorum, lag_records, caught_up_ms)
    elif parts["quorum_error"].name in _UNREACHABLE:
        # The other reads would wait out the same timeout: report the one failure.
        return QuorumView(cluster=cluster, controller_mode=cluster.controller_mode, **parts)
    if cluster.controller_mode and controllers is None and not (quorum and quorum.nodes):
        # DescribeQuorum v2 names every controller's endpoints; ask DescribeCluster only when it
        # did not (a bootstrap controller that is down costs a timeout on every DescribeCluster).
        try:
            controllers = gateway.describe_cluster()
        except KafkaOperationError as exc:
            parts["controllers_error"] = exc
    if quorum is not None or controllers is not None:
        parts["endpoints"] = endpoint_rows(quorum, controllers)
    try:
        parts["features"] = sorted(gateway.describe_features().values(), key=lambda f: f.name)
    except KafkaOperationError as exc:
        parts["features_error"] = exc
    return QuorumView(cluster=cluster, controller_mode=cluster.controller_mode, **parts)
