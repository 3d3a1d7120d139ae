"""A cluster's change windows: the calendar page (the windows in force, the next weeks by day with the
windows and the scheduled changes), the forms to add and end windows and to set the maintenance-only
rule (admins), and scheduling a held change from its page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from console import access, refusals
from console.changes import schedule
from console.forms.windows import ScheduleForm, WindowForm
from console.requests import actions as requests
from console.views import posting
from console.views._helpers import client_ip, get_cluster_for_user
from console.windows import actions as windows
from console.windows import reads as window_reads


@login_required
@require_http_methods(["GET", "POST"])
def windows_page(request, name: str):
    cluster = get_cluster_for_user(request, name)
    can_manage = access.can(request.user, cluster, access.ADMINISTER)
    form = WindowForm(request.POST or None, initial={"kind": "freeze", "time_zone": "UTC"})
    if request.method == "POST":
        access.require(request.user, cluster, access.ADMINISTER)
        if form.is_valid():
            try:
                row = windows.add_window(
                    actor=request.user, cluster=cluster, source_ip=client_ip(request), **form.window()
                )
            except refusals.SHOWN as exc:
                posting.refused(form, exc)
            else:
                messages.success(request, f"Window #{row.pk} ({row.get_kind_display().lower()}) added.")
                return redirect("windows_page", name=cluster.name)
    context = {
        "cluster": cluster,
        "status": window_reads.status(actor=request.user, cluster=cluster),
        "windows": window_reads.list_windows(actor=request.user, cluster=cluster),
        "days": window_reads.calendar(actor=request.user, cluster=cluster),
        "can_manage": can_manage,
        "form": form,
    }
    return render(request, "console/windows.html", context)


@login_required
@require_POST
def window_end(request, name: str, window_id: int):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    try:
        windows.end_window(
            actor=request.user, cluster=cluster, window_id=window_id, source_ip=client_ip(request)
        )
        messages.success(request, f"Window #{window_id} ended.")
    except refusals.SHOWN as exc:
        messages.error(request, refusals.text(exc))
    return redirect("windows_page", name=cluster.name)


@login_required
@require_POST
def window_settings(request, name: str):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    on = request.POST.get("maintenance_only") == "on"
    windows.set_maintenance_only(
        actor=request.user, cluster=cluster, maintenance_only=on, source_ip=client_ip(request)
    )
    messages.success(
        request,
        "Changes run only inside maintenance windows."
        if on
        else "Changes may run at any time outside freezes.",
    )
    return redirect("windows_page", name=cluster.name)


@login_required
@require_POST
def change_schedule(request, name: str, request_id: int):
    """Schedule a held change from its page; the refusal (a freeze, the maintenance-only rule) is shown there."""
    cluster = get_cluster_for_user(request, name)
    req = requests.get_request(actor=request.user, cluster=cluster, request_id=request_id)
    if req is None:
        raise Http404("No such change.")
    form = ScheduleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
    else:
        try:
            row = schedule.schedule_change(
                actor=request.user, request=req, run_at=form.zoned("run_at"), source_ip=client_ip(request)
            )
            messages.success(
                request, f"Change #{req.pk} runs at {row.run_at:%Y-%m-%d %H:%M} UTC, not before."
            )
        except refusals.SHOWN as exc:
            messages.error(request, refusals.text(exc))
    return redirect(reverse("request_detail", kwargs={"name": cluster.name, "request_id": req.pk}))


@login_required
@require_POST
def change_unschedule(request, name: str, request_id: int):
    """Take a held change off its schedule from its page (an approved one is cancelled)."""
    cluster = get_cluster_for_user(request, name)
    req = requests.get_request(actor=request.user, cluster=cluster, request_id=request_id)
    if req is None:
        raise Http404("No such change.")
    try:
        req = schedule.cancel_schedule(actor=request.user, request=req, source_ip=client_ip(request))
        messages.success(
            request, f"Change #{req.pk} is off its schedule ({req.get_state_display().lower()})."
        )
    except refusals.SHOWN as exc:
        messages.error(request, refusals.text(exc))
    return redirect(reverse("request_detail", kwargs={"name": cluster.name, "request_id": req.pk}))
