"""The landing page: straight to the only cluster, the fleet home when there are more, else the list."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.views.decorators.http import require_GET

from console import access


@login_required
@require_GET
def home(request):
    visible = list(access.visible_clusters(request.user)[:2])
    if len(visible) == 1:
        return redirect("cluster_overview", name=visible[0].name)
    return redirect("fleet_home" if visible else "cluster_list")
