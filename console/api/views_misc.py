"""API: self-service requests (submit, approve, reject, cancel), the audit trail (search, export, chain
status and full verification), capacity reports and their runs, the KRaft quorum."""

from __future__ import annotations

from datetime import timedelta

from django.http import Http404, StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, paged, plain
from console.api.held import change_json
from console.api.idempotency import idempotent
from console.api.views_acls_groups import form_data
from console.api.views_ops import operation_json
from console.audit import chain as chain_reads
from console.audit import export as audit_export
from console.audit import review as audit_review
from console.forms.audit import AuditFilterForm
from console.quorum import actions as quorum
from console.requests import actions as requests
from console.requests import kinds as request_kinds
from console.telemetry import capacity
from console.telemetry import snapshots as telemetry
from pipeline import config as pipeline_config

ERRORS = {400: s.ErrorBody, 403: s.ErrorBody, 404: s.ErrorBody, 422: s.ErrorBody}


def request_json(req, *, steps: bool = False) -> dict:
    body = {
        "id": req.pk,
        "kind": req.kind,
        "kind_label": request_kinds.label(req),
        "resource": req.resource,
        "state": req.state,
        "payload": req.payload,
        "reason": req.reason,
        "requested_by": req.requested_by_name,
        "decided_by": req.decided_by_name,
        "created_at": plain(getattr(req, "created_at", None)),
    }
    if req.gated:  # a held operator action: what the approvers review
        body.update({k: v for k, v in change_json(req).items() if k not in body and k != "request"})
    if steps:
        body["timeline"] = [
            {
                "step": e.step,
                "actor": e.actor_name,
                "text": getattr(e, "text", ""),
                "at": plain(getattr(e, "created_at", None)),
            }
            for e in req.events.all()
        ]
    return body


class RequestList(ApiView):
    @extend_schema(operation_id="requests_list", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name)
        rows = requests.list_requests(actor=request.user, cluster=cluster)
        return Response(paged(rows, request, request_json))

    @extend_schema(
        operation_id="requests_submit", request=s.RequestIn, responses={201: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.REQUEST)
        data = s.RequestIn(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        req = requests.submit_request(
            actor=request.user,
            cluster=cluster,
            kind=d["kind"],
            payload=d["payload"],
            reason=d["reason"],
            source_ip=self.ip,
        )
        return Response(request_json(req, steps=True), status=201)


def _request(view: ApiView, name: str, request_id: int, perm: str = access.VIEW):
    cluster = view.cluster(name, perm)
    req = requests.get_request(actor=view.request.user, cluster=cluster, request_id=request_id)
    if req is None:
        raise Http404("No such request.")
    return req


class RequestDetail(ApiView):
    @extend_schema(operation_id="requests_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str, request_id: int):
        return Response(request_json(_request(self, name, request_id), steps=True))


def _decide(view: ApiView, request, name: str, request_id: int, approve: bool) -> Response:
    req = _request(view, name, request_id, access.APPROVE)
    data = s.DecisionIn(data=request.data)
    data.is_valid(raise_exception=True)
    req = requests.decide(
        actor=request.user,
        request=req,
        approve=approve,
        comment=data.validated_data["comment"],
        source_ip=view.ip,
    )
    return Response(request_json(req, steps=True))


class RequestApprove(ApiView):
    @extend_schema(
        operation_id="requests_approve", request=s.DecisionIn, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str, request_id: int):
        return _decide(self, request, name, request_id, approve=True)


class RequestReject(ApiView):
    @extend_schema(
        operation_id="requests_reject", request=s.DecisionIn, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str, request_id: int):
        return _decide(self, request, name, request_id, approve=False)


class RequestCancel(ApiView):
    @extend_schema(
        operation_id="requests_cancel", request=None, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str, request_id: int):
        req = requests.cancel_request(
            actor=request.user, request=_request(self, name, request_id), source_ip=self.ip
        )
        return Response(request_json(req, steps=True))


# -- audit -----------------------------------------------------------------------------------------

AUDIT_PARAMS = [
    OpenApiParameter(p, str, required=False)
    for p in ("actor", "action", "cluster", "resource", "outcome", "since", "until", "before", "after")
]


def _int_param(request, name: str) -> int | None:
    value = request.query_params.get(name, "")
    return int(value) if value.isdigit() and len(value) < 19 else None


def _audit_filter(request):
    form = AuditFilterForm(request.query_params or None)
    if form.is_bound:
        form_data(form)
    return form.to_filter()


class AuditEvents(ApiView):
    @extend_schema(
        operation_id="audit_search", parameters=AUDIT_PARAMS, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    def get(self, request):
        """Newest first, one page; ``older_than`` is the ``before`` of the next page."""
        page = audit_review.search_events(
            actor=request.user,
            audit_filter=_audit_filter(request),
            before=_int_param(request, "before"),
            after=_int_param(request, "after"),
        )
        return Response(
            {
                "results": [plain(e) for e in page.events],
                "older_than": page.older_than,
                "newer_than": page.newer_than,
            }
        )


class AuditEvent(ApiView):
    @extend_schema(operation_id="audit_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, event_id: int):
        event = audit_review.get_event(actor=request.user, event_id=event_id)
        if event is None:
            raise Http404("No such audit event.")
        fields = (
            "id",
            "created_at",
            "actor_name",
            "on_behalf_of",
            "source_ip",
            "cluster_name",
            "action",
            "targets",
        )
        more = (
            "params",
            "before",
            "after",
            "outcomes",
            "outcome",
            "operation_id",
            "request_id",
            "prev_hash",
            "hash",
        )
        return Response({f: plain(getattr(event, f)) for f in fields + more})


class AuditExport(ApiView):
    @extend_schema(
        operation_id="audit_export",
        parameters=[*AUDIT_PARAMS, OpenApiParameter("fmt", str, enum=["jsonl", "csv"], required=False)],
        responses={
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            (200, "text/csv"): OpenApiTypes.STR,
            **ERRORS,
        },
    )
    def get(self, request):
        fmt = request.query_params.get("fmt", "jsonl")  # not "format": DRF's renderer override
        if fmt not in ("jsonl", "csv"):
            from django.core.exceptions import ValidationError

            raise ValidationError(["fmt is jsonl or csv."])
        qs = audit_export.start_export(
            actor=request.user, audit_filter=_audit_filter(request), fmt=fmt, source_ip=self.ip
        )
        rows, ctype = (
            (audit_export.export_csv, "text/csv; charset=utf-8")
            if fmt == "csv"
            else (audit_export.export_jsonl, "application/x-ndjson; charset=utf-8")
        )
        response = StreamingHttpResponse(rows(qs), content_type=ctype)
        response["Content-Disposition"] = (
            f'attachment; filename="audit-{timezone.now():%Y%m%dT%H%M%SZ}.{fmt}"'
        )
        return response


class AuditChain(ApiView):
    @extend_schema(operation_id="audit_chain_status", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request):
        status = chain_reads.chain_status(actor=request.user)
        latest = chain_reads.latest_verify()
        return Response(
            {**plain(status), "verification": operation_json(latest) if latest and status else None}
        )

    @extend_schema(
        operation_id="audit_chain_verify", request=None, responses={202: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request):
        """Queue the full re-verification of the chain; follow it at /api/v1/operations/<id>/."""
        op = chain_reads.start_verify(actor=request.user, source_ip=self.ip)
        return Response(operation_json(op), status=202)


# -- capacity and quorum ---------------------------------------------------------------------------


class Capacity(ApiView):
    @extend_schema(operation_id="capacity_report", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name)
        return Response(plain(capacity.capacity_report(cluster)))


class CapacityRun(ApiView):
    @extend_schema(
        operation_id="capacity_run", request=s.CapacityRunIn, responses={202: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.RUN_OPERATIONS)
        data = s.CapacityRunIn(data=request.data)
        data.is_valid(raise_exception=True)
        days = data.validated_data.get("days") or pipeline_config.load().window_days
        now = timezone.now()
        op = capacity.start_pipeline_run(
            actor=request.user,
            cluster=cluster,
            since=now - timedelta(days=days),
            until=now,
            source_ip=self.ip,
        )
        return Response(operation_json(op), status=202)


class CapacitySnapshot(ApiView):
    @extend_schema(
        operation_id="capacity_snapshot", request=None, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.RUN_OPERATIONS)
        return Response(plain(telemetry.collect_snapshot(actor=request.user, cluster=cluster)))


class Quorum(ApiView):
    @extend_schema(operation_id="quorum_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        return Response(plain(quorum.describe_quorum(actor=request.user, cluster=self.cluster(name))))
