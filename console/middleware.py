"""Errors every page can meet, answered with a page that says what to do (never a 500)."""

from __future__ import annotations

import logging

from django.shortcuts import render

from console.audit.outcomes import AuditUnavailable
from console.crypto import SecretUnreadable

log = logging.getLogger(__name__)


class SecretUnreadableMiddleware:
    """A cluster whose stored SASL password no configured key decrypts: 503 with the remedy.

    The cluster's settings page does not need the password, so its admins can still enter it again
    there; every other cluster keeps working (the key problem is per stored secret).
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, SecretUnreadable):
            return None
        match = getattr(request, "resolver_match", None)
        name = (match.kwargs.get("name") if match else None) or ""
        log.warning("stored secret of cluster %r unreadable on %s", name, request.path)
        return render(
            request, "secret_unreadable.html", {"cluster_name": name, "reason": str(exception)}, status=503
        )


class AuditUnavailableMiddleware:
    """A change refused because its "requested" audit event could not be written: 503, nothing sent."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, AuditUnavailable):
            return None
        log.warning("change refused on %s: %s", request.path, exception)
        return render(request, "audit_unavailable.html", {"reason": str(exception)}, status=503)
