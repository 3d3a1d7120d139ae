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
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connections
from django.utils import timezone

from console.models import Operation, OperationState
from console.models.operations import FINISHED_STATES
from console.operations import registry
from tests.race_kind import RACE, RUNS_ENV, STEPS, assert_each_ran_once, start

OPERATIONS = 20
DEADLINE_S = 60.0
RUNS_DIR: list[Path] = []  # where each worker process writes its executions (set by the fixture)


@pytest.fixture
def race_kind(monkeypatch, tmp_path):
    monkeypatch.setitem(registry._KINDS, RACE.name, RACE)  # inherited by the forked workers
    monkeypatch.setattr("console.health.record_tick", lambda at=None: True)  # no Redis in this test
    monkeypatch.setenv(RUNS_ENV, str(tmp_path))
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


@pytest.mark.django_db(transaction=True)
def test_it_runs_each_step_once_with_two_poll_and_two_admin_workers_racing(race_kind, django_user_model):
    ids = start(django_user_model.objects.create_user(username="operator"), OPERATIONS)

    _race(ids)

    assert_each_ran_once(ids, RUNS_DIR[0])  # every step of every operation ran, and ran once


@pytest.mark.django_db(transaction=True)
def test_it_recovers_each_operation_of_a_dead_worker_once_with_four_workers_racing(
    race_kind, django_user_model, settings
):
    """A worker died in the middle of each operation's "watch" step (prepare done, heartbeat stale):
    all four take it over through the recovery claim, and exactly one of them runs the rest."""
    ids = start(django_user_model.objects.create_user(username="operator"), OPERATIONS)
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

    # the dead worker's step again, once, then the rest once
    assert_each_ran_once(ids, RUNS_DIR[0], steps=STEPS[1:])
