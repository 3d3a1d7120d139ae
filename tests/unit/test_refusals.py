"""One table of refusals (console/refusals.py): every door answers a refusal the same way.

The table holds every exception a door can meet (found by scanning console/); the API's handler,
``manage.py kafka``'s base command and the pages give, for each entry, the status, the API error code,
the exit code and the words the table says.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import CommandError
from django.http import Http404, HttpResponse
from django.urls import include, path

from console import refusals
from console.acls.core import AclValidationError
from console.api import errors as api_errors
from console.audit.outcomes import AuditUnavailable
from console.brokers.reads import UnknownBroker
from console.changes.gate import ApprovalRequired
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import ClusterInUse, HostnameCheckRequired, PasswordRequired
from console.configs.plan import ConfigPlanError
from console.crypto import SecretUnreadable
from console.estate.core import EstateParseError
from console.groups.actions import ConfirmationError as GroupConfirmationError
from console.groups.actions import GroupNotEmpty, NoOffsets
from console.groups.core import ResetPlanError
from console.kafka import KafkaOperationError
from console.management.cli.base import CommandBase
from console.messages.core import BrowseInvalid
from console.notify.actions import ChannelInvalid, ChannelNotFound
from console.quorum.controllers import ControllerModeRequired, LogLevelPlanError
from console.quorum.core import KraftInvalid, KraftRefused
from console.quotas.core import QuotaInvalid
from console.reassignment.actions import PlanRejected
from console.reassignment.elections import ElectionRefused
from console.reassignment.planner import PlanParseError
from console.reassignment.throttles import ThrottleError
from console.requests.checks import RequestInvalid
from console.topics.batch import BatchParseError
from console.topics.delete import ConfirmationError as TopicConfirmationError
from console.topics.policy import PolicyViolation
from console.views._helpers import not_found_is_404
from console.windows.actions import WindowInvalid
from console.windows.guard import ChangeWindowClosed

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = ROOT / "console"
VIEWS = CONSOLE / "views"

# One instance of every class in the table, as an area raises it.
SAMPLES = {
    PolicyViolation: lambda: PolicyViolation(["partitions 5000 > 1000", "retention.ms not allowed"]),
    TopicConfirmationError: lambda: TopicConfirmationError("The confirmation does not match."),
    BatchParseError: lambda: BatchParseError(["line 2: no name"]),
    GroupConfirmationError: lambda: GroupConfirmationError("Type the group id to confirm."),
    GroupNotEmpty: lambda: GroupNotEmpty("The group has 2 members."),
    NoOffsets: lambda: NoOffsets("The group has no offsets of 'orders'."),
    ResetPlanError: lambda: ResetPlanError(["no partitions", "bad timestamp"]),
    PlanRejected: lambda: PlanRejected("Dry run first."),
    PlanParseError: lambda: PlanParseError("not JSON", line=1, column=2),
    ThrottleError: lambda: ThrottleError("The throttle must be at least 1 MB/s."),
    ElectionRefused: lambda: ElectionRefused("No partition needs an election."),
    RequestInvalid: lambda: RequestInvalid(["outside your namespace"]),
    ConfigPlanError: lambda: ConfigPlanError(["unknown key x", "bad value y"]),
    AclValidationError: lambda: AclValidationError(["principal missing"]),
    ClusterInUse: lambda: ClusterInUse("Cluster 'c' cannot be removed: 1 operation runs."),
    PasswordRequired: lambda: PasswordRequired({"sasl_password": "Enter the SASL password."}),
    LogLevelPlanError: lambda: LogLevelPlanError(["unknown level LOUD"]),
    ChangeInvalid: lambda: ChangeInvalid(["nothing to change", "stale snapshot"]),
    ChannelInvalid: lambda: ChannelInvalid(["the URL is private"]),
    ValidationError: lambda: ValidationError(["Pick a role.", "Pick a user."]),
    EstateParseError: lambda: EstateParseError(["line 3: unknown key 'x' in the document"]),
    WindowInvalid: lambda: WindowInvalid(["the end is before the start"]),
    QuotaInvalid: lambda: QuotaInvalid(["producer_byte_rate must be greater than 0"]),
    KraftInvalid: lambda: KraftInvalid(["metadata.version: level 'x' is not a whole number"]),
    KraftRefused: lambda: KraftRefused(["101 is the last voter"]),
    ChangeWindowClosed: lambda: ChangeWindowClosed(
        "Frozen by window #4 (release) until 2026-12-01 06:00 UTC."
    ),
    ControllerModeRequired: lambda: ControllerModeRequired("The cluster is registered with brokers."),
    BrowseInvalid: lambda: BrowseInvalid("offset 3 is below the log start 120 of partition 0"),
    ApprovalRequired: lambda: ApprovalRequired("Change control holds this action for approval."),
    HostnameCheckRequired: lambda: HostnameCheckRequired("Only an admin may turn the hostname check off."),
    PermissionDenied: lambda: PermissionDenied("You may not manage topics."),
    Http404: lambda: Http404("No such cluster."),
    ChannelNotFound: lambda: ChannelNotFound("No channel 7."),
    UnknownBroker: lambda: UnknownBroker("42"),
    AuditUnavailable: lambda: AuditUnavailable("The audit trail refused the event."),
    SecretUnreadable: lambda: SecretUnreadable("No key decrypts the SASL password."),
    KafkaOperationError: lambda: KafkaOperationError(36, "TOPIC_ALREADY_EXISTS", "exists", False),
}
KAFKA_SAMPLES = [
    KafkaOperationError(3, "UNKNOWN_TOPIC_OR_PARTITION", "", False),
    KafkaOperationError(69, "GROUP_ID_NOT_FOUND", "", False),
    KafkaOperationError(100, "UNKNOWN_TOPIC_ID", "", False),
    KafkaOperationError(7, "REQUEST_TIMED_OUT", "timed out", True),
    KafkaOperationError(29, "TOPIC_AUTHORIZATION_FAILED", "", False),
    KafkaOperationError(37, "INVALID_PARTITIONS", "", False),
    KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "", False),
]

# Exceptions of console/ that no door answers as a refusal, and why (a new exception class must be
# put in the table or here).
NOT_REFUSALS = {
    "PlanError": "log dirs: the pure core's input checks, turned into LogDirInvalid (reads.checked) or form errors",
    "ShareInputError": "share groups: the pure core's input checks, turned into ShareInvalid (reads.checked)",
    "PacingInvalid": "reassignment: the pure pacing checks, turned into PlanRejected (actions.checked_pacing) "
    "or form errors",
    "Refused": "identity: an SSO log-in refused, answered by the log-in page (console/views/sso.py)",
    "AddressRefused": "notify: a delivery's egress check, recorded on the delivery, never raised to a door",
    "PatternError": "a glob's syntax, turned into a form or serializer error by the caller",
    "ReassignmentGone": "reassignment worker: a step's outcome",
    "ThrottlesOwed": "reassignment worker: retried until the throttles are removed",
    "Drifted": "change control's execute: the change goes back for review (a worker outcome)",
    "TokenInvalid": "API authentication: answered by DRF as authentication_failed",
    "TokenRefused": "API authentication: answered by DRF as authentication_failed",
    "UploadError": "the API's body parser: answered as a DRF ParseError (400 parse_error)",
    "_LibyamlTooDeep": "the upload parser's own signal, turned into UploadError",
    "AuditImmutableError": "a bug: audit rows are never changed",
    "AnchorError": "the audit CLI's verify reads an anchor file: its own usage error",
    "TargetError": "purge: the pure core's input checks, turned into PurgeInvalid (reads.checked) or form errors",
    "TxnInputError": "transactions: the pure core's input checks, turned into TxnInvalid (reads.checked)",
    "AuditArchiveError": "a maintenance command's own error",
    "Interrupted": "process supervision (console/processes.py)",
    "ChildFailed": "process supervision (console/processes.py)",
    "Indeterminate": "requests worker: a step's outcome",
    "LostClaim": "the operation runner: another worker owns the operation",
    "SecretsUnreadable": "key rotation's own command answers it",
    "_Invalid": "estate's document reader: one node's problem, turned into EstateParseError with its line",
    "Unreachable": "the alert evaluator: a cluster whose Metadata cannot be read is the cluster_unreachable alert",
    "AssignmentSyntaxError": "topics' assignment parser: each door turns it into its own usage or form error naming the formats",
    "HeldInstead": "the CLI's signal that the action was held (or broke glass): it shows the held change, exit 0",
    "RuleInvalid": "messages: a masking rule or JSON path that cannot apply, turned into ValidationError / BrowseInvalid",
    "PathInvalid": "messages: a JSON path that does not parse, turned into RuleInvalid",
}


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in console/ (by ast, then imported), keyed by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for file in CONSOLE.rglob("*.py"):
        rel = file.relative_to(ROOT)
        if "migrations" in rel.parts or rel.name in ("gunicorn_conf.py", "wsgi.py"):
            continue
        tree = ast.parse(file.read_text(encoding="utf-8"))
        names = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.bases]
        if not names:
            continue
        module = importlib.import_module(".".join(rel.with_suffix("").parts).removesuffix(".__init__"))
        for name in names:
            klass = getattr(module, name, None)
            if isinstance(klass, type) and issubclass(klass, BaseException):
                found[f"{module.__name__}.{name}"] = klass
    return found


def test_it_has_every_exception_of_the_console_in_the_table_or_says_why_not():
    classes = _exception_classes()
    assert len(classes) > 30  # the scan found the areas' exceptions
    unplaced = sorted(
        q for q, k in classes.items() if refusals.row(k) is None and k.__name__ not in NOT_REFUSALS
    )
    assert unplaced == []
    both = sorted(q for q, k in classes.items() if refusals.row(k) is not None and k.__name__ in NOT_REFUSALS)
    assert both == []


def test_it_has_a_sample_of_every_entry_so_every_door_is_tested_with_it():
    assert set(SAMPLES) == set(refusals.TABLE)
    assert {type(make()) for make in SAMPLES.values()} == set(refusals.TABLE)


def _samples() -> list[BaseException]:
    return [make() for make in SAMPLES.values()] + KAFKA_SAMPLES


def _ids(exc: BaseException) -> str:
    return f"{type(exc).__module__}.{type(exc).__name__}-{getattr(exc, 'name', '')}"


@pytest.mark.parametrize("exc", _samples(), ids=_ids)
def test_it_answers_the_same_refusal_alike_at_the_api_and_the_command_line(exc):
    answer = refusals.answer(exc)
    assert answer is not None

    response = api_errors.handle(exc, {})
    assert (response.status_code, response.data["error"]["code"]) == (answer.status, answer.code)
    assert response.data["error"]["status"] == answer.status

    class Command(CommandBase):
        def _actor(self, *args):
            return None

        def _cluster(self, name):
            return None

        def _t_run(self, cluster, actor):
            raise exc

    with pytest.raises(CommandError) as raised:
        Command().handle(area="t", action="run", needs_cluster=False)
    assert (raised.value.returncode, str(raised.value)) == (answer.exit, answer.text)


def test_it_gives_each_kind_of_refusal_its_documented_answer():
    table = {
        type(e).__name__ + ("" if not isinstance(e, KafkaOperationError) else f":{e.name}"): (
            refusals.answer(e).status,
            refusals.answer(e).code,
            refusals.answer(e).exit,
        )
        for e in _samples()
    }
    assert table == {
        **{
            name: (422, "refused", 4)
            for name in (
                "PolicyViolation",
                "ConfirmationError",
                "BatchParseError",
                "GroupNotEmpty",
                "NoOffsets",
                "ResetPlanError",
                "PlanRejected",
                "PlanParseError",
                "ThrottleError",
                "ElectionRefused",
                "RequestInvalid",
                "ConfigPlanError",
                "AclValidationError",
                "ClusterInUse",
                "PasswordRequired",
                "LogLevelPlanError",
                "ChangeInvalid",
                "ChannelInvalid",
                "WindowInvalid",
                "QuotaInvalid",
            )
        },
        "ValidationError": (400, "invalid", 4),
        "EstateParseError": (400, "invalid", 4),
        "ControllerModeRequired": (400, "invalid", 4),
        "BrowseInvalid": (400, "invalid", 4),
        "ApprovalRequired": (403, "approval_required", 3),
        "ChangeWindowClosed": (409, "change_window", 4),
        "KraftRefused": (409, "unsafe", 4),
        "KraftInvalid": (400, "invalid", 4),
        "HostnameCheckRequired": (403, "permission_denied", 3),
        "PermissionDenied": (403, "permission_denied", 3),
        "Http404": (404, "not_found", 6),
        "ChannelNotFound": (404, "not_found", 6),
        "UnknownBroker": (404, "not_found", 6),
        "AuditUnavailable": (503, "unavailable", 7),
        "SecretUnreadable": (503, "unavailable", 5),
        "KafkaOperationError:TOPIC_ALREADY_EXISTS": (409, "kafka_error", 5),
        "KafkaOperationError:UNKNOWN_TOPIC_OR_PARTITION": (404, "kafka_error", 6),
        "KafkaOperationError:GROUP_ID_NOT_FOUND": (404, "kafka_error", 6),
        "KafkaOperationError:UNKNOWN_TOPIC_ID": (404, "kafka_error", 6),
        "KafkaOperationError:REQUEST_TIMED_OUT": (503, "kafka_error", 5),
        "KafkaOperationError:TOPIC_AUTHORIZATION_FAILED": (403, "kafka_error", 5),
        "KafkaOperationError:INVALID_PARTITIONS": (400, "kafka_error", 5),
        "KafkaOperationError:UNKNOWN_SERVER_ERROR": (502, "kafka_error", 5),
    }


def test_it_words_a_refusal_with_one_sentence_per_problem_and_kafka_errors_with_their_name():
    assert refusals.reasons(SAMPLES[ChangeInvalid]()) == ["nothing to change", "stale snapshot"]
    assert refusals.text(SAMPLES[PolicyViolation]()) == "partitions 5000 > 1000; retention.ms not allowed"
    assert refusals.reasons(SAMPLES[ValidationError]()) == ["Pick a role.", "Pick a user."]
    kafka = KafkaOperationError(7, "REQUEST_TIMED_OUT", "timed out", True)
    assert refusals.text(kafka) == f"REQUEST_TIMED_OUT: {kafka.operator_text}"
    assert refusals.answer(RuntimeError("a bug")) is None


# -- the pages: a view shows what it catches (refusals.SHOWN) inline, the others answer the page ---


@not_found_is_404
def _page(request, which: str):
    exc = next(e for e in _samples() if _ids(e) == which)
    try:
        raise exc
    except refusals.SHOWN as shown:  # as every view catches: shown on the page (htmx swaps 200s)
        return HttpResponse(refusals.text(shown))


urlpatterns = [path("refusal/<str:which>/", _page), path("", include("console.urls"))]


@pytest.mark.django_db
@pytest.mark.parametrize("exc", _samples(), ids=_ids)
def test_it_answers_a_page_with_the_same_words_or_the_same_status(client, settings, exc):
    settings.ROOT_URLCONF = __name__
    answer = refusals.answer(exc)
    response = client.get(f"/refusal/{_ids(exc)}/")
    if isinstance(exc, refusals.SHOWN):
        assert (response.status_code, response.content.decode()) == (200, answer.text)
    else:
        assert response.status_code == answer.status


# -- structure: no view lists the refusals it catches ---------------------------------------------


def _handler_names(handler: ast.ExceptHandler) -> list[str]:
    nodes = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    out = []
    for node in nodes:
        if isinstance(node, ast.Starred):
            node = node.value
        out.append(ast.unparse(node))
    return out


def test_it_finds_no_view_catching_refusals_by_their_own_names():
    """A view catches refusals.SHOWN (or a Kafka read's error alone); a refusal class named in a view's
    `except` is a second list that drifts from the table."""
    table_names = {k.__name__ for k in refusals.TABLE} - {"KafkaOperationError"}
    hits = []
    for file in sorted(VIEWS.glob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ExceptHandler) or node.type is None:
                continue
            names = _handler_names(node)
            listed = isinstance(node.type, ast.Tuple) or any(n.endswith("REFUSALS") for n in names)
            named = [n for n in names if n.rsplit(".", 1)[-1] in table_names]
            if listed or named:
                hits.append(f"{file.name}:{node.lineno} except {', '.join(names)}")
    assert hits == []
