"""What an Operation kind declares, and the runner's arithmetic (pure: no Django, no I/O).

An area describes a kind as ordered steps. A step is a function of the run's context that
either completes (returns None: the runner moves to the next step), asks to be run again later
(``Wait``: a poll that is not finished yet), or ends the operation (``Done``). Any exception is
a failed attempt of that step: the runner retries it with backoff and, after the attempt limit,
ends the operation ``errored``. Steps must converge when re-entered: a worker may die between a
step's effect and the runner's record that the step completed.

A step that watches work Kafka executes (``Step(watches_kafka=True)``: a reassignment's move)
does not fail when Kafka cannot be reached: losing contact is a state, not an attempt. The
operation stays running, "lost contact since HH:MM (N attempts), retrying every …", its retries
back off (bounded), and the first successful run clears it. Only an error that cannot be
retried counts as a failed attempt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from console.kafka.errors import KafkaOperationError

RUN = "run"
CANCEL = "cancel"
LOST_CONTACT = "lost_contact"  # key in Operation.data: {"since", "attempts", "retry_every_s", "error"}


@dataclass(frozen=True)
class Wait:
    """The step is not finished: run it again after ``seconds`` (the attempt counter resets)."""

    seconds: float
    text: str = ""


@dataclass(frozen=True)
class Done:
    """End the operation with this state (succeeded, failed or cancelled) and its audit event."""

    state: str
    result: Mapping[str, Any] = field(default_factory=dict)
    outcomes: Mapping[str, Any] = field(default_factory=dict)
    error: str = ""


@dataclass(frozen=True)
class Step:
    """One resumable step. ``cancellable=False``: a cancel request waits until the step is past."""

    name: str
    fn: Callable[[Any], Wait | Done | None]
    cancellable: bool = True
    # The step observes work Kafka goes on doing without us (a move), or must reach Kafka to undo
    # what stays there (throttles): an unreachable cluster is "lost contact" (the operation waits,
    # backing off), never a failed attempt.
    watches_kafka: bool = False


@dataclass(frozen=True)
class Kind:
    """An Operation kind: its steps, the steps that replace the rest on cancel, and its give-up hook.

    ``give_up(ctx, error)`` runs once, best effort, before the operation is ended ``errored``
    (e.g. a reassignment tries to take its throttles back; what it cannot is left owed in the
    ledger). Without ``cancel_steps`` a cancel ends the operation at the next step boundary.
    ``may_view`` scopes the operation's pages by the permission of the object it works on.
    """

    name: str
    steps: tuple[Step, ...]
    cancel_steps: tuple[Step, ...] = ()
    give_up: Callable[[Any, str], None] | None = None
    # may_view(user, op): who may see an operation of this kind (its params, items, results).
    # Without it: the cluster's viewers, or for cluster-less work its starter and superusers.
    may_view: Callable[[Any, Any], bool] | None = None

    def path(self, name: str) -> tuple[Step, ...]:
        return self.cancel_steps if name == CANCEL else self.steps


def backoff_s(attempt: int, base: float, cap: float) -> float:
    """Seconds to wait before retry ``attempt`` (1-based): base, 2·base, 4·base … at most ``cap``."""
    if attempt < 1:
        return 0.0
    return min(cap, base * 2 ** min(attempt - 1, 30))


def audit_outcome(state: str) -> str:
    """The audit event outcome of an operation's end state."""
    return {"succeeded": "success", "cancelled": "cancelled", "errored": "errored"}.get(state, "failure")


# Errors that say "Kafka could not be asked now" (not "Kafka refused"): the cluster is down or
# frozen, the address is wrong, the network or the credentials are broken. Each can be fixed
# while Kafka goes on with the work, so a watching step waits them out.
CONTACT_ERRORS = frozenset(
    {
        "NETWORK_EXCEPTION",
        "REQUEST_TIMED_OUT",
        "BROKER_NOT_AVAILABLE",
        "COORDINATOR_NOT_AVAILABLE",
        "NOT_CONTROLLER",
        "LEADER_NOT_AVAILABLE",
        "SASL_AUTHENTICATION_FAILED",
        "ILLEGAL_SASL_STATE",
        "UNSUPPORTED_SASL_MECHANISM",
        "CLUSTER_AUTHORIZATION_FAILED",
        "TOPIC_AUTHORIZATION_FAILED",
        "KAFKA_STORAGE_ERROR",
        "THROTTLING_QUOTA_EXCEEDED",
        "UNKNOWN_SERVER_ERROR",
    }
)


def is_lost_contact(exc: BaseException) -> bool:
    """Whether a step's error means Kafka could not be reached or asked now (it may recover)."""
    return isinstance(exc, KafkaOperationError) and (exc.retriable or exc.name in CONTACT_ERRORS)


def lost_contact_text(since: str, attempts: int, every_s: float, error: str) -> str:
    """The line the page, the API and the CLI show while a watching step has lost contact."""
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    return f"lost contact since {since} ({tries}), retrying every {every_s:.0f} s: {error}"
