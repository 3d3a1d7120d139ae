"""API: a cluster's notification channels (create, change, delete, send a test), their delivery log,
and the change-control policy — the same area actions as the admin pages."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, plain
from console.api.idempotency import idempotent
from console.changes import actions as changes
from console.changes import gate
from console.models import Role
from console.models.notify import ChannelKind
from console.notify import actions as notify
from console.notify import events

ERRORS = {400: s.ErrorBody, 403: s.ErrorBody, 404: s.ErrorBody, 422: s.ErrorBody}


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


def _data(request) -> dict:
    data = ChannelIn(data=request.data)
    data.is_valid(raise_exception=True)
    return data.validated_data


class Channels(ApiView):
    @extend_schema(operation_id="notifications_list", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        channels = notify.list_channels(actor=request.user, cluster=cluster)
        return Response({"results": [_channel_json(c) for c in channels], "events": events.LABELS})

    @extend_schema(
        operation_id="notifications_create", request=ChannelIn, responses={201: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = _data(request)
        if "kind" not in d:
            raise serializers.ValidationError({"kind": ["This field is required."]})
        channel, secret = notify.create_channel(
            actor=request.user, cluster=cluster, name=d["name"], kind=d["kind"], events=d["events"],
            enabled=d["enabled"], url=d.get("url") or None, recipients=d["recipients"],
            secret=d.get("secret", ""), source_ip=self.ip,
        )  # fmt: skip
        return Response(_channel_json(channel, secret), status=201)


class Channel(ApiView):
    @extend_schema(operation_id="notifications_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str, channel_id: int):
        return Response(_channel_json(_channel(self, name, channel_id)[1]))

    @extend_schema(
        operation_id="notifications_update", request=ChannelIn, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str, channel_id: int):
        cluster, channel = _channel(self, name, channel_id)
        d = _data(request)
        channel, secret = notify.update_channel(
            actor=request.user, cluster=cluster, channel_id=channel.pk, name=d["name"], events=d["events"],
            enabled=d["enabled"], url=d.get("url") or None, recipients=d["recipients"],
            rotate_secret=d["rotate_secret"], secret=d.get("secret", ""), source_ip=self.ip,
        )  # fmt: skip
        return Response(_channel_json(channel, secret))


class ChannelDelete(ApiView):
    @extend_schema(
        operation_id="notifications_delete", request=None, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str, channel_id: int):
        cluster, channel = _channel(self, name, channel_id)
        notify.delete_channel(actor=request.user, cluster=cluster, channel_id=channel.pk, source_ip=self.ip)
        return Response({"deleted": channel_id})


class ChannelTest(ApiView):
    @extend_schema(
        operation_id="notifications_test", request=None, responses={202: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
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
    @extend_schema(
        operation_id="notifications_log",
        parameters=[DeliveryQuery],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        q = DeliveryQuery(data=request.query_params)
        q.is_valid(raise_exception=True)
        rows = notify.list_deliveries(
            actor=request.user, cluster=cluster, channel_id=q.validated_data.get("channel"),
            limit=q.validated_data["limit"],
        )  # fmt: skip
        return Response({"results": [_delivery_json(d) for d in rows]})


class PolicyIn(serializers.Serializer):
    enabled = serializers.BooleanField()
    kinds = serializers.ListField(child=serializers.ChoiceField(choices=list(gate.KINDS)), default=list)
    roles = serializers.ListField(
        child=serializers.ChoiceField(choices=[Role.OPERATOR.value, Role.ADMIN.value]), default=list
    )
    approvers = serializers.IntegerField(min_value=1, max_value=gate.MAX_APPROVERS, default=1)


def _policy_json(policy) -> dict:
    return {
        "enabled": policy.enabled,
        "kinds": list(policy.kinds or []),
        "roles": list(policy.roles or []),
        "approvers": policy.approvers,
        "offered": gate.KINDS,
    }


class ChangePolicy(ApiView):
    @extend_schema(operation_id="change_policy_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        return Response(_policy_json(changes.get_policy(self.cluster(name, access.ADMINISTER))))

    @extend_schema(
        operation_id="change_policy_update", request=PolicyIn, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        data = PolicyIn(data=request.data)
        data.is_valid(raise_exception=True)
        policy = changes.set_policy(
            actor=request.user, cluster=cluster, **data.validated_data, source_ip=self.ip
        )
        return Response(_policy_json(policy))
