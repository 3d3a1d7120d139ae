"""API: the audit trail (search, one event, export) and its hash chain (status, full verification)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import Http404, StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from console.api.base import ApiView, form_data, plain, reads, writes
from console.api.operations import operation_json
from console.audit import export as audit_export
from console.audit import review as audit_review
from console.forms.audit import AuditFilterForm
from console.integrity import chain as chain_reads

AUDIT_PARAMS = [
    OpenApiParameter(p, str, required=False)
    for p in ("actor", "action", "cluster", "resource", "outcome", "since", "until", "before", "after")
] + [OpenApiParameter("external", bool, required=False, description="only changes made outside the console")]


def _int_param(request, name: str) -> int | None:
    value = request.query_params.get(name, "")
    return int(value) if value.isdigit() and len(value) < 19 else None


def _audit_filter(request):
    form = AuditFilterForm(request.query_params or None)
    if form.is_bound:
        form_data(form)
    return form.to_filter()


class AuditEvents(ApiView):
    @reads("audit_search", parameters=AUDIT_PARAMS)
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
    @reads("audit_retrieve")
    def get(self, request, event_id: int):
        event = audit_review.get_event(actor=request.user, event_id=event_id)
        if event is None:
            raise Http404("No such audit event.")
        return Response({f: plain(getattr(event, f)) for f in audit_export.EXPORT_FIELDS})  # as exported


class AuditExport(ApiView):
    @reads(
        "audit_export",
        {(200, "application/x-ndjson"): OpenApiTypes.STR, (200, "text/csv"): OpenApiTypes.STR},
        parameters=[*AUDIT_PARAMS, OpenApiParameter("fmt", str, enum=["jsonl", "csv"], required=False)],
    )
    def get(self, request):
        fmt = request.query_params.get("fmt", "jsonl")  # not "format": DRF's renderer override
        if fmt not in ("jsonl", "csv"):
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
    @reads("audit_chain_status")
    def get(self, request):
        status = chain_reads.chain_status(actor=request.user)
        latest = chain_reads.latest_verify()
        return Response(
            {**plain(status), "verification": operation_json(latest) if latest and status else None}
        )

    @writes("audit_chain_verify", 202, request=None)
    def post(self, request):
        """Queue the full re-verification of the chain; follow it at /api/v1/operations/<id>/."""
        op = chain_reads.start_verify(actor=request.user, source_ip=self.ip)
        return Response(operation_json(op), status=202)
