"""Notification channels of a cluster (console/notify): list and create, edit, delete, send a test, the log."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console import access, refusals
from console.forms.notify import ChannelEditForm, ChannelForm
from console.models.notify import DeliveryState
from console.notify import actions as notify
from console.notify import events
from console.views import posting
from console.views._helpers import client_ip, get_cluster_for_user, not_found_is_404


def _channel(request, cluster, channel_id: int):
    return notify.get_channel(actor=request.user, cluster=cluster, channel_id=channel_id)


def _save(request, cluster, form, save, done: str):
    """Create or update the channel from the form (``save``: the area's action with what differs bound);
    a refusal on the form. The channel (None when refused) and its new signing secret, if any."""
    data = form.cleaned_data
    try:
        channel, secret = save(
            actor=request.user,
            cluster=cluster,
            name=data["name"],
            events=data["events"],
            enabled=data["enabled"],
            recipients=form.cleaned_recipients(),
            source_ip=client_ip(request),
        )
    except refusals.SHOWN as exc:
        posting.refused(form, exc)
        return None, ""
    messages.success(request, f"Channel '{channel.name}' {done}.")
    return channel, secret


def _rows(channels):
    return [{**notify.describe(c), "labels": [events.label(e) for e in c.events or []]} for c in channels]


@login_required
@require_http_methods(["GET", "POST"])
def notify_channels(request, name: str):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    form = ChannelForm(request.POST or None, initial={"enabled": True})
    secret = ""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        create = partial(notify.create_channel, kind=data["kind"], url=data["url"] or None)
        saved, secret = _save(request, cluster, form, create, "created")
        if saved is not None and not secret:
            return redirect("notify_channels", name=cluster.name)
        if saved is not None:
            form = ChannelForm(initial={"enabled": True})
    channels = notify.list_channels(actor=request.user, cluster=cluster)
    context = {"cluster": cluster, "form": form, "channels": _rows(channels), "secret": secret}
    return render(request, "console/notify_channels.html", context)


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def notify_channel(request, name: str, channel_id: int):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    channel = _channel(request, cluster, channel_id)
    shown = notify.describe(channel)
    initial = {**shown, "recipients": ", ".join(shown["recipients"])}
    form = ChannelEditForm(request.POST or None, initial=initial, kind=channel.kind)
    secret = ""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        update = partial(
            notify.update_channel,
            channel_id=channel.pk,
            url=data.get("url") or None,
            rotate_secret=bool(data.get("rotate_secret")),
        )
        saved, secret = _save(request, cluster, form, update, "saved")
        if saved is not None and not secret:
            return redirect("notify_channels", name=cluster.name)
        channel = saved or channel
    context = {"cluster": cluster, "channel": notify.describe(channel), "form": form, "secret": secret}
    return render(request, "console/notify_channel.html", context)


@login_required
@require_POST
@not_found_is_404
def notify_channel_delete(request, name: str, channel_id: int):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    channel = _channel(request, cluster, channel_id)
    notify.delete_channel(
        actor=request.user, cluster=cluster, channel_id=channel.pk, source_ip=client_ip(request)
    )
    messages.success(request, f"Channel '{channel.name}' deleted.")
    return redirect("notify_channels", name=cluster.name)


@login_required
@require_POST
@not_found_is_404
def notify_channel_test(request, name: str, channel_id: int):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    channel = _channel(request, cluster, channel_id)
    delivery = notify.send_test(
        actor=request.user, cluster=cluster, channel_id=channel.pk, source_ip=client_ip(request)
    )
    messages.success(
        request, f"Test notification #{delivery.pk} queued; its result shows in the delivery log."
    )
    return redirect("notify_deliveries", name=cluster.name)


@login_required
@require_GET
def notify_deliveries(request, name: str):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    rows = notify.list_deliveries(actor=request.user, cluster=cluster, limit=200)
    deliveries = [
        {
            "row": d,
            "event_label": events.label(d.event),
            "channel": d.channel.name,
            "next": d.next_attempt_at if d.state == DeliveryState.PENDING else None,
        }
        for d in rows
    ]
    return render(request, "console/notify_deliveries.html", {"cluster": cluster, "deliveries": deliveries})
