"""Template context shared by every page: the current cluster's navigation."""

from __future__ import annotations

from console.models import Cluster
from console.services import access


def navigation(request):
    """Which cluster the page is about (from the URL) and which sections this user may open."""
    match = getattr(request, "resolver_match", None)
    name = match.kwargs.get("name") if match else None
    if not name or not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    cluster = Cluster.objects.filter(name=name).first()
    if cluster is None or not access.can(request.user, cluster, access.VIEW):
        return {}
    return {
        "nav_cluster": cluster,
        "nav_can_administer": access.can(request.user, cluster, access.ADMINISTER),
    }
