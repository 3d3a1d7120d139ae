"""API: the estate as code - export (JSON, or the YAML file with ``?output=yaml``), plan (the diff, ``drift: true|false``) and apply
(the plan submitted as one change held for approval: 202 with the held change)."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.response import Response

from console.api.base import ApiView, query, reads, writes
from console.api.held import change_json
from console.estate import held
from console.estate import reads as estate_reads
from console.estate.plan import CHECKED_COLUMNS

YAML_TYPE = "application/yaml; charset=utf-8"


class ExportQuery(serializers.Serializer):
    namespace = serializers.CharField(required=False, default="", allow_blank=True, max_length=249)
    output = serializers.ChoiceField(choices=("json", "yaml"), default="json")


class PlanIn(serializers.Serializer):
    text = serializers.CharField(help_text="the estate YAML document", trim_whitespace=False)
    delete = serializers.BooleanField(
        default=False, help_text="delete what the scope holds and the file does not list (else kept)"
    )


class ApplyIn(PlanIn):
    reason = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="shown to the approvers"
    )


class EstateExport(ApiView):
    @reads(
        "estate_export",
        {(200, "application/json"): OpenApiTypes.OBJECT, (200, "application/yaml"): OpenApiTypes.STR},
        parameters=[
            OpenApiParameter(
                "namespace", OpenApiTypes.STR, description="a topic-name prefix (default: the cluster)"
            ),
            OpenApiParameter("output", OpenApiTypes.STR, enum=["json", "yaml"], description="default json"),
        ],
    )
    def get(self, request, name: str):
        """The cluster's (or a namespace's) topics, overridden configs and ACL bindings."""
        cluster = self.cluster(name)
        q = query(ExportQuery, request)
        if q["output"] == "json":
            return Response(
                estate_reads.export_document(actor=request.user, cluster=cluster, namespace=q["namespace"])
            )
        text = estate_reads.export_estate(actor=request.user, cluster=cluster, namespace=q["namespace"])
        return HttpResponse(text, content_type=YAML_TYPE)


class EstatePlan(ApiView):
    @writes("estate_plan", request=PlanIn)
    def post(self, request, name: str):
        """The file's diff against the cluster, checked by Kafka's validate-only (changes nothing)."""
        cluster = self.cluster(name)
        d = self.body(PlanIn)
        plan = estate_reads.plan_estate(
            actor=request.user, cluster=cluster, text=d["text"], delete=d["delete"]
        )
        return Response(
            {
                "drift": plan.drift,
                "ok": plan.ok,
                "changes": plan.changes,
                "refused": plan.refused,
                "columns": CHECKED_COLUMNS,
                "rows": plan.checked_rows(),
            }
        )


class EstateApply(ApiView):
    @writes("estate_apply", 202, request=ApplyIn)
    def post(self, request, name: str):
        """Submit the file's plan as one change held for approval by someone else (always)."""
        cluster = self.cluster(name)
        d = self.body(ApplyIn)
        req = held.submit_plan(
            actor=request.user, cluster=cluster, text=d["text"], delete=d["delete"], reason=d["reason"],
            source_ip=self.ip,
        )  # fmt: skip
        return Response(change_json(req), status=202)
