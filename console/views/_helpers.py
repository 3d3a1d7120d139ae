"""Shared view helpers: permission-checking getters and the client address for the audit trail."""

from __future__ import annotations

from django.http import Http404

from console import access
from console.models import Cluster, Operation


def client_ip(request) -> str | None:
    # Behind a proxy, configure it to set REMOTE_ADDR (e.g. via a trusted middleware); never trust XFF blindly.
    return request.META.get("REMOTE_ADDR") or None


def get_cluster_for_user(request, name: str, perm: str = access.VIEW) -> Cluster:
    """404 when the user cannot see the cluster at all, 403 when they can see it but lack perm."""
    cluster = Cluster.objects.filter(name=name).first()
    if cluster is None or not access.can(request.user, cluster, access.VIEW):
        raise Http404("No such cluster.")
    if perm != access.VIEW:
        access.require(request.user, cluster, perm)
    return cluster


def get_operation_for_user(request, op_id: int) -> Operation:
    op = Operation.objects.select_related("cluster", "created_by").filter(pk=op_id).first()
    if op is None:
        raise Http404("No such operation.")
    if op.cluster is None:
        # Cluster-less work (e.g. a full audit re-verification): its starter and superusers see it.
        if not (request.user.is_superuser or op.created_by_id == request.user.pk):
            raise Http404("No such operation.")
        return op
    if not access.can(request.user, op.cluster, access.VIEW):
        raise Http404("No such operation.")
    return op
