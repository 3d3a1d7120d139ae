"""Reading the console's reassignments for a door (page, API, CLI): one of a cluster's, the list, and
whether the figures shown are current."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils import timezone

from console import operations
from console.models.reassignment import Reassignment
from console.reassignment import progress


def reassignment_of(cluster, rid: int, *, defer: tuple[str, ...] = ()) -> Reassignment | None:
    """The cluster's reassignment ``rid`` with its operation; None when the cluster has none of that id
    (``defer``: JSON fields the caller does not show)."""
    found = Reassignment.objects.select_related("operation", "cluster").filter(pk=rid, cluster=cluster)
    return found.defer(*defer).first()


def reassignments_of(cluster) -> QuerySet[Reassignment]:
    """The cluster's reassignments, newest first, with their operations."""
    return Reassignment.objects.filter(cluster=cluster).select_related("operation").order_by("-pk")


def poll_age(r: Reassignment) -> float | None:
    """Seconds since the move's figures were last read from Kafka (None: never read yet)."""
    return (timezone.now() - r.last_poll_at).total_seconds() if r.last_poll_at else None


def figures_behind(r: Reassignment) -> bool:
    """Whether the figures are the last ones read rather than current: the move has lost contact with
    Kafka, or its last read is three polls old."""
    return operations.lost_contact(r.operation) is not None or progress.staleness(
        poll_age(r), progress.EXPECTED_POLL_S
    )
