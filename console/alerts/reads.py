"""What pages, the API and the command line list of a cluster's alerts: open alerts (worst first),
recently resolved ones, active silences, the rule table with the cluster's settings; and, for the
fleet home and the cluster overview, the open count and the highest open severity per cluster in
one query for all clusters. Reads only the console's database (never Kafka); the doors check that
the caller may view the cluster."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Case, Count, IntegerField, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from console.alerts import rules
from console.models import Cluster
from console.models.alerts import OPEN_STATES, Alert, AlertRuleSetting, AlertSeverity, AlertSilence

CRITICAL, WARNING = AlertSeverity.CRITICAL.value, AlertSeverity.WARNING.value
STATES = ("open", "firing", "acknowledged", "resolved")  # what a list can be filtered by
LIST_MAX = 500
_OPEN = Q(state__in=[s.value for s in OPEN_STATES])
_WORST_FIRST = Case(When(severity=CRITICAL, then=Value(0)), default=Value(1), output_field=IntegerField())


def alerts(cluster: Cluster, *, state: str = "open", limit: int = LIST_MAX) -> list[Alert]:
    """The cluster's alerts in ``state`` ("open": firing or acknowledged; "" every state): open ones
    worst first then newest, the others newest first; at most ``limit``."""
    rows = Alert.objects.filter(cluster=cluster)
    if state == "open":
        rows = rows.filter(_OPEN).order_by(_WORST_FIRST, "-fired_at", "-id")
    elif state:
        rows = rows.filter(state=state).order_by("-fired_at", "-id")
    if state == "resolved":
        rows = rows.order_by("-resolved_at", "-id")
    return list(rows[: max(1, min(limit, LIST_MAX))])


def open_alerts(cluster: Cluster) -> list[Alert]:
    return alerts(cluster, state="open")


def recently_resolved(cluster: Cluster, limit: int = 20) -> list[Alert]:
    return alerts(cluster, state="resolved", limit=limit)


def active_silences(cluster: Cluster, now: datetime | None = None) -> list[AlertSilence]:
    """Silences not ended and not expired, the one ending first first."""
    now = now or timezone.now()
    rows = AlertSilence.objects.filter(cluster=cluster, ended_at__isnull=True, expires_at__gt=now)
    return list(rows.order_by("expires_at", "id"))


@dataclass(frozen=True)
class RuleRow:
    """A built-in rule as it applies to one cluster: its definition, its effective setting, and
    whether the cluster has its own setting (who set it, when)."""

    name: str
    title: str
    unit: str
    description: str
    below: bool
    default_threshold: float
    default_severity: str
    enabled: bool
    threshold: float
    severity: str
    escalate_after_min: int | None
    customised: bool
    updated_by: str
    updated_at: datetime | None


def rule_rows(cluster: Cluster) -> list[RuleRow]:
    """Every built-in rule with the cluster's setting (one query)."""
    rows = {row.rule: row for row in AlertRuleSetting.objects.filter(cluster=cluster)}
    out = []
    for name, rule in rules.RULES.items():
        row = rows.get(name)
        now = rules.effective(rule, row)
        out.append(
            RuleRow(
                name=name, title=rule.title, unit=rule.unit, description=rule.description, below=rule.below,
                default_threshold=float(rule.default_threshold), default_severity=rule.default_severity,
                enabled=now.enabled, threshold=now.threshold, severity=now.severity,
                escalate_after_min=now.escalate_after_min, customised=row is not None,
                updated_by=row.updated_by_name if row else "", updated_at=row.updated_at if row else None,
            )
        )  # fmt: skip
    return out


def stored_setting(cluster: Cluster, name: str) -> dict:
    """The cluster's own setting of a rule as ``actions.set_rule`` takes it (the defaults without a
    row): what a change of one field keeps of the others."""
    row = AlertRuleSetting.objects.filter(cluster=cluster, rule=name).first()
    if row is None:
        return {"enabled": True, "threshold": None, "severity": "", "escalate_after_min": None}
    return {f: getattr(row, f) for f in ("enabled", "threshold", "severity", "escalate_after_min")}


def rule_row(cluster: Cluster, name: str) -> RuleRow | None:
    return next((r for r in rule_rows(cluster) if r.name == name), None)


@dataclass(frozen=True)
class OpenCount:
    """A cluster's open alerts: how many, and the highest severity among them ("" when none)."""

    count: int = 0
    critical: int = 0

    @property
    def worst(self) -> str:
        return CRITICAL if self.critical else WARNING if self.count else ""


def _open_count(cluster_ref, **more) -> Coalesce:
    counted = (
        Alert.objects.filter(_OPEN, cluster_id=cluster_ref, **more)
        .order_by()
        .values("cluster_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(counted[:1]), 0)


def open_count_columns(cluster_ref=None) -> dict:
    """Two columns for a query over clusters (``open_alerts``, ``open_critical``; ``cluster_ref`` the
    cluster's id, by default ``OuterRef("pk")``), so a list of clusters reads its open counts in its
    own single query; ``OpenCount(row["open_alerts"], row["open_critical"])`` reads them back."""
    ref = OuterRef("pk") if cluster_ref is None else cluster_ref
    return {"open_alerts": _open_count(ref), "open_critical": _open_count(ref, severity=CRITICAL)}


def open_counts(cluster_ids: Iterable[int] | None = None) -> dict[int, OpenCount]:
    """The open count and worst severity of each cluster that has open alerts (of ``cluster_ids``,
    or all), in one query."""
    rows = Alert.objects.filter(_OPEN)
    if cluster_ids is not None:
        rows = rows.filter(cluster_id__in=list(cluster_ids))
    counted = (
        rows.order_by()
        .values("cluster_id")
        .annotate(n=Count("id"), c=Count("id", filter=Q(severity=CRITICAL)))
    )
    return {r["cluster_id"]: OpenCount(r["n"], r["c"]) for r in counted}


@dataclass(frozen=True)
class Glance:
    """The cluster overview's alerts box: the open count and the worst few."""

    count: OpenCount
    worst: list[Alert]


def glance(cluster: Cluster, few: int = 3) -> Glance:
    """The open count and the ``few`` most severe open alerts (two queries)."""
    count = open_counts([cluster.pk]).get(cluster.pk, OpenCount())
    worst = alerts(cluster, state="open", limit=few) if count.count else []
    return Glance(count, worst)
