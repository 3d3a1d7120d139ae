"""The fleet home's rows: every cluster the actor may see, from its summary row (``summary``) and the
console's own tables, never a read of Kafka. Three queries whatever the number of clusters: the
clusters with their summaries, the running operations per cluster, the changes waiting for approval
per cluster (and one for the actor's roles, to scope the last as the review queue does).

Open alerts are not a column yet (they come with the alerting issue).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q
from django.utils import timezone

from console import access
from console.models import ChangeRequest, Cluster, Operation, RoleBinding
from console.models.operations import FINISHED_STATES
from console.models.requests import RequestState
from console.telemetry import summary

# States a row can be filtered by (and sorted on, worst first).
UNREACHABLE, UNHEALTHY, NEVER, HEALTHY = "unreachable", "unhealthy", "never", "healthy"
STATES = {
    UNREACHABLE: "Unreachable at the last look",
    UNHEALTHY: "Under-replicated, offline or under min ISR partitions",
    NEVER: "Never snapshotted",
    HEALTHY: "Healthy",
}
_STATE_ORDER = {UNREACHABLE: 0, UNHEALTHY: 1, NEVER: 2, HEALTHY: 3}


@dataclass(frozen=True)
class FleetRow:
    """One cluster on the fleet home (the API and ``manage.py kafka fleet`` show the same)."""

    name: str
    description: str
    controller_mode: bool
    state: str
    taken_at: datetime | None  # when the figures were taken; None: never snapshotted
    reachable: bool | None
    error: str
    kafka_version: str
    metadata_version: str
    controller_id: int | None
    brokers_up: int | None
    brokers_total: int | None
    topics: int | None
    partitions: int | None
    under_replicated: int | None
    offline: int | None
    under_min_isr: int | None
    consumer_groups: int | None
    running_operations: int
    held_changes: int


def _figure(field: str):
    return lambda r: getattr(r, field)


#: The fleet's columns in the page's order: (sort key, header, how a row sorts by it). A row without
#: the figure sorts last whichever the direction (its key answers None).
COLUMNS = (
    ("name", "Cluster", lambda r: r.name.lower()),
    ("state", "State", lambda r: _STATE_ORDER[r.state]),
    ("kafka_version", "Kafka", lambda r: summary.version_key(r.kafka_version) or None),
    ("metadata_version", "metadata.version", lambda r: summary.version_key(r.metadata_version) or None),
    ("controller", "Controller", _figure("controller_id")),
    ("brokers", "Brokers up", lambda r: None if r.brokers_total is None else (r.brokers_up, r.brokers_total)),
    ("topics", "Topics", _figure("topics")),
    ("partitions", "Partitions", _figure("partitions")),
    ("under_replicated", "Under-replicated", _figure("under_replicated")),
    ("offline", "Offline", _figure("offline")),
    ("under_min_isr", "Under min ISR", _figure("under_min_isr")),
    ("consumer_groups", "Groups", _figure("consumer_groups")),
    ("running_operations", "Running ops", _figure("running_operations")),
    ("held_changes", "Held changes", _figure("held_changes")),
    ("taken_at", "As of", _figure("taken_at")),
)
SORTS = {key: sort for key, _, sort in COLUMNS}


def _state(summary) -> str:
    if summary is None:
        return NEVER
    if not summary.reachable:
        return UNREACHABLE
    if summary.under_replicated or summary.offline or summary.under_min_isr:
        return UNHEALTHY
    return HEALTHY


def _clusters(actor):
    """The clusters the actor may see (the system actor, reading for the command line: all)."""
    return Cluster.objects.all() if access.is_system(actor) else access.visible_clusters(actor)


def _sees_every_request(actor, ids: Iterable[int]) -> set[int]:
    """The clusters where the actor sees everyone's requests (approvers and auditors, as the review
    queue scopes them): one query over the actor's bindings."""
    if access.is_system(actor) or (actor.is_superuser and actor.is_active):
        return set(ids)
    wide = {
        role
        for role, perms in access.ROLE_PERMISSIONS.items()
        if access.APPROVE in perms or access.VIEW_AUDIT in perms
    }
    bindings = RoleBinding.objects.filter(Q(user=actor) | Q(group__in=actor.groups.all()), role__in=wide)
    return set(bindings.filter(cluster_id__in=ids).values_list("cluster_id", flat=True))


def _per_cluster(queryset) -> dict[int, int]:
    """How many rows of ``queryset`` each cluster has (one GROUP BY)."""
    return dict(
        queryset.order_by().values("cluster_id").annotate(n=Count("id")).values_list("cluster_id", "n")
    )


_COUNTS = ("topics", "partitions", "under_replicated", "offline", "under_min_isr", "consumer_groups")


def _row(cluster: Cluster, summary, running: int, held: int) -> FleetRow:
    """A cluster's row. The figures are shown once a look at Kafka found some (a cluster never
    reached has none, not zeros); a controller-mode connection has no partition figures."""
    base = {
        "name": cluster.name,
        "description": cluster.description,
        "controller_mode": cluster.controller_mode,
        "state": _state(summary),
        "running_operations": running,
        "held_changes": held,
    }
    if summary is None:
        empty = dict.fromkeys(("taken_at", "reachable", "controller_id", "brokers_up", "brokers_total"))
        return FleetRow(
            **base, **empty, **dict.fromkeys(_COUNTS), error="", kafka_version="", metadata_version=""
        )
    figures = summary.reachable or summary.brokers_total > 0
    partitions = figures and not cluster.controller_mode
    return FleetRow(
        **base,
        taken_at=summary.taken_at,
        reachable=summary.reachable,
        error=summary.error,
        kafka_version=summary.kafka_version,
        metadata_version=summary.metadata_version,
        controller_id=summary.controller_id,
        brokers_up=summary.brokers_up if figures else None,
        brokers_total=summary.brokers_total if figures else None,
        **{c: getattr(summary, c) if partitions else None for c in _COUNTS},
    )


def fleet(
    actor, *, sort: str = "name", descending: bool = False, text: str = "", state: str = ""
) -> list[FleetRow]:
    """Every cluster the actor may see, as the fleet home lists them: ``text`` found in the name or
    the description (any case), ``state`` one of ``STATES``, sorted by ``sort`` (a key of ``SORTS``;
    clusters without the figure last either way, then by name)."""
    clusters = _clusters(actor).select_related("summary")
    if text:
        clusters = clusters.filter(Q(name__icontains=text) | Q(description__icontains=text))
    clusters = list(clusters)
    ids = [c.pk for c in clusters]
    running = _per_cluster(Operation.objects.filter(cluster_id__in=ids).exclude(state__in=FINISHED_STATES))
    wide = _sees_every_request(actor, ids)
    waiting = ChangeRequest.objects.filter(cluster_id__in=ids, state=RequestState.PENDING).filter(
        Q(cluster_id__in=wide) | Q(requested_by=actor)
    )
    held = _per_cluster(waiting)
    rows = [_row(c, getattr(c, "summary", None), running.get(c.pk, 0), held.get(c.pk, 0)) for c in clusters]
    if state:
        rows = [r for r in rows if r.state == state]
    key = SORTS.get(sort, SORTS["name"])
    rows.sort(key=lambda r: r.name.lower())
    known = [r for r in rows if key(r) is not None]
    known.sort(key=key, reverse=descending)  # stable: equal figures stay by name
    return known + [r for r in rows if key(r) is None]


def as_of(row: FleetRow, now: datetime | None = None) -> float | None:
    """How old the row's figures are, in seconds (None: never snapshotted)."""
    if row.taken_at is None:
        return None
    return max(0.0, ((now or timezone.now()) - row.taken_at).total_seconds())
