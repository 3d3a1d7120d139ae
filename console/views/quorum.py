"""The KRaft quorum page (auto-refreshing with htmx) and a controller's configs and log levels."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.views.decorators.http import require_GET, require_http_methods

from console import access, refusals
from console.clusters import capabilities
from console.forms.quorum import LogLevelForm
from console.kafka import KafkaOperationError
from console.quorum import actions as quorum
from console.quorum import controllers
from console.views import htmx, posting
from console.views._helpers import client_ip, get_cluster_for_user
from console.views.capabilities import unavailable_page


@login_required
@require_GET
def quorum_page(request, name: str):
    cluster = get_cluster_for_user(request, name)
    data = quorum.describe_quorum(actor=request.user, cluster=cluster)
    context = {
        "cluster": cluster,
        "q": data,
        "refresh_s": settings.QUORUM_REFRESH_S,
        "controller_links": not capabilities.unavailable_reason(cluster, "controllers"),
        "can_administer": access.can(request.user, cluster, access.ADMINISTER),  # the KRaft lifecycle pages
        "capabilities": capabilities.capability_table(cluster),
    }
    return htmx.fragment_or_page(request, "console/quorum.html", "console/_quorum_live.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def controller_detail(request, name: str, node_id: int):
    cluster = get_cluster_for_user(request, name)
    can_edit = access.can(request.user, cluster, access.MANAGE_CONFIGS)
    if request.method == "POST" and not can_edit:
        raise PermissionDenied(
            f"You need the '{access.MANAGE_CONFIGS}' permission on cluster '{cluster.name}'."
        )
    if capabilities.unavailable_reason(cluster, "controllers"):
        return unavailable_page(request, cluster, "controllers", f"Controller {node_id}")
    form = LogLevelForm(request.POST or None)
    context = {"cluster": cluster, "node_id": node_id, "form": form, "can_edit": can_edit, "result": None}
    if request.method == "POST" and form.is_valid():
        dry_run = request.POST.get("action") != "apply"
        try:
            result = controllers.change_log_levels(
                actor=request.user,
                cluster=cluster,
                node_id=node_id,
                levels=form.cleaned_data["levels"],
                dry_run=dry_run,
                source_ip=client_ip(request),
            )
        except KafkaOperationError as exc:  # the page shows Kafka's error with its name and code
            context["error"] = exc
        except refusals.SHOWN as exc:
            posting.refused(form, exc)
        else:
            context["result"] = result
            if result.ok and not dry_run:
                messages.success(request, f"Controller {node_id}: {len(result.diffs)} log level(s) changed.")
                return htmx.redirect_to(request, request.path)
    posted = request.method == "POST"
    if not (posted and htmx.wants_fragment(request)):  # the page shows the controller; the form fragment not
        context["data"] = controllers.describe_controller(
            actor=request.user, cluster=cluster, node_id=node_id
        )
    fragment = "console/_controller_log_levels.html" if posted else None
    return htmx.fragment_or_page(request, "console/controller.html", fragment, context)
