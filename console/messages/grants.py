"""Who may read and write which topics' messages: ``DataGrant`` rows only, never roles.

``data.read`` and ``data.write`` are held on a cluster's topics whose names start with a grant's
prefix ("" = every topic), by the grant's user or a group the user is in. ``unmasked`` lets its
holder ask for an unmasked read, with a reason. Superusers hold read and write everywhere and may
read unmasked (with a reason); the system actor, an inactive or anonymous user hold nothing.
Topic management (``access``'s roles) gives no data access, and data access no topic management.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet

from console import access
from console.models import Cluster, DataGrant

DATA_READ = "data.read"
DATA_WRITE = "data.write"
_FIELD = {DATA_READ: 0, DATA_WRITE: 1}  # its place in a grant's (read, write, unmasked)


def _person(actor) -> bool:
    return bool(getattr(actor, "is_authenticated", False) and actor.is_active and not access.is_system(actor))


def _superuser(actor) -> bool:
    return _person(actor) and bool(getattr(actor, "is_superuser", False))


def holding(actor, cluster: Cluster) -> QuerySet[DataGrant]:
    """The grants of a cluster the actor holds (directly or through a group)."""
    if not _person(actor):
        return DataGrant.objects.none()
    return DataGrant.objects.filter(cluster=cluster).filter(Q(user=actor) | Q(group__in=actor.groups.all()))


def _covering(actor, cluster: Cluster, topic: str) -> list[tuple[bool, bool, bool]]:
    """(read, write, unmasked) of each grant the actor holds on the topic (one light query: every
    read asks)."""
    rows = holding(actor, cluster).values_list("prefix", "read", "write", "unmasked")
    return [(read, write, unmasked) for prefix, read, write, unmasked in rows if topic.startswith(prefix)]


def can(actor, cluster: Cluster, topic: str, perm: str) -> bool:
    """Whether the actor holds ``perm`` (DATA_READ or DATA_WRITE) on the topic."""
    if perm not in _FIELD:
        raise ValueError(f"not a data permission: {perm}")
    if _superuser(actor):
        return True
    return any(g[_FIELD[perm]] for g in _covering(actor, cluster, topic))


def require(actor, cluster: Cluster, topic: str, perm: str) -> None:
    """PermissionDenied naming the missing permission, the cluster and the topic."""
    if not can(actor, cluster, topic, perm):
        raise PermissionDenied(
            f"You need the '{perm}' permission on cluster '{cluster.name}' for topic '{topic}'."
        )


def may_unmask(actor, cluster: Cluster, topic: str) -> bool:
    """Whether the actor may ask for an unmasked read of the topic (a reason is still needed)."""
    if _superuser(actor):
        return True
    return any(read and unmasked for read, _, unmasked in _covering(actor, cluster, topic))


def require_unmasked(actor, cluster: Cluster, topic: str, reason: str) -> None:
    """PermissionDenied unless the actor may read the topic unmasked and gave a reason."""
    require(actor, cluster, topic, DATA_READ)
    if not may_unmask(actor, cluster, topic):
        raise PermissionDenied(
            f"You need a data grant with unmasked reads on cluster '{cluster.name}' for topic '{topic}' "
            "to read it unmasked."
        )
    if not reason.strip():
        raise PermissionDenied("An unmasked read needs a reason (it is kept in the audit trail).")


def visible(actor, cluster: Cluster, topic: str) -> bool:
    """Whether a page offers the topic's messages to the actor (data.read on it)."""
    return can(actor, cluster, topic, DATA_READ)


def writable(actor, cluster: Cluster, topic: str) -> bool:
    """Whether a page offers producing to the topic (data.write on it)."""
    return can(actor, cluster, topic, DATA_WRITE)
