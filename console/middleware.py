"""Errors any page can meet, answered with a page that says what to do (never a 500), status 503.

* ``SecretUnreadable``: a cluster's stored SASL password no configured key decrypts. The cluster's
  settings page does not need it, so its admins can still enter it again there; every other
  cluster keeps working (the key problem is per stored secret).
* ``AuditUnavailable``: a change whose "requested" audit event could not be written; nothing was
  sent to Kafka.

``RefusedPostsMiddleware`` records a POST the web layer refused (PermissionDenied before any
area action ran) in the audit trail as outcome "refused"; refusals inside an area's action are
recorded there (console/audit/refusals.py) and not twice.
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied
from django.shortcuts import render

from console.audit.outcomes import AuditUnavailable
from console.audit.refusals import record_refused_request
from console.crypto import SecretUnreadable

log = logging.getLogger(__name__)

TEMPLATES = {SecretUnreadable: "secret_unreadable.html", AuditUnavailable: "audit_unavailable.html"}


class ExplainedErrorsMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        template = TEMPLATES.get(type(exception))
        if template is None:
            return None
        match = getattr(request, "resolver_match", None)
        name = (match.kwargs.get("name") if match else None) or ""
        log.warning("%s on %s: %s", type(exception).__name__, request.path, exception)
        return render(request, template, {"cluster_name": name, "reason": str(exception)}, status=503)


class RefusedPostsMiddleware:
    """A refused POST (PUT, PATCH, DELETE) is an attempted change: audit it as "refused"."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if request.method in ("GET", "HEAD", "OPTIONS") or not isinstance(exception, PermissionDenied):
            return None
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        record_refused_request(request, exception, door="http", source_ip=request.META.get("REMOTE_ADDR"))
        return None  # Django answers 403 as before
