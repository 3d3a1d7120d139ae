"""Audit review pages: search, detail, streamed export, chain status (auditors and admins)."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from console.audit import export as audit_export
from console.audit import review as audit_review
from console.forms.audit import AuditFilterForm
from console.integrity import chain as chain_reads
from console.views import htmx
from console.views._helpers import client_ip


def _int_param(request, name: str) -> int | None:
    value = request.GET.get(name, "")
    return int(value) if value.isdigit() and len(value) < 19 else None


@login_required
@require_GET
def audit_list(request):
    form = AuditFilterForm(request.GET or None)
    valid = form.is_bound is False or form.is_valid()
    audit_filter = form.to_filter()
    page = audit_review.search_events(
        actor=request.user,
        audit_filter=audit_filter,
        before=_int_param(request, "before"),
        after=_int_param(request, "after"),
    )
    query = urlencode(audit_filter.as_params())
    context = {"form": form, "page": page, "events": page.events if valid else [], "query": query}
    return htmx.fragment_or_page(request, "console/audit_list.html", "console/_audit_results.html", context)


@login_required
@require_GET
def audit_detail(request, event_id: int):
    event = audit_review.get_event(actor=request.user, event_id=event_id)
    if event is None:
        raise Http404("No such audit event.")
    pretty = {
        name: json.dumps(getattr(event, name), indent=2, sort_keys=True, ensure_ascii=False)
        for name in ("targets", "params", "before", "after", "outcomes")
    }
    return render(
        request,
        "console/audit_detail.html",
        {
            "event": event,
            "pretty": pretty,
            "changes": [_shown(c) for c in audit_review.diff(event.before, event.after)],
        },
    )


def _shown(change: dict) -> dict:
    """Diff values as JSON text (dicts and lists included), None as a dash in the template."""
    as_json = {
        k: None if change[k] is None else json.dumps(change[k], ensure_ascii=False)
        for k in ("before", "after")
    }
    return {**change, **as_json}


def _export(request, fmt: str, rows, content_type: str):
    form = AuditFilterForm(request.GET or None)
    if form.is_bound and not form.is_valid():
        return HttpResponseBadRequest("Fix the filter before exporting.")
    qs = audit_export.start_export(
        actor=request.user, audit_filter=form.to_filter(), fmt=fmt, source_ip=client_ip(request)
    )
    response = StreamingHttpResponse(rows(qs), content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.{fmt}"'
    return response


@login_required
@require_GET
def audit_export_csv(request):
    return _export(request, "csv", audit_export.export_csv, "text/csv; charset=utf-8")


@login_required
@require_GET
def audit_export_jsonl(request):
    return _export(request, "jsonl", audit_export.export_jsonl, "application/x-ndjson; charset=utf-8")


def _verify_context(request, op) -> dict:
    """The full-verification operation as the chain fragment shows it (link only where it opens)."""
    if op is None:
        return {"verify_op": None}
    # Operations without a cluster (this one) open for superusers only (views/_helpers.py).
    visible = request.user.is_superuser or op.created_by_id == request.user.pk
    return {"verify_op": op, "verify_polling": not op.finished, "verify_link": visible}


@login_required
@require_GET
def audit_chain(request):
    """The chain status (incremental check); with ?op=N, only the full-verification progress."""
    op_id = _int_param(request, "op")
    if op_id is not None:
        op = chain_reads.get_verify(actor=request.user, op_id=op_id)
        if op is None:
            raise Http404("No such verification.")
        context = _verify_context(request, op)
        return htmx.polled_fragment(request, "console/_audit_verify.html", context, finished=op.finished)
    status = chain_reads.chain_status(actor=request.user)
    context = {"status": status, **_verify_context(request, chain_reads.latest_verify())}
    # Only the audit page's htmx asks for it: the fragment, whoever asks.
    return htmx.fragment_or_page(request, "console/_audit_chain.html", None, context)


@login_required
@require_POST
def audit_verify_all(request):
    """Queue the full re-walk from the archive anchor as an Operation; show its progress."""
    op = chain_reads.start_verify(actor=request.user, source_ip=client_ip(request))
    status = chain_reads.chain_status(actor=request.user)
    context = {"status": status, **_verify_context(request, op)}
    return htmx.fragment_or_page(request, "console/_audit_chain.html", None, context)
