"""Shared view helpers: permission-checking getters, the client address for the audit trail, and a
page's answer to an area's not-found refusal (from console/refusals.py's one table)."""

from __future__ import annotations

import functools

from django.http import Http404

from console import access, operations, refusals
from console.addresses import client_ip as client_ip  # the views' name for it
from console.clusters import lookup
from console.models import Cluster, Operation


def get_cluster_for_user(request, name: str, perm: str = access.VIEW) -> Cluster:
    """404 when the user cannot see the cluster at all, 403 when they can see it but lack perm."""
    cluster = lookup.cluster_for(request.user, name, perm)
    request.console_cluster = cluster  # the navigation's context processor reads it from here
    return cluster


def get_operation_for_user(request, op_id: int) -> Operation:
    """The operation when the user may see it, by its kind's rule (a request's execution: whoever may
    see that request); 404 otherwise, so ids of other clusters and teams reveal nothing."""
    op = operations.get_visible(actor=request.user, op_id=op_id)
    if op is None:
        raise Http404("No such operation.")
    return op


def not_found_is_404(view):
    """The page's 404 for an area's not-found refusal (a channel, a broker: the table's 404 rows),
    as the API answers 404 and the CLI exits 6. Other refusals a page shows inline (refusals.SHOWN);
    Django answers PermissionDenied (403) and console.middleware the 503s."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except refusals.NOT_FOUND_ERRORS as exc:
            raise Http404(refusals.text(exc)) from exc

    return wrapped
