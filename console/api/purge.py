"""API: purge a topic's records (KIP-107 DeleteRecords) - a dry run, or the purge after the typed
confirmation; held for review where the cluster holds record purges."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, writes
from console.api.held import hold
from console.purge import actions, core, held, reads


class PurgeIn(serializers.Serializer):
    all = serializers.BooleanField(
        required=False, default=False, help_text="purge every record (each partition to its end)"
    )
    before = serializers.JSONField(
        required=False,
        default=None,
        help_text="purge records older than this time: ISO 8601 or ms since the epoch",
    )
    partitions = serializers.JSONField(
        required=False,
        default=None,
        help_text='[{"partition": 0, "offset": 42}] (offset -1: the end); with "before": [0, 2] to name partitions',
    )
    offset_json = serializers.JSONField(
        required=False,
        default=None,
        help_text='kafka-delete-records.sh\'s document: {"partitions": [{"topic", "partition", "offset"}], "version": 1}',
    )
    dry_run = serializers.BooleanField(required=False, default=False)
    confirm = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=300, help_text="the topic name, typed"
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


class TopicPurge(ApiView):
    @writes("topic_purge", (200, 207), request=PurgeIn, held=True)
    def post(self, request, name: str, topic: str):
        """A dry run (``dry_run``: per partition the start, end, new start, records and bytes (an
        estimate) that go, the groups left below the new start), or the purge (``confirm``: the topic
        name). 422: refused as asked (nothing purged); 207: Kafka refused some partitions."""
        cluster = self.cluster(name, access.MANAGE_TOPICS)
        d = self.body(PurgeIn)
        target = reads.checked(core.from_body, topic, d)
        user = request.user
        if d["dry_run"]:
            plan = reads.dry_run(actor=user, cluster=cluster, target=target)
            return Response({**plan.as_json(), "dry_run": True})
        answer = hold(self, cluster, held.GATE, lambda: held.prepare(user, cluster, target, d["confirm"]))
        if answer is not None:
            return answer
        result = actions.purge_records(
            actor=user, cluster=cluster, target=target, confirmation=d["confirm"], source_ip=self.ip
        )
        return Response(result.as_json(), status=200 if result.ok else 207)
