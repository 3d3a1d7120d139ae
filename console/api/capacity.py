"""API: capacity reports (telemetry), their pipeline runs and an on-demand snapshot."""

from __future__ import annotations

from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, plain, reads, writes
from console.api.operations import operation_json
from console.telemetry import capacity
from console.telemetry import snapshots as telemetry


class Capacity(ApiView):
    @reads("capacity_report")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        return Response(plain(capacity.capacity_report(cluster)))


class CapacityRun(ApiView):
    @writes("capacity_run", 202, request=s.CapacityRunIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.RUN_OPERATIONS)
        days = self.body(s.CapacityRunIn).get("days")
        op = capacity.start_pipeline_run(actor=request.user, cluster=cluster, days=days, source_ip=self.ip)
        return Response(operation_json(op), status=202)


class CapacitySnapshot(ApiView):
    @writes("capacity_snapshot", request=None)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.RUN_OPERATIONS)
        return Response(plain(telemetry.collect_snapshot(actor=request.user, cluster=cluster)))
