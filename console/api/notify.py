"""API: a cluster's notification channels (create, change, delete, send a test) and their delivery log
— the same area actions as the admin pages."""

from __future__ import annotations

from django.http import Http404
from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, plain, query, reads, writes
from console.models.notify import ChannelKind
from console.notify import actions as notify
from console.notify import events


class ChannelIn(serializers.Serializer):
    name = serializers.CharField(max_length=notify.NAME_MAX)
    kind = serializers.ChoiceField(choices=ChannelKind.values, required=False)
    events = serializers.ListField(child=serializers.ChoiceField(choices=list(events.LABELS)), default=list)
    enabled = serializers.BooleanField(default=True)
    url = serializers.CharField(required=False, allow_blank=True, max_length=2000, help_text="webhooks")
    recipients = serializers.ListField(
        child=serializers.CharField(max_length=254), required=False, default=list, help_text="e-mail"
    )
    secret = serializers.CharField(
        required=False, allow_blank=True, max_length=notify.SECRET_MAX, help_text="a webhook's signing secret"
    )
    rotate_secret = serializers.BooleanField(default=False, help_text="updates: a new signing secret")


def _channel_json(channel, secret: str = "") -> dict:
    body = notify.describe(channel)
    if secret:
        body["secret"] = secret  # shown once, by the call that made it
    return body


def _delivery_json(d) -> dict:
    return {
        "id": d.pk,
        "channel": d.channel_id,
        "event": d.event,
        "title": d.title,
        "state": d.state,
        "attempts": d.attempts,
        "last_status": d.last_status,
        "last_error": d.last_error,
        "next_attempt_at": plain(d.next_attempt_at),
        "created_at": plain(d.created_at),
        "finished_at": plain(d.finished_at),
    }


def _channel(view: ApiView, name: str, channel_id: int):
    cluster = view.cluster(name, access.ADMINISTER)
    try:
        return cluster, notify.get_channel(actor=view.request.user, cluster=cluster, channel_id=channel_id)
    except notify.ChannelNotFound as exc:
        raise Http404(str(exc)) from None


class Channels(ApiView):
    @reads("notifications_list")
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        channels = notify.list_channels(actor=request.user, cluster=cluster)
        return Response({"results": [_channel_json(c) for c in channels], "events": events.LABELS})

    @writes("notifications_create", 201, request=ChannelIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(ChannelIn)
        if "kind" not in d:
            raise serializers.ValidationError({"kind": ["This field is required."]})
        channel, secret = notify.create_channel(
            actor=request.user, cluster=cluster, name=d["name"], kind=d["kind"], events=d["events"],
            enabled=d["enabled"], url=d.get("url") or None, recipients=d["recipients"],
            secret=d.get("secret", ""), source_ip=self.ip,
        )  # fmt: skip
        return Response(_channel_json(channel, secret), status=201)


class Channel(ApiView):
    @reads("notifications_retrieve")
    def get(self, request, name: str, channel_id: int):
        return Response(_channel_json(_channel(self, name, channel_id)[1]))

    @writes("notifications_update", request=ChannelIn)
    def post(self, request, name: str, channel_id: int):
        cluster, channel = _channel(self, name, channel_id)
        d = self.body(ChannelIn)
        channel, secret = notify.update_channel(
            actor=request.user, cluster=cluster, channel_id=channel.pk, name=d["name"], events=d["events"],
            enabled=d["enabled"], url=d.get("url") or None, recipients=d["recipients"],
            rotate_secret=d["rotate_secret"], secret=d.get("secret", ""), source_ip=self.ip,
        )  # fmt: skip
        return Response(_channel_json(channel, secret))


class ChannelDelete(ApiView):
    @writes("notifications_delete", request=None)
    def post(self, request, name: str, channel_id: int):
        cluster, channel = _channel(self, name, channel_id)
        notify.delete_channel(actor=request.user, cluster=cluster, channel_id=channel.pk, source_ip=self.ip)
        return Response({"deleted": channel_id})


class ChannelTest(ApiView):
    @writes("notifications_test", 202, request=None)
    def post(self, request, name: str, channel_id: int):
        cluster, channel = _channel(self, name, channel_id)
        delivery = notify.send_test(
            actor=request.user, cluster=cluster, channel_id=channel.pk, source_ip=self.ip
        )
        return Response(_delivery_json(delivery), status=202)


class DeliveryQuery(serializers.Serializer):
    channel = serializers.IntegerField(required=False, min_value=1)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=1000, default=100)


class Deliveries(ApiView):
    @reads("notifications_log", parameters=[DeliveryQuery])
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        q = query(DeliveryQuery, request)
        rows = notify.list_deliveries(
            actor=request.user, cluster=cluster, channel_id=q.get("channel"), limit=q["limit"]
        )
        return Response({"results": [_delivery_json(d) for d in rows]})
