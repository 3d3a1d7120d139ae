"""The one table of refusals: what each door answers when an action is refused.

An area refuses by raising its own exception (``PolicyViolation``, ``PlanRejected``...); it knows
nothing of HTTP or exit codes. This module (shared, like ``access``) maps each such class to its answer
at every door: the API's HTTP status and error code, the CLI's exit code, and the text shown to people.
The API's exception handler, ``manage.py kafka``'s base command and the pages read it through
``answer(exc)``; a page catches ``SHOWN`` (the refusals it shows inline) and words them with
``reasons(exc)`` / ``text(exc)``. A class not in the table (by MRO) is no refusal: a bug, left to the 500.

Lookup is by the exception's MRO, so a subclass (``ApprovalRequired`` of ``PermissionDenied``) finds its
own row before its base's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404

from console.acls.core import AclValidationError
from console.audit.outcomes import AuditUnavailable
from console.brokers.reads import UnknownBroker
from console.changes.gate import ApprovalRequired
from console.changes.kinds import ChangeInvalid
from console.changes.queue import RequestInvalid
from console.clusters.actions import ClusterInUse, HostnameCheckRequired, PasswordRequired
from console.configs.plan import ConfigPlanError
from console.crypto import SecretUnreadable
from console.estate.core import EstateParseError
from console.groups.actions import ConfirmationError as GroupConfirmationError
from console.groups.actions import GroupNotEmpty, NoOffsets
from console.groups.core import ResetPlanError
from console.kafka import KafkaOperationError
from console.messages.core import BrowseInvalid
from console.notify.actions import ChannelInvalid, ChannelNotFound
from console.quorum.controllers import ControllerModeRequired, LogLevelPlanError
from console.quorum.core import KraftInvalid, KraftRefused
from console.quotas.core import QuotaInvalid
from console.reassignment.actions import PlanRejected
from console.reassignment.elections import ElectionRefused
from console.reassignment.planner import PlanParseError
from console.reassignment.throttles import ThrottleError
from console.topics.batch import BatchParseError
from console.topics.delete import ConfirmationError as TopicConfirmationError
from console.topics.policy import PolicyViolation
from console.windows.actions import WindowInvalid
from console.windows.guard import ChangeWindowClosed

# manage.py kafka's exit codes (docs/cli.md); the CLI's base command re-exports them.
OK, FAILED, USAGE, DENIED, REFUSED, KAFKA, NOT_FOUND = 0, 1, 2, 3, 4, 5, 6
AUDIT_UNAVAILABLE, IN_PROGRESS = 7, 8

# Kafka's error names that are answers about the request, not failures of Kafka.
KAFKA_NOT_FOUND = frozenset(
    {"UNKNOWN_TOPIC_OR_PARTITION", "GROUP_ID_NOT_FOUND", "RESOURCE_NOT_FOUND", "UNKNOWN_TOPIC_ID"}
)
KAFKA_CONFLICT = frozenset(
    {
        "TOPIC_ALREADY_EXISTS",
        "NON_EMPTY_GROUP",
        "REASSIGNMENT_IN_PROGRESS",
        "NO_REASSIGNMENT_IN_PROGRESS",
        "ELECTION_NOT_NEEDED",
        "GROUP_SUBSCRIBED_TO_TOPIC",
    }
)
KAFKA_UNAVAILABLE = frozenset(
    {
        "REQUEST_TIMED_OUT",
        "NETWORK_EXCEPTION",
        "BROKER_NOT_AVAILABLE",
        "LEADER_NOT_AVAILABLE",
        "COORDINATOR_NOT_AVAILABLE",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "NOT_CONTROLLER",
    }
)


def kafka_status(exc: KafkaOperationError) -> int:
    """The HTTP status of a Kafka error: what kind of failure it was."""
    if exc.name in KAFKA_NOT_FOUND:
        return 404
    if exc.name in KAFKA_CONFLICT:
        return 409
    if exc.name.endswith("AUTHORIZATION_FAILED"):
        return 403
    if exc.name.startswith(("INVALID_", "UNSUPPORTED_", "MISMATCHED_")) or exc.name == "POLICY_VIOLATION":
        return 400
    if exc.name in KAFKA_UNAVAILABLE or exc.retriable:
        return 503
    return 502


def _reasons(exc: BaseException) -> list[str]:
    for attr in ("errors", "violations", "problems"):
        items = getattr(exc, attr, None)
        if items:
            return [str(i) for i in items]
    return [str(exc)]


def _messages(exc: BaseException) -> list[str]:
    return list(getattr(exc, "messages", None) or [str(exc)])


@dataclass(frozen=True)
class Row:
    """One door-independent answer: HTTP status, API error code, CLI exit code, and the wording
    (``reasons``: one sentence per problem; the text is them joined with "; ").
    ``status``/``exit`` may be functions of the exception (Kafka's errors: by their name)."""

    status: int | Callable[[BaseException], int]
    code: str
    exit: int | Callable[[BaseException], int]
    reasons: Callable[[BaseException], list[str]] = _reasons
    shown: bool = True  # a page shows it inline on the form (False: the page answers it as a whole)


@dataclass(frozen=True)
class Answer:
    """A refusal as every door gives it."""

    status: int
    code: str
    exit: int
    reasons: list[str]

    @property
    def text(self) -> str:
        return "; ".join(self.reasons)


_RULE = Row(422, "refused", REFUSED)  # an area's own rule: understood, refused, nothing changed
_NOT_FOUND = Row(404, "not_found", NOT_FOUND, shown=False)

TABLE: dict[type[BaseException], Row] = {
    # The areas' rules (policy, typed confirmation, plan checks, four eyes, invalid input).
    PolicyViolation: _RULE,
    TopicConfirmationError: _RULE,
    BatchParseError: _RULE,
    GroupConfirmationError: _RULE,
    GroupNotEmpty: _RULE,
    NoOffsets: _RULE,
    ResetPlanError: _RULE,
    PlanRejected: _RULE,
    PlanParseError: _RULE,
    ThrottleError: _RULE,
    ElectionRefused: _RULE,
    RequestInvalid: _RULE,
    ConfigPlanError: _RULE,
    AclValidationError: _RULE,
    ClusterInUse: _RULE,
    PasswordRequired: _RULE,
    LogLevelPlanError: _RULE,
    ChangeInvalid: _RULE,
    ChannelInvalid: _RULE,
    WindowInvalid: _RULE,
    QuotaInvalid: _RULE,
    # A change window forbids it (a freeze in force, or outside the maintenance windows): named, with its end.
    ChangeWindowClosed: Row(409, "change_window", REFUSED),
    KraftRefused: Row(409, "unsafe", REFUSED),  # a voter change or unregister that is unsafe now
    # Input that is not valid (a model's or the area's validation).
    ValidationError: Row(400, "invalid", REFUSED, reasons=_messages),
    EstateParseError: Row(400, "invalid", REFUSED),  # an estate file, each problem with its line
    ControllerModeRequired: Row(400, "invalid", REFUSED),
    BrowseInvalid: Row(400, "invalid", REFUSED),  # a message read that cannot be answered as asked
    KraftInvalid: Row(400, "invalid", REFUSED),  # a feature level, node or directory id, endpoint
    # Who may act.
    ApprovalRequired: Row(403, "approval_required", DENIED, shown=False),
    HostnameCheckRequired: Row(403, "permission_denied", DENIED),  # shown on the form's TLS field
    PermissionDenied: Row(403, "permission_denied", DENIED, shown=False),
    # Nothing there.
    Http404: _NOT_FOUND,
    ChannelNotFound: _NOT_FOUND,
    UnknownBroker: Row(404, "not_found", NOT_FOUND, reasons=lambda exc: ["No such broker."], shown=False),
    # The console could not do it safely: nothing was sent to Kafka.
    AuditUnavailable: Row(503, "unavailable", AUDIT_UNAVAILABLE, shown=False),
    SecretUnreadable: Row(503, "unavailable", KAFKA, shown=False),
    # Kafka answered with an error (or could not be asked).
    KafkaOperationError: Row(
        kafka_status,
        "kafka_error",
        lambda exc: NOT_FOUND if exc.name in KAFKA_NOT_FOUND else KAFKA,
        reasons=lambda exc: [f"{exc.name}: {exc.operator_text}"],
    ),
}


def row(exc_type: type[BaseException]) -> Row | None:
    """The table's row for this class or its nearest base in the table; None: no refusal."""
    for klass in exc_type.__mro__:
        if klass in TABLE:
            return TABLE[klass]
    return None


def answer(exc: BaseException) -> Answer | None:
    """How every door answers this exception; None when it is no refusal (a bug: the 500)."""
    found = row(type(exc))
    if found is None:
        return None
    status = found.status(exc) if callable(found.status) else found.status
    exit_code = found.exit(exc) if callable(found.exit) else found.exit
    return Answer(status, found.code, exit_code, found.reasons(exc))


def reasons(exc: BaseException) -> list[str]:
    """One sentence per problem, as a page lists them on its form."""
    found = answer(exc)
    return found.reasons if found is not None else [str(exc)]


def text(exc: BaseException) -> str:
    """The refusal in one line, as every door words it."""
    return "; ".join(reasons(exc))


#: What a page catches and shows inline (on its form, or as the page's error); the others
#: (permission, not found, the audit trail or a secret unreadable) answer the whole page.
SHOWN: tuple[type[BaseException], ...] = tuple(k for k, r in TABLE.items() if r.shown)
#: An area's "no such thing" (the pages answer 404 for them, as Django does for Http404).
NOT_FOUND_ERRORS: tuple[type[BaseException], ...] = tuple(
    k for k, r in TABLE.items() if r.code == "not_found" and not issubclass(k, Http404)
)
