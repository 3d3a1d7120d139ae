"""The fleet home's rows: every cluster the actor may see, from its summary row (written by
``telemetry.summary``) and the console's own tables, never a read of Kafka. Two queries whatever the
number of clusters: the actor's bindings (to scope the changes waiting for approval as the review
queue does), then the clusters with their summaries joined and, as subqueries, their running
operations, changes waiting for approval and open alerts (``alerts.reads.open_count_columns``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from console import access
from console.alerts import reads as alert_reads
from console.models import ChangeRequest, Cluster, Operation, RoleBinding
from console.models.operations import FINISHED_STATES
from console.models.requests import RequestState
from console.telemetry import summary

# States a row can be filtered by (and sorted on, worst first). Unhealthy: under-replicated, offline
# or under-min-ISR partitions; unreachable: Kafka did not answer the last look.
UNREACHABLE, UNHEALTHY, NEVER, HEALTHY = "unreachable", "unhealthy", "never", "healthy"
STATES = {
    UNREACHABLE: "unreachable",
    UNHEALTHY: "unhealthy",
    NEVER: "never snapshotted",
    HEALTHY: "healthy",
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
    open_alerts: int
    alert_severity: str  # the highest severity of the open alerts ("" when none)


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
    ("open_alerts", "Open alerts", lambda r: (r.alert_severity == "critical", r.open_alerts)),
    ("taken_at", "As of", _figure("taken_at")),
)
SORTS = {key: sort for key, _, sort in COLUMNS}


def _state(summary: dict) -> str:
    """A summary's state (its fields as the clusters' query reads them)."""
    if not summary["reachable"]:
        return UNREACHABLE
    if summary["under_replicated"] or summary["offline"] or summary["under_min_isr"]:
        return UNHEALTHY
    return HEALTHY


def _clusters(actor):
    """The clusters the actor may see (the system actor, reading for the command line: all)."""
    return Cluster.objects.all() if access.is_system(actor) else access.visible_clusters(actor)


def _sees_every_request(actor) -> set[int] | None:
    """The clusters where the actor sees everyone's requests (approvers and auditors, as the review
    queue scopes them), from one query over the actor's bindings; None: every cluster."""
    if access.is_system(actor) or (actor.is_superuser and actor.is_active):
        return None
    wide = {
        role
        for role, perms in access.ROLE_PERMISSIONS.items()
        if access.APPROVE in perms or access.VIEW_AUDIT in perms
    }
    bindings = RoleBinding.objects.filter(Q(user=actor) | Q(group__in=actor.groups.all()), role__in=wide)
    return set(bindings.values_list("cluster_id", flat=True))


def _count(queryset) -> Coalesce:
    """How many rows of ``queryset`` (filtered on ``cluster_id=OuterRef("pk")``) the cluster has, as
    a subquery of the clusters' query."""
    counted = queryset.order_by().values("cluster_id").annotate(n=Count("id")).values("n")
    return Coalesce(Subquery(counted[:1]), 0)


_COUNTS = ("topics", "partitions", "under_replicated", "offline", "under_min_isr", "consumer_groups")
_SUMMARY = ("taken_at", "reachable", "error", "kafka_version", "metadata_version", "controller_id")
_SUMMARY += ("brokers_up", "brokers_total", *_COUNTS)
_SUMMARY_KEYS = tuple(f"summary__{f}" for f in _SUMMARY)  # as the clusters' query names them
_HIDDEN = dict.fromkeys(("brokers_up", "brokers_total", *_COUNTS))  # a cluster never reached


def _row(values: dict) -> FleetRow:
    """A cluster's row from the clusters' query. The figures are shown once a look at Kafka found some
    (a cluster never reached has none, not zeros); a controller-mode connection has none of partitions."""
    got = dict(zip(_SUMMARY, map(values.__getitem__, _SUMMARY_KEYS), strict=True))
    controller_mode = bool(values["bootstrap_controllers"])
    if got["taken_at"] is None:  # no summary row
        state = NEVER
        got |= {"error": "", "kafka_version": "", "metadata_version": ""}
    else:
        state = _state(got)
        if not (got["reachable"] or got["brokers_total"] > 0):
            got |= _HIDDEN
        elif controller_mode:
            got |= dict.fromkeys(_COUNTS)
    return FleetRow(
        name=values["name"],
        description=values["description"],
        controller_mode=controller_mode,
        state=state,
        running_operations=values["running"],
        held_changes=values["held"],
        open_alerts=values["open_alerts"],
        alert_severity=alert_reads.OpenCount(values["open_alerts"], values["open_critical"]).worst,
        **got,
    )


def fleet(
    actor, *, sort: str = "name", descending: bool = False, text: str = "", state: str = ""
) -> list[FleetRow]:
    """Every cluster the actor may see, as the fleet home lists them: ``text`` found in the name or
    the description (any case), ``state`` one of ``STATES``, sorted by ``sort`` (a key of ``SORTS``;
    clusters without the figure last either way, then by name). One query for the rows (summaries
    joined, the counts as subqueries), one for the actor's bindings."""
    clusters = _clusters(actor)
    if text:
        clusters = clusters.filter(Q(name__icontains=text) | Q(description__icontains=text))
    here = OuterRef("pk")
    waiting = ChangeRequest.objects.filter(cluster_id=here, state=RequestState.PENDING)
    wide = _sees_every_request(actor)
    if wide is not None:
        waiting = waiting.filter(Q(cluster_id__in=wide) | Q(requested_by=actor))
    clusters = clusters.annotate(
        running=_count(Operation.objects.filter(cluster_id=here).exclude(state__in=FINISHED_STATES)),
        held=_count(waiting),
        **alert_reads.open_count_columns(here),
    )
    fields = (
        "name",
        "description",
        "bootstrap_controllers",
        "running",
        "held",
        "open_alerts",
        "open_critical",
    )
    rows = [_row(v) for v in clusters.values(*fields, *_SUMMARY_KEYS)]
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
