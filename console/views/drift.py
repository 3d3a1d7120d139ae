"""Drift's page fragment: the recent changes made outside the console, on the cluster overview and a
topic's page (htmx loads it; readers without the cluster's audit get nothing)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from console.drift import reads
from console.views import htmx
from console.views._helpers import get_cluster_for_user


@login_required
@require_GET
def drift_recent(request, name: str):
    """The newest external changes of the cluster, or of ``?topic=`` with its configs."""
    cluster = get_cluster_for_user(request, name)
    if not reads.may_see(request.user, cluster):
        return HttpResponse("")
    topic = request.GET.get("topic", "").strip()[:249] or None
    wanted = {**reads.audit_filter(cluster, topic).as_params(), "external": "on"}
    wanted.pop("action")
    context = {
        "cluster": cluster,
        "topic": topic,
        "changes": reads.recent(actor=request.user, cluster=cluster, topic=topic),
        "audit_url": reverse("audit_list") + "?" + urlencode(wanted),
    }
    return htmx.fragment_or_page(request, "console/_drift_changes.html", None, context)  # the box either way
