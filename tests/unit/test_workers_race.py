"""Two poll workers and two admin workers racing over the same operations run each step once.

Four threads, each with its own database connection, call what the Celery tasks call
(tasks/operations.py): the admin workers ``operations.run(id)`` for every operation (each id
delivered to both, as a redelivered task would be), the poll workers the tick's
``operations.run_due()`` until everything has finished. The toy kind records every execution of
its steps keyed by (operation, step, pass); its middle step waits once, so every operation is
released and claimed again through the tick. The claim's conditional UPDATE is what keeps two
workers out of one step: on PostgreSQL (``CONSOLE_TEST_DB=postgres``, tests/pg.py) the updates
really race; SQLite serialises writers, so there the test is a smoke test of the same path.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest
from django.db import connections

from console import operations
from console.audit.store import verify_chain
from console.models import AuditEvent, Operation, OperationState
from console.models.operations import FINISHED_STATES
from console.operations import Done, Kind, Step, Wait, registry

OPERATIONS = 20
DEADLINE_S = 60.0

RUNS: list[tuple[int, str, int]] = []  # (operation, step, pass): one entry per execution
RUNS_LOCK = threading.Lock()


def _record(ctx, step: str) -> None:
    passes = ctx.data.setdefault("passes", {})
    passes[step] = passes.get(step, 0) + 1
    with RUNS_LOCK:
        RUNS.append((ctx.op.pk, step, passes[step]))
    time.sleep(random.uniform(0, 0.004))  # a step takes a moment: another worker may try meanwhile


def _prepare(ctx):
    _record(ctx, "prepare")


def _watch(ctx):
    _record(ctx, "watch")
    if ctx.data["passes"]["watch"] == 1:
        return Wait(0.0, text="not yet")  # due again at once: the tick takes it from here
    return None


def _finish(ctx):
    _record(ctx, "finish")
    return Done(OperationState.SUCCEEDED, {"passes": dict(ctx.data["passes"])})


RACE = Kind("test.race", (Step("prepare", _prepare), Step("watch", _watch), Step("finish", _finish)))


@pytest.fixture
def race_kind(monkeypatch):
    monkeypatch.setitem(registry._KINDS, RACE.name, RACE)
    RUNS.clear()
    yield RACE
    RUNS.clear()


def _worker(name: str, start: threading.Barrier, work, errors: list[BaseException]) -> None:
    try:
        start.wait()
        work(name)
    except BaseException as exc:  # reported by the test, never lost in the thread
        errors.append(exc)
    finally:
        connections.close_all()  # this thread's own connection


def _unfinished(ids: list[int]) -> bool:
    return Operation.objects.filter(pk__in=ids).exclude(state__in=FINISHED_STATES).exists()


@pytest.mark.django_db(transaction=True)
def test_it_runs_each_step_once_with_two_poll_and_two_admin_workers_racing(race_kind, django_user_model):
    actor = django_user_model.objects.create_user(username="operator", password="pw-operator")
    ids = [
        operations.start(actor=actor, kind=RACE.name, cluster=None, params={"n": n}).pk
        for n in range(OPERATIONS)
    ]
    deadline = time.monotonic() + DEADLINE_S

    def admin(name: str) -> None:  # the admin queue: every id delivered to both workers, in any order
        for op_id in random.sample(ids, len(ids)):
            operations.run(op_id, worker=name)

    def poll(name: str) -> None:  # the poll queue: beat's tick, again and again
        while _unfinished(ids) and time.monotonic() < deadline:
            operations.run_due(worker=name)

    workers = [("admin-1", admin), ("admin-2", admin), ("poll-1", poll), ("poll-2", poll)]
    start, errors = threading.Barrier(len(workers)), []
    threads = [threading.Thread(target=_worker, args=(n, start, w, errors), name=n) for n, w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE_S + 30)

    assert (errors, [t.name for t in threads if t.is_alive()]) == ([], [])
    expected = Counter(
        (op_id, step, n)
        for op_id in ids
        for step, n in (("prepare", 1), ("watch", 1), ("watch", 2), ("finish", 1))
    )
    assert Counter(RUNS) == expected  # every step of every operation ran, and ran once
    ended = Operation.objects.filter(pk__in=ids).order_by("pk")
    assert [(o.pk, o.state, o.claimed_by, o.result) for o in ended] == [
        (op_id, OperationState.SUCCEEDED, "", {"passes": {"prepare": 1, "watch": 2, "finish": 1}})
        for op_id in ids
    ]
    actions = Counter(AuditEvent.objects.filter(operation_id__in=ids).values_list("action", flat=True))
    assert actions == {"test.race.requested": OPERATIONS, "test.race.succeeded": OPERATIONS}
    status = verify_chain()
    assert (status.ok, status.broken_at) == (True, None)
