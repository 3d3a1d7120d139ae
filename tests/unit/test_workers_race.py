"""Two poll workers and two admin workers racing over the same operations run each step once.

Four forked OS processes, each with its own database connection, call the Celery tasks' bodies
(tasks/operations.py) as the workers would: the admin workers ``run_operation(id)`` for every
operation (each id delivered to both, as a redelivered task would be), the poll workers beat's
``tick()`` until everything has finished. Each process is its own worker (``host:pid``). The toy
kind appends every execution of its steps, keyed by (operation, step, pass), to its process's file;
its middle step waits once, so every operation is released and claimed again through the tick.
The claim's conditional UPDATE is what keeps two workers out of one step: on PostgreSQL
(``CONSOLE_TEST_DB=postgres``, tests/pg.py) the updates really race; SQLite serialises writers,
so there the test exercises the same path with less overlap.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import time
import traceback
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connections
from django.utils import timezone

from console.audit.store import verify_chain
from console.models import AuditEvent, Operation, OperationState
from console.models.operations import FINISHED_STATES
from console.operations import Done, Kind, Step, Wait, registry

OPERATIONS = 20
DEADLINE_S = 60.0
RUNS_DIR: list[Path] = []  # where each worker process writes its executions (set by the fixture)


def _record(ctx, step: str) -> None:
    passes = ctx.data.setdefault("passes", {})
    passes[step] = passes.get(step, 0) + 1
    with open(RUNS_DIR[0] / f"runs-{os.getpid()}.tsv", "a") as out:
        out.write(f"{ctx.op.pk}\t{step}\t{passes[step]}\n")
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
def race_kind(monkeypatch, tmp_path):
    monkeypatch.setitem(registry._KINDS, RACE.name, RACE)  # inherited by the forked workers
    monkeypatch.setattr("console.health.record_tick", lambda at=None: True)  # no Redis in this test
    RUNS_DIR[:] = [tmp_path]
    yield RACE
    RUNS_DIR.clear()


def _unfinished(ids: list[int]) -> bool:
    return Operation.objects.filter(pk__in=ids).exclude(state__in=FINISHED_STATES).exists()


def _admin(ids: list[int]) -> None:  # the admin queue: every id, in its own order
    from tasks.operations import run_operation

    for op_id in random.sample(ids, len(ids)):
        run_operation(op_id)


def _poll(ids: list[int]) -> None:  # the poll queue: beat's tick, again and again
    from tasks.operations import tick

    deadline = time.monotonic() + DEADLINE_S
    while _unfinished(ids) and time.monotonic() < deadline:
        tick()


def _worker(role: str, ids: list[int], go) -> None:
    """A forked worker process: its own connection (the parent closed its own before forking)."""
    try:
        go.wait(30)
        (_admin if role == "admin" else _poll)(ids)
    except BaseException:
        (RUNS_DIR[0] / f"error-{os.getpid()}.txt").write_text(traceback.format_exc())
        raise
    finally:
        connections.close_all()


def _executions() -> Counter:
    runs: Counter = Counter()
    for path in RUNS_DIR[0].glob("runs-*.tsv"):
        for line in path.read_text().splitlines():
            op_id, step, n = line.split("\t")
            runs[(int(op_id), step, int(n))] += 1
    return runs


def _race(ids: list[int]) -> None:
    """Two admin and two poll worker processes over ``ids``; asserts they all ended cleanly."""
    connections.close_all()  # a forked child must never share the parent's socket
    fork = multiprocessing.get_context("fork")
    go = fork.Event()
    workers = [
        fork.Process(target=_worker, args=(role, ids, go)) for role in ("admin", "admin", "poll", "poll")
    ]
    for w in workers:
        w.start()
    go.set()
    for w in workers:
        w.join(DEADLINE_S + 30)
    stuck = [w.pid for w in workers if w.is_alive()]
    for w in workers:
        if w.is_alive():
            w.kill()
    errors = [p.read_text() for p in RUNS_DIR[0].glob("error-*.txt")]
    assert (errors, stuck, [w.exitcode for w in workers]) == ([], [], [0, 0, 0, 0])


def _assert_all_succeeded_once(ids: list[int]) -> None:
    ended = Operation.objects.filter(pk__in=ids).order_by("pk")
    assert [(o.pk, o.state, o.claimed_by, o.result) for o in ended] == [
        (op_id, OperationState.SUCCEEDED, "", {"passes": {"prepare": 1, "watch": 2, "finish": 1}})
        for op_id in ids
    ]
    actions = Counter(AuditEvent.objects.filter(operation_id__in=ids).values_list("action", flat=True))
    assert actions == {"test.race.requested": len(ids), "test.race.succeeded": len(ids)}
    status = verify_chain()
    assert (status.ok, status.broken_at) == (True, None)


def _start(actor, count: int) -> list[int]:
    from console import operations

    return [
        operations.start(actor=actor, kind=RACE.name, cluster=None, params={"n": n}).pk for n in range(count)
    ]


@pytest.mark.django_db(transaction=True)
def test_it_runs_each_step_once_with_two_poll_and_two_admin_workers_racing(race_kind, django_user_model):
    ids = _start(django_user_model.objects.create_user(username="operator"), OPERATIONS)

    _race(ids)

    expected = Counter(
        (op_id, step, n)
        for op_id in ids
        for step, n in (("prepare", 1), ("watch", 1), ("watch", 2), ("finish", 1))
    )
    assert _executions() == expected  # every step of every operation ran, and ran once
    _assert_all_succeeded_once(ids)


@pytest.mark.django_db(transaction=True)
def test_it_recovers_each_operation_of_a_dead_worker_once_with_four_workers_racing(
    race_kind, django_user_model, settings
):
    """A worker died in the middle of each operation's "watch" step (prepare done, heartbeat stale):
    all four take it over through the recovery claim, and exactly one of them runs the rest."""
    ids = _start(django_user_model.objects.create_user(username="operator"), OPERATIONS)
    stale = timezone.now() - timedelta(seconds=settings.OPERATION_STALE_AFTER_S + 5)
    Operation.objects.filter(pk__in=ids).update(
        state=OperationState.RUNNING,
        claimed_by="dead-host:1",
        heartbeat_at=stale,
        started_at=stale,
        step=1,
        data={"passes": {"prepare": 1}},
    )

    _race(ids)

    expected = Counter(
        (op_id, step, n) for op_id in ids for step, n in (("watch", 1), ("watch", 2), ("finish", 1))
    )
    assert _executions() == expected  # the dead worker's step again, once, then the rest once
    _assert_all_succeeded_once(ids)
