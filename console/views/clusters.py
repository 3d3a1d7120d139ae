"""Cluster registry and overview pages."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console import access, refusals
from console.brokers import overview as overview_page
from console.clusters import actions as clusters
from console.clusters import capabilities, confirm
from console.forms.clusters import ClusterForm
from console.kafka.cluster import BrokerStatus
from console.overview import attention
from console.views import posting
from console.views._helpers import client_ip, get_cluster_for_user


@login_required
@require_GET
def cluster_list(request):
    visible = access.visible_clusters(request.user)
    return render(
        request,
        "console/cluster_list.html",
        {"clusters": visible, "can_register": access.can(request.user, None, access.ADMINISTER)},
    )


def _refused_on_form(form: ClusterForm, exc: Exception) -> None:
    """A refusal of the action shown on the field it is about (the page answers 200, htmx swaps it)."""
    if isinstance(exc, clusters.PasswordRequired):
        for name, why in exc.secrets.items():
            form.add_error(name, why)
    elif isinstance(exc, clusters.HostnameCheckRequired):
        form.add_error("ssl_check_hostname", str(exc))
    else:
        posting.refused(form, exc)


def _form_page(request, form: ClusterForm, report, cluster=None):
    context = {"form": form, "report": report, "cluster": cluster, "creating": cluster is None}
    if cluster is not None:
        context["security"] = clusters.security(cluster)
    return render(request, "console/cluster_form.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def cluster_new(request):
    access.require(request.user, None, access.ADMINISTER)
    form = ClusterForm(request.POST or None, request.FILES or None)
    report = None
    if request.method == "POST" and form.is_valid():
        args = {
            "actor": request.user,
            "values": form.values(),
            "secrets": form.secrets,
            "source_ip": client_ip(request),
        }
        try:
            if request.POST.get("action") == "test":
                report = clusters.test_settings(cluster=None, **args)
            else:
                cluster = clusters.register_cluster(**args)
                messages.success(request, f"Cluster '{cluster.name}' registered.")
                return redirect("cluster_overview", name=cluster.name)
        except refusals.SHOWN as exc:
            _refused_on_form(form, exc)
    return _form_page(request, form, report)


@login_required
@require_http_methods(["GET", "POST"])
def cluster_settings(request, name: str):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    form = ClusterForm(request.POST or None, request.FILES or None, instance=cluster)
    report = None
    if request.method == "POST" and form.is_valid():
        values = form.values()
        cluster.refresh_from_db()  # the form edited the instance; the actions compare with the saved row
        args = {"actor": request.user, "cluster": cluster, "values": values, "secrets": form.secrets}
        try:
            if request.POST.get("action") == "test":
                report = clusters.test_settings(**args, source_ip=client_ip(request))
            else:
                clusters.update_cluster(**args, source_ip=client_ip(request))
                messages.success(request, f"Cluster '{cluster.name}' saved.")
                return redirect("cluster_overview", name=cluster.name)
        except refusals.SHOWN as exc:
            _refused_on_form(form, exc)
    cluster.refresh_from_db()
    return _form_page(request, form, report, cluster)


@login_required
@require_POST
def cluster_remove(request, name: str):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    try:
        confirm.check_removal(cluster, request.POST.get("confirm_name"))
        clusters.remove_cluster(actor=request.user, cluster=cluster, source_ip=client_ip(request))
    except refusals.SHOWN as refused:
        messages.error(request, refusals.text(refused))
        return redirect("cluster_settings", name=cluster.name)
    messages.success(request, f"Cluster '{name}' removed from the console (the Kafka cluster is untouched).")
    return redirect("cluster_list")


@login_required
@require_POST
def cluster_test(request, name: str):
    cluster = get_cluster_for_user(request, name)
    report = clusters.test_registered(actor=request.user, cluster=cluster, source_ip=client_ip(request))
    return render(request, "console/cluster_report.html", {"report": report})


@login_required
@require_GET
def cluster_overview(request, name: str):
    cluster = get_cluster_for_user(request, name)
    data = overview_page.cluster_overview(
        actor=request.user, cluster=cluster, refresh=bool(request.GET.get("refresh"))
    )
    brokers = sorted(data.info.brokers, key=lambda b: b.id) if data.info else []
    rows = data.brokers or tuple(BrokerStatus(b, "up") for b in brokers)
    needs = None if data.error else attention.attention(actor=request.user, cluster=cluster, overview=data)
    return render(
        request,
        "console/cluster_overview.html",
        {
            "cluster": cluster,
            "overview": data,
            "attention": needs,
            "brokers": brokers,
            "broker_rows": rows,
            "controller_id": data.active_controller,
            "can_administer": access.can(request.user, cluster, access.ADMINISTER),
            "can_run": access.can(request.user, cluster, access.RUN_OPERATIONS),
            "topics_unavailable": capabilities.unavailable_reason(cluster, "topics"),
            "security": data.security,
            # the brokers' table is rendered once per kept states (200 rows cost more than the rest)
            "states_cache_s": settings.TOPIC_METADATA_CACHE_S,
        },
    )
