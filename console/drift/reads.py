"""What the pages show of drift: a cluster's (or one topic's) recent changes made outside the console,
for readers of the cluster's audit trail."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from console import access
from console.audit import review
from console.drift import audit_names, core
from console.models import Cluster


@dataclass(frozen=True)
class ExternalChange:
    """One external-change event as a page lists it."""

    event_id: int
    at: datetime
    resource_type: str
    resource: str
    change: str
    summary: str


def audit_filter(cluster: Cluster, topic: str | None = None) -> review.AuditFilter:
    """The audit search for a cluster's (or a topic's) external changes."""
    return review.AuditFilter(
        action=audit_names.EXTERNAL_CHANGE, cluster=cluster.name, resource=f"topic:{topic}" if topic else ""
    )


def may_see(actor, cluster: Cluster) -> bool:
    return access.can(actor, cluster, access.VIEW_AUDIT)


def recent(*, actor, cluster: Cluster, topic: str | None = None, limit: int = 10) -> list[ExternalChange]:
    """The newest external changes on the cluster (or that topic, its configs included), newest first."""
    access.require(actor, cluster, access.VIEW_AUDIT)
    rows = (
        review.filtered_events(actor=actor, audit_filter=audit_filter(cluster, topic))
        .order_by("-id")
        .values_list("id", "created_at", "params")[:limit]
    )
    return [_row(pk, at, params) for pk, at, params in rows]


def _row(pk: int, at: datetime, params: dict[str, Any]) -> ExternalChange:
    return ExternalChange(
        pk,
        at,
        str(params.get("resource_type", "")),
        str(params.get("resource", "")),
        str(params.get("change", "")),
        core.summary(params),
    )
