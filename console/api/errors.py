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
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response

from console.acls.core import AclValidationError
from console.api.auth import audit_refusal
from console.audit.outcomes import AuditUnavailable
from console.changes.gate import ApprovalRequired
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import ClusterInUse, PasswordRequired
from console.configs.plan import ConfigPlanError
from console.crypto import SecretUnreadable
from console.groups.actions import ConfirmationError as GroupConfirmationError
from console.groups.actions import GroupNotEmpty, NoOffsets
from console.groups.core import ResetPlanError
from console.kafka import KafkaOperationError
from console.kafka.errors import from_code
from console.notify.actions import ChannelInvalid
from console.quorum.controllers import LogLevelPlanError
from console.reassignment.actions import PlanRejected
from console.reassignment.elections import ElectionRefused
from console.reassignment.planner import PlanParseError
from console.reassignment.throttles import ThrottleError
from console.requests.checks import RequestInvalid
from console.topics.batch import BatchParseError
from console.topics.delete import ConfirmationError as TopicConfirmationError
from console.topics.policy import PolicyViolation

log = logging.getLogger(__name__)

_NOT_FOUND = {"UNKNOWN_TOPIC_OR_PARTITION", "GROUP_ID_NOT_FOUND", "RESOURCE_NOT_FOUND", "UNKNOWN_TOPIC_ID"}
_CONFLICT = {
    "TOPIC_ALREADY_EXISTS",
    "NON_EMPTY_GROUP",
    "REASSIGNMENT_IN_PROGRESS",
    "NO_REASSIGNMENT_IN_PROGRESS",
    "ELECTION_NOT_NEEDED",
    "GROUP_SUBSCRIBED_TO_TOPIC",
}
_UNAVAILABLE = {
    "REQUEST_TIMED_OUT",
    "NETWORK_EXCEPTION",
    "BROKER_NOT_AVAILABLE",
    "LEADER_NOT_AVAILABLE",
    "COORDINATOR_NOT_AVAILABLE",
    "COORDINATOR_LOAD_IN_PROGRESS",
    "NOT_CONTROLLER",
}
# Refusals of an area's own rules: the request was understood and refused (nothing changed).
REFUSALS = (
    PolicyViolation,
    TopicConfirmationError,
    GroupConfirmationError,
    GroupNotEmpty,
    NoOffsets,
    ResetPlanError,
    PlanRejected,
    PlanParseError,
    ThrottleError,
    ElectionRefused,
    RequestInvalid,
    ConfigPlanError,
    AclValidationError,
    BatchParseError,
    ClusterInUse,
    PasswordRequired,
    LogLevelPlanError,
    ChangeInvalid,
    ChannelInvalid,
)


def kafka_status(exc: KafkaOperationError) -> int:
    if exc.name in _NOT_FOUND:
        return status.HTTP_404_NOT_FOUND
    if exc.name in _CONFLICT:
        return status.HTTP_409_CONFLICT
    if exc.name.endswith("AUTHORIZATION_FAILED"):
        return status.HTTP_403_FORBIDDEN
    if exc.name.startswith(("INVALID_", "UNSUPPORTED_", "MISMATCHED_")) or exc.name == "POLICY_VIOLATION":
        return status.HTTP_400_BAD_REQUEST
    if exc.name in _UNAVAILABLE or exc.retriable:
        return status.HTTP_503_SERVICE_UNAVAILABLE
    return status.HTTP_502_BAD_GATEWAY


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


def _reasons(exc: Exception) -> list[str]:
    for attr in ("errors", "violations", "problems"):
        items = getattr(exc, attr, None)
        if items:
            return [str(i) for i in items]
    return [str(exc)]


def handle(exc, context):
    """DRF's exception handler for the API (REST_FRAMEWORK["EXCEPTION_HANDLER"])."""
    request, view = context.get("request"), context.get("view")
    if isinstance(exc, DjangoPermissionDenied | exceptions.PermissionDenied) and request is not None:
        audit_refusal(request, view, exc)
    if (refused := refused_request(exc)) is not None:
        return error_response(*refused)
    if isinstance(exc, KafkaOperationError):
        code = kafka_status(exc)
        return error_response(code, "kafka_error", exc.operator_text, kafka=kafka_error(exc))
    if isinstance(exc, REFUSALS):
        extra = {"errors": _reasons(exc)}
        if isinstance(exc, PlanRejected) and exc.checks:
            extra["checks"] = [
                {"topic": c.topic, "partition": c.partition, "problems": list(c.problems)} for c in exc.checks
            ]
        return error_response(422, "refused", str(exc), **extra)
    if isinstance(exc, DjangoValidationError):
        return error_response(400, "invalid", "; ".join(exc.messages), errors=list(exc.messages))
    if isinstance(exc, AuditUnavailable | SecretUnreadable):
        return error_response(503, "unavailable", str(exc))
    if isinstance(exc, Http404):
        return error_response(404, "not_found", str(exc) or "Not found.")
    if isinstance(exc, ApprovalRequired):
        return error_response(403, "approval_required", str(exc))
    if isinstance(exc, DjangoPermissionDenied):
        return error_response(403, "permission_denied", str(exc) or "Permission denied.")
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
