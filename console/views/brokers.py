"""Broker pages: the brokers of a cluster and one broker's partitions, disks and throttles (read-only)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from console import access
from console.brokers import query as broker_query
from console.brokers import reads as broker_reads
from console.clusters import capabilities
from console.kafka import KafkaOperationError
from console.logdirs import reads as logdir_reads
from console.views._helpers import get_cluster_for_user, not_found_is_404
from console.views.capabilities import unavailable_page

# The brokers' pages need Metadata and DescribeLogDirs, which KRaft controllers do not serve.
SECTION = "log_dirs"


@login_required
@require_GET
def broker_list(request, name: str):
    cluster = get_cluster_for_user(request, name)
    if capabilities.unavailable_reason(cluster, SECTION):
        return unavailable_page(request, cluster, SECTION, title="Brokers")
    context = {"cluster": cluster, "listing": None, "error": None}
    try:
        context["listing"] = broker_reads.list_brokers(
            actor=request.user, cluster=cluster, refresh=bool(request.GET.get("refresh"))
        )
    except KafkaOperationError as exc:
        context["error"] = exc
    context["can_edit_configs"] = access.can(request.user, cluster, access.MANAGE_CONFIGS)
    return render(request, "console/broker_list.html", context)


@login_required
@require_GET
@not_found_is_404
def broker_detail(request, name: str, broker: str):
    cluster = get_cluster_for_user(request, name)
    if capabilities.unavailable_reason(cluster, SECTION):
        return unavailable_page(request, cluster, SECTION, title="Brokers")
    query = broker_query.PartitionQuery.from_params(request.GET)
    context = {"cluster": cluster, "broker": broker, "detail": None, "error": None, "query": query}
    try:
        context["detail"] = broker_reads.describe_broker(
            actor=request.user,
            cluster=cluster,
            broker=broker,
            query=query,
            refresh=bool(request.GET.get("refresh")),
        )
    except KafkaOperationError as exc:
        context["error"] = exc
    context["log_dir_moves"] = _log_dir_moves(request, cluster, broker)
    context["log_dirs_url"] = (
        reverse("broker_log_dirs", kwargs={"name": name, "broker": int(broker)}) if broker.isdigit() else ""
    )
    context["filters"] = broker_query.FILTERS
    context["sorts"] = broker_query.SORTS
    return render(request, "console/broker_detail.html", context)


def _log_dir_moves(request, cluster, broker: str) -> list:
    """The console's moves between this broker's log dirs still running (rows only, no Kafka read)."""
    if not broker.isdigit():
        return []
    return logdir_reads.active_moves(actor=request.user, cluster=cluster, broker=int(broker))
