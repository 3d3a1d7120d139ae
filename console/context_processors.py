"""Template context shared by every page: the current cluster's navigation."""

from __future__ import annotations

from console import access
from console.models import Cluster


def navigation(request):
    """Which cluster the page is about (from the URL) and which sections this user may open."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    context = {"nav_can_audit": access.can_view_any_audit(user)}
    match = getattr(request, "resolver_match", None)
    name = match.kwargs.get("name") if match else None
    cluster = getattr(request, "console_cluster", None)  # the view's, when it read it
    if cluster is None or cluster.name != name:
        cluster = Cluster.objects.filter(name=name).first() if name else None
    if cluster is None:
        return context
    granted = access.permissions(user, cluster)
    if access.VIEW not in granted:
        return context
    context.update(
        nav_cluster=cluster,
        nav_can_administer=access.ADMINISTER in granted,
        nav_can_manage_acls=access.MANAGE_ACLS in granted,
        nav_can_request=access.REQUEST in granted,
        nav_can_approve=access.APPROVE in granted,
    )
    return context
