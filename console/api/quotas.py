"""API: client quotas (list with a filter, the effective quota of a user + client id or an IP, alter
with a dry run; held for review where the cluster holds quota changes)."""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, page_json, query, reads, writes
from console.api.held import hold
from console.quotas import actions, core, held
from console.quotas import reads as quota_reads


class QuotaListQuery(serializers.Serializer):
    entity_type = serializers.ChoiceField(
        choices=["user", "client-id", "ip"], required=False, allow_blank=True, default=""
    )
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=core.NAME_MAX)
    page = serializers.IntegerField(min_value=1, default=1)
    per_page = serializers.IntegerField(min_value=1, required=False)


class EffectiveQuery(serializers.Serializer):
    user = serializers.CharField(required=False, allow_blank=True, default="", max_length=core.NAME_MAX)
    client_id = serializers.CharField(required=False, allow_blank=True, default="", max_length=core.NAME_MAX)
    ip = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)

    def validate(self, data):
        if data["ip"] and (data["user"] or data["client_id"]):
            raise serializers.ValidationError("ask for a user and client id, or for an IP, not both")
        if not data["ip"] and not (data["user"] and data["client_id"]):
            raise serializers.ValidationError("give user and client_id (or ip)")
        return data


class QuotaAlterIn(serializers.Serializer):
    entity = serializers.JSONField(
        help_text='"user=alice,client-id=app", or {"user": "alice", "client-id": "app"} (<default> for a default)'
    )
    changes = serializers.DictField(
        child=serializers.JSONField(allow_null=True),
        help_text="{key: value} to set, {key: null} to remove",
    )
    validate_only = serializers.BooleanField(required=False, default=False)
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


class QuotaList(ApiView):
    @reads("quotas_list", parameters=[QuotaListQuery])
    def get(self, request, name: str):
        cluster = self.cluster(name)
        q = query(QuotaListQuery, request)
        listing = quota_reads.list_quotas(
            actor=request.user,
            cluster=cluster,
            entity_type=q["entity_type"],
            name=q["name"],
            page=q["page"],
            per_page=min(q.get("per_page") or settings.API_PAGE_SIZE, settings.API_MAX_PAGE_SIZE),
        )
        return Response(page_json(listing, [r.as_json() for r in listing.rows]))

    @writes("quotas_alter", (200, 207), request=QuotaAlterIn, held=True)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_CONFIGS)
        d = self.body(QuotaAlterIn)
        entity = core.entity_from_json(d["entity"])
        user, changes = request.user, d["changes"]
        if not d["validate_only"]:
            answer = hold(self, cluster, held.GATE, lambda: held.prepare(user, cluster, entity, changes))
            if answer is not None:
                return answer
        result = actions.alter_quotas(
            actor=user,
            cluster=cluster,
            entity=entity,
            changes=changes,
            validate_only=d["validate_only"],
            source_ip=self.ip,
        )
        return Response(result.as_json(), status=200 if result.ok else 207)


class QuotaEffective(ApiView):
    @reads("quotas_effective", parameters=[EffectiveQuery])
    def get(self, request, name: str):
        cluster = self.cluster(name)
        q = query(EffectiveQuery, request)
        if q["ip"]:
            view = quota_reads.effective_ip_quota(actor=request.user, cluster=cluster, ip=q["ip"])
        else:
            view = quota_reads.effective_quota(
                actor=request.user, cluster=cluster, user=q["user"], client_id=q["client_id"]
            )
        return Response(view.as_json())
