"""The one runner: claim, steps, wait, retry with backoff, errored, cancel, redelivery, racing workers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console import operations
from console.models import AuditEvent, Operation, OperationState
from console.operations import Done, Kind, Step, Wait, registry

pytestmark = pytest.mark.django_db

DISPATCHED: list[tuple[int, float | None]] = []
CALLS: list[str] = []
FAIL: dict[str, int] = {}  # step name -> how many more times it raises
KILL: dict[str, int] = {}  # step name -> how many more times the worker "dies" in it


class Killed(BaseException):
    """Stands in for a worker killed mid-step: nothing after it runs, nothing is caught."""


def record_dispatch(op_id: int, countdown: float | None = None) -> str:
    DISPATCHED.append((op_id, countdown))
    return f"task-{op_id}"


def _step(name: str, result=None):
    def fn(ctx):
        CALLS.append(name)
        if KILL.get(name, 0) > 0:
            KILL[name] -= 1
            raise Killed(name)
        if FAIL.get(name, 0) > 0:
            FAIL[name] -= 1
            raise RuntimeError(f"{name} broke")
        ctx.data[name] = ctx.data.get(name, 0) + 1
        return result(ctx) if callable(result) else result

    return Step(name, fn)


def _poll(ctx):
    return None if ctx.data["poll"] >= 3 else Wait(1.0, text=f"poll {ctx.data['poll']}")


def _end(ctx):
    return Done(OperationState.SUCCEEDED, {"seen": dict(ctx.data)}, {"thing": {"ok": True}})


def _cleanup(ctx, error):
    CALLS.append("give_up")
    ctx.data["gave_up"] = error


SIMPLE = Kind("test.simple", (_step("a"), _step("b"), _step("end", _end)))
POLL = Kind(
    "test.poll",
    (_step("a"), _step("poll", _poll), Step("last", _step("last", _end).fn, cancellable=False)),
    cancel_steps=(_step("revert"), _step("undone", lambda ctx: Done(OperationState.CANCELLED, {}))),
    give_up=_cleanup,
)


@pytest.fixture(autouse=True)
def _runner_settings(settings, monkeypatch):
    for kind in (SIMPLE, POLL):  # registered for these tests only
        monkeypatch.setitem(registry._KINDS, kind.name, kind)
    settings.OPERATION_DISPATCHER = "tests.unit.test_operation_runner.record_dispatch"
    settings.OPERATION_MAX_ATTEMPTS = 3
    settings.OPERATION_BACKOFF_S = 2
    settings.OPERATION_BACKOFF_MAX_S = 5
    for d in (DISPATCHED, CALLS, FAIL, KILL):
        d.clear()


def _start(personas, kafka_cluster, kind="test.simple", capture=None):
    return operations.start(actor=personas["operator"], kind=kind, cluster=kafka_cluster, params={"x": 1})


def _make_due(op):
    Operation.objects.filter(pk=op.pk).update(next_run_at=timezone.now() - timedelta(seconds=1))


def _make_quiet(op, settings):
    Operation.objects.filter(pk=op.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.OPERATION_STALE_AFTER_S + 1)
    )


def _drive(op, settings, rounds=20):
    """What beat and the queue do over time: run, and after any wait or crash, run again when due."""
    for _ in range(rounds):
        op.refresh_from_db()
        if op.finished:
            return op
        _make_due(op)
        _make_quiet(op, settings) if op.claimed_by else None
        try:
            operations.run(op.pk, worker="w")
        except Killed:
            pass
    op.refresh_from_db()
    return op


def test_it_runs_the_steps_in_order_and_finishes_with_one_audit_event(
    personas, kafka_cluster, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        op = _start(personas, kafka_cluster)
    assert DISPATCHED == [(op.pk, None)]
    assert Operation.objects.get(pk=op.pk).celery_task_id == f"task-{op.pk}"
    done = operations.run(op.pk, worker="w1")
    assert done.state == OperationState.SUCCEEDED
    assert CALLS == ["a", "b", "end"]
    assert done.result == {"seen": {"a": 1, "b": 1, "end": 1}}
    assert (done.claimed_by, done.step, done.progress) == ("", 2, 1.0)
    events = list(
        AuditEvent.objects.filter(operation_id=op.pk).order_by("id").values_list("action", "outcome")
    )
    assert events == [("test.simple.requested", "requested"), ("test.simple.succeeded", "success")]


def test_a_failed_step_is_retried_with_backoff_and_earlier_steps_are_not_repeated(personas, kafka_cluster):
    op = _start(personas, kafka_cluster)
    FAIL["b"] = 2
    before = timezone.now()
    after_one = operations.run(op.pk, worker="w")
    assert (after_one.state, after_one.attempts, after_one.step, after_one.claimed_by) == (
        "running",
        1,
        1,
        "",
    )
    assert after_one.last_error == "b: RuntimeError: b broke"
    assert "retrying in 2 s (attempt 1 of 3)" in after_one.progress_text
    assert 1.5 <= (after_one.next_run_at - before).total_seconds() <= 3
    assert DISPATCHED == [(op.pk, 2.0)]
    assert operations.run(op.pk, worker="w") is None  # not due yet: a redelivery backs off
    _make_due(op)
    second = operations.run(op.pk, worker="w")
    assert second.attempts == 2 and DISPATCHED[-1] == (op.pk, 4.0)
    _make_due(op)
    assert operations.run(op.pk, worker="w").state == OperationState.SUCCEEDED
    assert CALLS == ["a", "b", "b", "b", "end"]


def test_a_step_that_keeps_failing_ends_errored_with_the_error_after_the_attempt_limit(
    personas, kafka_cluster, settings
):
    op = _start(personas, kafka_cluster, kind="test.poll")
    FAIL["poll"] = 100
    op = _drive(op, settings)
    assert op.state == OperationState.ERRORED
    assert CALLS.count("poll") == 3 and CALLS[-1] == "give_up"
    assert "gave up after 3 attempts: poll: RuntimeError: poll broke" in op.error
    assert op.result["outcome"] == "errored"
    assert op.data["gave_up"] == "poll: RuntimeError: poll broke"
    event = AuditEvent.objects.get(action="test.poll.errored")
    assert (event.outcome, event.operation_id) == ("errored", op.pk)
    assert "poll broke" in event.params["error"]


def test_a_wait_releases_the_claim_and_resets_the_attempts(personas, kafka_cluster, settings):
    op = _start(personas, kafka_cluster, kind="test.poll")
    FAIL["poll"] = 1  # a blip, then a successful poll: the count starts again
    first = operations.run(op.pk, worker="w")
    assert (first.state, first.attempts) == ("running", 1)
    _make_due(op)
    waiting = operations.run(op.pk, worker="w")
    assert (waiting.claimed_by, waiting.attempts, waiting.progress_text) == ("", 0, "poll 1")
    assert operations.run(op.pk, worker="w") is None  # the next poll is not due yet
    assert operations.due_ids() == []
    _make_due(op)
    assert operations.due_ids() == [op.pk]
    FAIL["poll"] = 2  # two more blips in a row stay under the limit of 3 because the count was reset
    assert operations.run_due(worker="beat") == [op.pk]
    assert Operation.objects.get(pk=op.pk).attempts == 1
    op = _drive(op, settings)
    assert op.state == OperationState.SUCCEEDED


def test_a_killed_worker_is_recovered_and_counts_as_a_failed_attempt(personas, kafka_cluster, settings):
    op = _start(personas, kafka_cluster)
    KILL["b"] = 1
    with pytest.raises(Killed):
        operations.run(op.pk, worker="dead")
    held = Operation.objects.get(pk=op.pk)
    assert (held.state, held.claimed_by, held.step) == ("running", "dead", 1)
    assert operations.run(op.pk, worker="other") is None  # its heartbeat is fresh: back off
    assert operations.due_ids() == []
    _make_quiet(held, settings)
    assert operations.due_ids() == [op.pk]
    done = operations.run(op.pk, worker="other")
    assert done.state == OperationState.SUCCEEDED
    assert CALLS == ["a", "b", "b", "end"]


def test_a_worker_killed_at_every_attempt_ends_errored(personas, kafka_cluster, settings):
    op = _start(personas, kafka_cluster)
    KILL["b"] = 100
    op = _drive(op, settings)
    assert op.state == OperationState.ERRORED
    assert "the worker running it stopped answering" in op.error
    assert CALLS.count("b") == 3


def test_two_workers_racing_for_one_operation_run_it_once(personas, kafka_cluster):
    op = _start(personas, kafka_cluster)
    assert operations.claim(op.pk, "w1") is not None
    assert operations.claim(op.pk, "w2") is None
    assert operations.run(op.pk, worker="w2") is None
    assert CALLS == []


def test_a_worker_that_lost_its_claim_writes_nothing(personas, kafka_cluster, settings):
    op = _start(personas, kafka_cluster)
    slow = operations.claim(op.pk, "slow")
    _make_quiet(slow, settings)
    assert operations.run(op.pk, worker="fast").state == OperationState.SUCCEEDED
    with pytest.raises(operations.LostClaim):
        operations.heartbeat(slow, text="still here?")
    assert AuditEvent.objects.filter(action="test.simple.succeeded").count() == 1


def test_a_redelivered_task_of_a_finished_operation_does_nothing(personas, kafka_cluster):
    op = _start(personas, kafka_cluster)
    operations.run(op.pk, worker="w")
    assert operations.run(op.pk, worker="w") is None
    assert CALLS == ["a", "b", "end"]


def test_cancel_switches_to_the_cancel_steps_at_the_next_boundary(personas, kafka_cluster, settings):
    op = _start(personas, kafka_cluster, kind="test.poll")
    operations.run(op.pk, worker="w")  # a, then the first poll waits
    assert operations.request_cancel(actor=personas["operator"], op=Operation.objects.get(pk=op.pk))
    assert not operations.request_cancel(actor=personas["operator"], op=Operation.objects.get(pk=op.pk))
    assert operations.due_ids() == [op.pk]  # a cancel makes a waiting operation due at once
    done = operations.run(op.pk, worker="w")
    assert done.state == OperationState.CANCELLED
    assert CALLS == ["a", "poll", "revert", "undone"]
    actions = list(
        AuditEvent.objects.filter(operation_id=op.pk).order_by("id").values_list("action", "outcome")
    )
    assert actions[-2:] == [("test.poll.cancel", "requested"), ("test.poll.cancelled", "cancelled")]


def test_a_pending_operation_without_cancel_steps_is_cancelled_before_it_starts(personas, kafka_cluster):
    op = _start(personas, kafka_cluster)
    operations.request_cancel(actor=personas["operator"], op=op)
    assert operations.run(op.pk, worker="w").state == OperationState.CANCELLED
    assert CALLS == []


def test_an_unknown_kind_ends_errored_instead_of_being_requeued_for_ever(personas, kafka_cluster):
    op = Operation.objects.create(kind="no.such.kind", cluster=kafka_cluster)
    done = operations.run(op.pk, worker="w")
    assert done.state == OperationState.ERRORED
    assert "no.such.kind" in done.error
    with pytest.raises(LookupError):
        operations.start(actor=personas["operator"], kind="no.such.kind", cluster=kafka_cluster, params={})


def test_pending_operations_nobody_picked_up_are_dispatched_again(personas, kafka_cluster, settings):
    op = _start(personas, kafka_cluster)
    Operation.objects.filter(pk=op.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.OPERATION_STALE_AFTER_S + 1)
    )
    assert operations.requeue_pending() == [op.pk]
    assert DISPATCHED[-1] == (op.pk, None)


def test_backoff_doubles_up_to_its_cap():
    assert [operations.backoff_s(n, 2, 30) for n in range(0, 7)] == [0, 2, 4, 8, 16, 30, 30]


RAISE: list[BaseException] = []  # what the watching step raises next (one per run), then it finishes


def _watching(ctx):
    CALLS.append("watch")
    if RAISE:
        raise RAISE.pop(0)
    return _end(ctx)


WATCH = Kind("test.watch", (Step("watch", _watching, watches_kafka=True),))


def test_it_waits_out_lost_contact_in_a_watching_step_and_counts_only_other_errors(
    personas, kafka_cluster, settings, monkeypatch
):
    from console.kafka import KafkaOperationError

    monkeypatch.setitem(registry._KINDS, WATCH.name, WATCH)
    settings.OPERATION_LOST_CONTACT_BACKOFF_S, settings.OPERATION_LOST_CONTACT_BACKOFF_MAX_S = 2, 30
    timeout = KafkaOperationError(7, "REQUEST_TIMED_OUT", "no answer", True)
    auth = KafkaOperationError(58, "SASL_AUTHENTICATION_FAILED", "bad password", False)
    refused = KafkaOperationError(42, "INVALID_REQUEST", "refused", False)
    RAISE[:] = [timeout] * 5 + [auth] * 2 + [refused, timeout]
    op = _start(personas, kafka_cluster, kind=WATCH.name)
    seen = []
    for _ in range(9):
        _make_due(op)
        operations.run(op.pk, worker="w")
        op.refresh_from_db()
        seen.append((op.state, op.attempts, (op.data.get("lost_contact") or {}).get("attempts")))
    # 7 lost-contact runs (more than OPERATION_MAX_ATTEMPTS = 3) spend no attempt; the refusal is
    # an attempt (and ends the lost contact: Kafka answered); the next timeout starts it again
    assert seen == [
        *[("running", 0, n) for n in range(1, 8)],
        ("running", 1, None),
        ("running", 1, 1),
    ]
    assert [d for _, d in DISPATCHED[-9:]] == [2, 4, 8, 16, 30, 30, 30, 2, 2]
    assert op.progress_text.startswith("lost contact since ")
    assert op.progress_text.endswith(
        "(1 attempt), retrying every 2 s: watch: The request timed out. "
        "It may still complete on the cluster: re-read the state before retrying."
    )
    _make_due(op)
    operations.run(op.pk, worker="w")
    op.refresh_from_db()
    assert (op.state, op.attempts, "lost_contact" in op.data) == ("succeeded", 1, False)
    assert operations.lost_contact(op) is None
