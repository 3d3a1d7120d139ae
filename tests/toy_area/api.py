"""The toy area's API view: GET the retention of every topic, POST a change (held where the
cluster's policy holds it: 202 with the held change)."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, reads, writes
from console.api.held import hold
from tests.toy_area import actions, held


class RetentionIn(serializers.Serializer):
    topic = serializers.CharField(max_length=249)
    retention_ms = serializers.IntegerField()
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


class Retention(ApiView):
    @reads("retention_list")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        return Response({"results": actions.list_retention(actor=request.user, cluster=cluster)})

    @writes("retention_set", (200, 202), request=RetentionIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_CONFIGS)
        d = self.body(RetentionIn)
        user = request.user
        answer = hold(
            self, cluster, held.GATE, lambda: held.prepare(user, cluster, d["topic"], d["retention_ms"])
        )
        if answer is not None:
            return answer
        ok, message = actions.set_retention(
            actor=user, cluster=cluster, topic=d["topic"], retention_ms=d["retention_ms"], source_ip=self.ip
        )
        return Response({"ok": ok, "message": message}, status=200 if ok else 207)
