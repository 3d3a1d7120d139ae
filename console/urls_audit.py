"""Routes of the audit area, under /audit/."""

from __future__ import annotations

from django.urls import path

from console.views import audit

urlpatterns = [
    path("", audit.audit_list, name="audit_list"),
    path("events/<int:event_id>/", audit.audit_detail, name="audit_detail"),
    path("export.csv", audit.audit_export_csv, name="audit_export_csv"),
    path("export.jsonl", audit.audit_export_jsonl, name="audit_export_jsonl"),
    path("chain/", audit.audit_chain, name="audit_chain"),
    path("chain/verify/", audit.audit_verify_all, name="audit_verify_all"),
]
