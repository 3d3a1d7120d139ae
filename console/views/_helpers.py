"""Shared view helpers: permission-checking getters and the client address for the audit trail."""

from __future__ import annotations

from django.http import Http404

from console import access, operations
from console.addresses import client_ip as client_ip  # the views' name for it
from console.models import Cluster, Operation


def get_cluster_for_user(request, name: str, perm: str = access.VIEW) -> Cluster:
    """404 when the user cannot see the cluster at all, 403 when they can see it but lack perm."""
    cluster = Cluster.objects.filter(name=name).first()
    if cluster is None or not access.can(request.user, cluster, access.VIEW):
        raise Http404("No such cluster.")
    if perm != access.VIEW:
        access.require(request.user, cluster, perm)
    request.console_cluster = cluster  # the navigation's context processor reads it from here
    return cluster


def get_operation_for_user(request, op_id: int) -> Operation:
    """The operation when the user may see it, by its kind's rule (a request's execution: whoever may
    see that request); 404 otherwise, so ids of other clusters and teams reveal nothing."""
    op = operations.get_visible(actor=request.user, op_id=op_id)
    if op is None:
        raise Http404("No such operation.")
    return op
