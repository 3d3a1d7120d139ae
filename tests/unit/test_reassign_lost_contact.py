"""Watching never gives up while Kafka works: a move that loses contact with Kafka stays running.

The move step observes work Kafka does on its own. When the cluster cannot be reached (every
broker down, brokers frozen so requests time out, a mistyped bootstrap address saved mid-move)
for longer than the attempt limit, the operation stays ``running`` with "lost contact since
HH:MM (N attempts), retrying every …", spends no attempt, and once Kafka answers again it
finishes from what Kafka has: partitions settled, throttles taken back, the final audit event.
A move that did end ``errored`` (before this rule, or after an error that cannot be retried)
while Kafka went on is reconciled by the janitor; ``kafka reassign --verify`` says what Kafka says.
"""

from __future__ import annotations

import itertools
import time
from datetime import UTC
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from console import operations
from console.api.operations import operation_json
from console.api.reassignment import reassignment_json
from console.clusters.actions import gateway_for
from console.models import AuditEvent, Cluster, Operation
from console.models.reassignment import OWED_STATES, PartitionState, ThrottleEntry
from console.reassignment import finish
from console.reassignment import janitor as reassign_janitor
from tests.conftest import run_now, throttle_configs_on
from tests.unit.reassign_world import clear_throttles, make_topic, plan_file, start

pytestmark = pytest.mark.django_db

LOST_RUNS = 7  # more than OPERATION_MAX_ATTEMPTS (5)
_names = itertools.count()
POLLED_APIS = ("ListPartitionReassignments", "DescribeLogDirs", "Metadata", "ListOffsets", "DescribeConfigs")


@pytest.fixture(autouse=True)
def _quick(settings, sandbox):
    settings.OPERATION_MAX_ATTEMPTS = 5
    settings.OPERATION_LOST_CONTACT_BACKOFF_S = 2
    settings.OPERATION_LOST_CONTACT_BACKOFF_MAX_S = 30
    settings.OPERATION_BACKOFF_S, settings.OPERATION_BACKOFF_MAX_S = 0.1, 1.0  # a failed attempt's backoff
    yield
    sandbox.clear_faults()
    for b in (1, 2, 3):
        if not sandbox.state.brokers[b].up:
            sandbox.start_broker(b)
        sandbox.thaw_broker(b)  # a no-op unless a failed test left it frozen
    clear_throttles(sandbox)


@pytest.fixture
def cluster(kafka_cluster):
    # a short request timeout: a frozen broker costs a second per call, not five
    Cluster.objects.filter(pk=kafka_cluster.pk).update(request_timeout_s=1)
    kafka_cluster.refresh_from_db()
    return kafka_cluster


def _start(personas, cluster, sandbox):
    topic = make_topic(sandbox, [[1, 2]], mb_per_partition=8, name=f"lost-t{next(_names)}")
    op, r = start(personas, cluster, {(topic, 0): (1, 3)})
    run_now(op.pk)  # throttles set, submitted, first poll: moving
    r.refresh_from_db()
    assert (r.stage, r.partitions.get().state) == ("moving", PartitionState.MOVING)
    return op, r, topic


def _lose(mode: str, sandbox, cluster) -> None:
    if mode == "brokers down":
        for b in (1, 2, 3):
            sandbox.stop_broker(b)
    elif mode == "frozen":  # every broker SIGSTOPped: connections accepted, nothing answered
        for b in (1, 2, 3):
            sandbox.freeze_broker(b)
    elif mode == "slow":  # brokers answer, but never within the request timeout
        for api in POLLED_APIS:
            sandbox.inject_fault(api, delay_s=3.0)
    else:  # a superuser saves a mistyped bootstrap address mid-move
        Cluster.objects.filter(pk=cluster.pk).update(bootstrap_servers="127.0.0.1:1")


def _restore(mode: str, sandbox, cluster) -> None:
    if mode == "brokers down":
        for b in (1, 2, 3):
            sandbox.start_broker(b)
    elif mode == "frozen":
        for b in (1, 2, 3):
            sandbox.thaw_broker(b)
    elif mode == "slow":
        sandbox.clear_faults()
    else:
        Cluster.objects.filter(pk=cluster.pk).update(bootstrap_servers=sandbox.bootstrap_servers)


def _tick_until_finished(op, seconds: float = 30.0) -> None:
    """Beat's tick, every 0.1 s: due polls and retries run after their (real) backoff."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        op.refresh_from_db()
        if op.state not in ("pending", "running"):
            return
        operations.run_due(worker="tick")
        time.sleep(0.1)


def _assert_finished_cleanly(op, r, cluster, topic) -> None:
    op.refresh_from_db()
    r.refresh_from_db()
    assert (op.state, op.attempts, op.error) == ("succeeded", 0, "")
    assert "lost_contact" not in op.data
    assert (r.stage, r.outcome) == ("finished", "succeeded")
    assert list(r.partitions.values_list("state", "message")) == [(PartitionState.DONE, "")]
    assert not ThrottleEntry.objects.filter(reassignment=r, state__in=OWED_STATES).exists()
    assert throttle_configs_on(gateway_for(cluster), topic) == set()
    md = gateway_for(cluster).describe_topics([topic])[topic]
    assert list(md.partitions[0].replicas) == [1, 3]
    assert AuditEvent.objects.filter(operation_id=op.pk, action="reassignment.execute.succeeded").count() == 1


@pytest.mark.parametrize("mode", ["brokers down", "frozen", "slow", "wrong address"])
def test_it_keeps_the_move_running_through_lost_contact_and_finishes_once_kafka_answers(
    mode, personas, cluster, frozen, client
):
    op, r, topic = _start(personas, cluster, frozen)
    _lose(mode, frozen, cluster)
    try:
        for n in range(1, LOST_RUNS + 1):
            run_now(op.pk, worker=f"w{n}")
            op.refresh_from_db()
            lost = op.data.get("lost_contact") or {}
            assert (op.state, op.attempts, op.claimed_by, lost.get("attempts")) == ("running", 0, "", n)
            every = min(30, 2 * 2 ** (n - 1))
            since = timezone.localtime(timezone.datetime.fromisoformat(lost["since"])).strftime("%H:%M")
            assert op.progress_text.startswith(
                f"lost contact since {since} ({n} attempt{'s' if n > 1 else ''}), retrying every {every} s: move: "
            )
            assert op.next_run_at > timezone.now()
        # the API and the page say so (the CLI: test_it_verifies_from_kafka_and_says_contact_is_lost)
        shown = operation_json(op)
        assert shown["state"] == "running" and shown["lost_contact"]["attempts"] == LOST_RUNS
        assert shown["lost_contact"]["text"].startswith(f"lost contact since {since} ({LOST_RUNS} attempts)")
        r.refresh_from_db()
        moving = reassignment_json(r)
        assert (moving["progress_stale"], moving["lost_contact"]["attempts"]) == (True, LOST_RUNS)
        client.force_login(personas["operator"])
        page = client.get(
            reverse("reassign_progress", kwargs={"name": cluster.name, "rid": r.pk})
        ).content.decode()
        assert (
            f"The console has lost contact since {since} ({LOST_RUNS} attempts), retrying every 30 s" in page
        )
        read_at = timezone.localtime(r.last_poll_at, UTC).strftime("%H:%M:%S")
        assert f'at {read_at} UTC: <strong id="progress-is-stale">stale</strong>, not current' in page
        assert "Last read: " in page and "ETA —" in page
        page = client.get(reverse("operation_progress", kwargs={"op_id": op.pk})).content.decode()
        assert 'id="op-lost-contact"' in page and "Attempt 0 failed" not in page
        r.refresh_from_db()
        assert r.partitions.get().state == PartitionState.MOVING  # never "diverged" for want of an answer
    finally:
        _restore(mode, frozen, cluster)
    frozen.advance(60)  # Kafka went on (or resumes) and completes the move
    run_now(op.pk, worker="back")  # the lost contact's next retry falls due
    _tick_until_finished(op)
    _assert_finished_cleanly(op, r, cluster, topic)


def test_it_reconciles_a_move_that_ended_errored_while_kafka_went_on(personas, cluster, frozen):
    op, r, topic = _start(personas, cluster, frozen)
    # How such a move ended before: the runner gave up at the move step while Kafka moved on
    # (give_up keeps the throttles of partitions still moving, owed in the ledger).
    finish.give_up(r, "move: REQUEST_TIMED_OUT")
    Operation.objects.filter(pk=op.pk).update(
        state="errored", claimed_by="", error="gave up after 5 attempts: move: REQUEST_TIMED_OUT", attempts=5
    )
    frozen.advance(60)  # Kafka completes it
    reopened = reassign_janitor.reconcile_errored()
    assert reopened == [r.pk]
    op.refresh_from_db()
    assert (op.state, op.attempts, op.error) == ("running", 0, "")
    for n in range(10):
        run_now(op.pk, worker=f"rec{n}")
        op.refresh_from_db()
        if op.state != "running":
            break
    _assert_finished_cleanly(op, r, cluster, topic)
    assert op.result["reconciled"]["after"] == "gave up after 5 attempts: move: REQUEST_TIMED_OUT"
    assert reassign_janitor.reconcile_errored() == []  # once


def test_it_verifies_from_kafka_and_says_contact_is_lost(personas, cluster, frozen, tmp_path):
    op, r, topic = _start(personas, cluster, frozen)
    plan = plan_file(tmp_path, {(topic, 0): [1, 3]})

    def verify():
        out = StringIO()
        args = ("reassign", "--verify", "--reassignment-json-file", str(plan), "--cluster", cluster.name)
        try:
            call_command("kafka", *args, "--as", "viewer", stdout=out, stderr=StringIO())
        except CommandError as exc:
            return exc.returncode, out.getvalue() + str(exc)
        return 0, out.getvalue()

    frozen.advance(60)  # Kafka has completed the move; the console has not polled since
    code, out = verify()
    assert f"Reassignment of partition {topic}-0 is completed." in out  # what Kafka's --verify says
    _lose("wrong address", frozen, cluster)
    try:
        for n in range(1, LOST_RUNS + 1):
            run_now(op.pk, worker=f"w{n}")
        code, out = verify()
        assert "lost contact since" in out and f"({LOST_RUNS} attempts)" in out
        assert "Kafka could not be read" in out and "stale" in out
    finally:
        _restore("wrong address", frozen, cluster)


def test_it_finishes_a_move_that_ended_errored_after_kafka_had_completed_it(
    personas, cluster, frozen, monkeypatch
):
    op, r, topic = _start(personas, cluster, frozen)
    frozen.advance(60)  # Kafka completes the move

    def owed(r, *, reason):
        raise finish.ThrottlesOwed("injected: 6 throttle configs could not be taken back yet")

    monkeypatch.setattr(finish, "remove_owed_throttles", owed)
    for n in range(5):
        run_now(op.pk, worker=f"w{n}")
    op.refresh_from_db()
    assert (op.state, op.step) == ("errored", 3)  # gave up taking the throttles back
    assert op.error.startswith("gave up after 5 attempts: remove throttles: ")
    monkeypatch.undo()

    assert reassign_janitor.reconcile_errored() == [r.pk]
    run_now(op.pk, worker="rec")
    _assert_finished_cleanly(op, r, cluster, topic)
