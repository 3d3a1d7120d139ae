"""Finding a cluster for a caller by its name: the getter every door (pages, API) starts from."""

from __future__ import annotations

from django.http import Http404

from console import access
from console.models import Cluster


def cluster_for(user, name: str, perm: str = access.VIEW) -> Cluster:
    """The cluster named ``name``: 404 when the user cannot see it at all (so names of other teams'
    clusters reveal nothing), 403 when they can see it but lack ``perm``."""
    cluster = Cluster.objects.filter(name=name).first()
    if cluster is None or not access.can(user, cluster, access.VIEW):
        raise Http404("No such cluster.")
    if perm != access.VIEW:
        access.require(user, cluster, perm)
    return cluster
