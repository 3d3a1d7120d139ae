"""Every API error is JSON: ``{"error": {"status", "code", "message", ...}}``, never an HTML page or a 500.

A Kafka error carries Kafka's own name and numeric code (``error.kafka``) and the operator's text as
the message; the HTTP status says what kind of failure it was (see docs/api.md). Area refusals
(policy, confirmation, plan checks) are 422 with their reasons in ``error.errors``.

``handle`` answers what a view raises (DRF's exception handler); ``bad_request``, ``permission_denied``,
``page_not_found`` and ``server_error`` are Django's handlers (console/urls.py): the API's JSON for
a path under /api/ (no route, a body over DATA_UPLOAD_MAX_MEMORY_SIZE, a bug), the pages otherwise.
"""

from __future__ import annotations

import functools
import logging

from django.conf import settings
from django.core.exceptions import BadRequest, RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from rest_framework import exceptions
from rest_framework.response import Response

from console import refusals
from console.api.auth import audit_refusal
from console.kafka import KafkaOperationError
from console.kafka.errors import from_code
from console.reassignment.actions import PlanRejected

log = logging.getLogger(__name__)

kafka_status = refusals.kafka_status  # the status of a Kafka error, from the one table


# Refusals the console itself puts in a per-resource outcome (not Kafka error names).
CONSOLE_OUTCOME_ERRORS = {"POLICY", "PROTECTED"}


@functools.cache
def _kafka_codes() -> dict[str, int]:
    """Kafka's error names and their numeric codes (from the gateway's own table)."""
    found = {}
    for code in range(-1, 200):
        err = from_code(code)
        if err is not None:
            found[err.name] = code
    return found


def kafka_code(name: str) -> int | None:
    return _kafka_codes().get(name)


def outcome_status(error_name: str) -> int:
    """The HTTP status of a request whose only resource failed with this error name."""
    if not error_name or error_name in CONSOLE_OUTCOME_ERRORS or kafka_code(error_name) is None:
        return 422
    return kafka_status(KafkaOperationError(kafka_code(error_name), error_name))


def outcome_error(http_status: int, error_name: str, message: str) -> dict:
    """The ``error`` member of a failed single-resource answer, as every other error body has it."""
    if error_name in CONSOLE_OUTCOME_ERRORS or kafka_code(error_name) is None:
        return {"status": http_status, "code": "refused", "message": message, "errors": [message]}
    kafka = {"name": error_name, "code": kafka_code(error_name), "message": message}
    return {"status": http_status, "code": "kafka_error", "message": message, "kafka": kafka}


def kafka_error(exc: KafkaOperationError) -> dict:
    """Kafka's error as the API shows it, inside an error body or a per-resource result."""
    return {"name": exc.name, "code": exc.code, "retriable": exc.retriable, "message": exc.operator_text}


def body(http_status: int, code: str, message: str, **extra) -> dict:
    return {"error": {"status": http_status, "code": code, "message": message, **extra}}


def error_response(http_status: int, code: str, message: str, **extra) -> Response:
    return Response(body(http_status, code, message, **extra), status=http_status)


def refused_request(exc: BaseException) -> tuple[int, str, str] | None:
    """Django's own refusal of a request (its body too large, a malformed request) as the API answers it."""
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return 413, "too_large", f"The request body is over {limit:,} bytes (DATA_UPLOAD_MAX_MEMORY_SIZE)."
    if isinstance(exc, SuspiciousOperation | BadRequest):
        return 400, "bad_request", "The request is malformed."
    return None


_DEFAULT_TEXT = {"permission_denied": "Permission denied.", "not_found": "Not found."}


def _message(exc: Exception, refused: refusals.Answer) -> str:
    if isinstance(exc, KafkaOperationError):
        return exc.operator_text  # Kafka's name and code are in error.kafka
    if refused.code == "invalid" or (refused.code == "not_found" and not isinstance(exc, Http404)):
        return refused.text
    return str(exc) or _DEFAULT_TEXT.get(refused.code, refused.text)


def _extra(exc: Exception, refused: refusals.Answer) -> dict:
    """What an error body carries beside its message: Kafka's error, the reasons, a plan's checks."""
    if isinstance(exc, KafkaOperationError):
        return {"kafka": kafka_error(exc)}
    if refused.code not in ("refused", "invalid"):
        return {}
    extra = {"errors": refused.reasons}
    if isinstance(exc, PlanRejected) and exc.checks:
        extra["checks"] = [
            {"topic": c.topic, "partition": c.partition, "problems": list(c.problems)} for c in exc.checks
        ]
    return extra


def handle(exc, context):
    """DRF's exception handler for the API (REST_FRAMEWORK["EXCEPTION_HANDLER"])."""
    request, view = context.get("request"), context.get("view")
    if isinstance(exc, DjangoPermissionDenied | exceptions.PermissionDenied) and request is not None:
        audit_refusal(request, view, exc)
    if (refused := refused_request(exc)) is not None:
        return error_response(*refused)
    if (refused := refusals.answer(exc)) is not None:
        return error_response(refused.status, refused.code, _message(exc, refused), **_extra(exc, refused))
    if isinstance(exc, exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        return error_response(400, "invalid", "The request body or query is not valid.", fields=fields)
    if isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        response = error_response(
            exc.status_code, codes if isinstance(codes, str) else "error", str(exc.detail)
        )
        if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
            response["WWW-Authenticate"] = 'Bearer realm="api"'
        if getattr(exc, "wait", None):
            response["Retry-After"] = str(int(exc.wait))
        return response
    return None  # anything else is a bug: Django's 500 handling logs it


def _api(request) -> bool:
    return request.path_info.startswith("/api/")


def _json(http_status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse(body(http_status, code, message), status=http_status)


def bad_request(request, exception) -> HttpResponse:
    """handler400: a request Django refused before any view (413 for a body too large)."""
    if not _api(request):
        return defaults.bad_request(request, exception)
    return _json(*(refused_request(exception) or (400, "bad_request", "The request is malformed.")))


def permission_denied(request, exception) -> HttpResponse:
    """handler403."""
    if not _api(request):
        return defaults.permission_denied(request, exception)
    return _json(403, "permission_denied", str(exception) or "Permission denied.")


def page_not_found(request, exception) -> HttpResponse:
    """handler404: also a path no API route matches (an id that is no number, a name no slug)."""
    if not _api(request):
        return defaults.page_not_found(request, exception)
    return _json(404, "not_found", "Nothing is found at this address of the API.")


def server_error(request) -> HttpResponse:
    """handler500: a bug (logged by Django); the API's client still gets JSON."""
    if not _api(request):
        return defaults.server_error(request)
    return _json(500, "server_error", "The console failed to answer; the error was logged.")


def lockout(request, original_response=None, credentials=None) -> HttpResponse:
    """django-axes' answer to a locked-out address (AXES_LOCKOUT_CALLABLE): the API's JSON error for
    /api/, the console's page for a web log-in; 429 with the cool-off as Retry-After either way."""
    wait = int(settings.AXES_COOLOFF_TIME.total_seconds())
    if request.path.startswith("/api/"):
        text = "Too many failed token attempts from this address; a valid token still works."
        response = JsonResponse(body(429, "throttled", text), status=429)
    else:
        response = render(request, "console/locked_out.html", status=429)
    response["Retry-After"] = str(wait)
    return response
