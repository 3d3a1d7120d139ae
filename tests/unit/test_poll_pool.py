"""Beat's tick hands the due operations to the poll worker's pool (tasks/poller.py): POLL_THREADS run at
once, an operation's next poll runs when due (no tick needed), each thread closes its connection.

A toy kind whose step waits on "Kafka" (a sleep) and records which thread ran it, in whose name, and
how many steps were in flight; the operations are made due as a reassignment's poll is (running,
unclaimed). Each test has a pool of its own (this process's is replaced, and shut down after).
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from console.models import Operation, OperationState
from console.operations import Done, Kind, Step, Wait, registry

WAIT_S = 0.3
_seen: dict = {}


def _poll(ctx):
    with _seen["lock"]:
        _seen["in_flight"] += 1
        _seen["peak"] = max(_seen["peak"], _seen["in_flight"])
        _seen["connections"].append(connections["default"])  # this thread's own
        _seen["threads"].add(threading.get_ident())
        _seen["claimants"].add(ctx.worker)
        _seen["runs"].append((ctx.op.pk, time.monotonic()))
    time.sleep(WAIT_S)  # waiting on Kafka
    with _seen["lock"]:
        _seen["in_flight"] -= 1
    passes = ctx.data["passes"] = ctx.data.get("passes", 0) + 1
    if passes < ctx.op.params.get("polls", 1):
        return Wait(0.2)  # a reassignment's poll: again in a moment
    return Done(OperationState.SUCCEEDED, {"polled": passes})


POLLED = Kind("test.polled", (Step("poll", _poll),))


@pytest.fixture
def pool(monkeypatch, settings):
    """A fresh pool for this process (POLL_THREADS=3), shut down at the end; yields it once made."""
    from tasks import poller

    monkeypatch.setitem(registry._KINDS, POLLED.name, POLLED)
    monkeypatch.setattr("console.health.record_tick", lambda at=None: True)  # no Redis here
    monkeypatch.setattr(poller, "_POLLERS", {})
    settings.POLL_THREADS = 3
    _seen.update(
        lock=threading.Lock(), in_flight=0, peak=0, connections=[], threads=set(), claimants=set(), runs=[]
    )
    yield lambda: next(iter(poller._POLLERS.values()))
    for made in poller._POLLERS.values():
        made.shutdown()
    _seen.clear()


def _due(count: int, polls: int = 1) -> list[int]:
    return [
        Operation.objects.create(
            kind=POLLED.name, state=OperationState.RUNNING, claimed_by="", params={"polls": polls}
        ).pk
        for _ in range(count)
    ]


def _ended(ids: list[int]) -> list[tuple]:
    return [(o.state, o.claimed_by, o.result) for o in Operation.objects.filter(pk__in=ids).order_by("pk")]


@pytest.mark.django_db(transaction=True)
def test_it_runs_the_due_operations_of_a_tick_at_once_on_poll_threads(pool):
    from tasks.operations import tick, worker_name

    ids = _due(5)

    started = time.monotonic()
    assert tick.run() == ids  # all handed to the pool, in due order; the tick does not wait
    assert time.monotonic() - started < WAIT_S
    assert pool().idle(10)

    assert _seen["peak"] == 3  # three at once, never more than POLL_THREADS
    assert len(_seen["threads"]) == 3 and threading.get_ident() not in _seen["threads"]
    assert _seen["claimants"] == {f"{worker_name()}:poll_{n}" for n in range(3)}  # each its own claim
    assert _ended(ids) == [(OperationState.SUCCEEDED, "", {"polled": 1})] * 5
    # each pool thread's own connection was closed when its work was done
    assert all(c.connection is None for c in _seen["connections"])


@pytest.mark.django_db(transaction=True)
def test_an_operations_next_poll_runs_when_due_without_another_tick(pool):
    from tasks.operations import tick

    ids = _due(2, polls=3)

    assert tick.run() == ids  # one tick
    assert pool().idle(10)

    assert _ended(ids) == [(OperationState.SUCCEEDED, "", {"polled": 3})] * 2
    for op_id in ids:  # each poll 0.2 s (its wait) after the end of the one before
        times = [at for pk, at in _seen["runs"] if pk == op_id]
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        assert len(gaps) == 2 and all(WAIT_S + 0.2 <= gap < WAIT_S + 0.2 + 0.5 for gap in gaps), gaps


@pytest.mark.django_db(transaction=True)
def test_a_tick_does_not_queue_an_operation_the_pool_holds(pool):
    from tasks.operations import tick

    ids = _due(2, polls=2)

    assert tick.run() == ids
    assert tick.run() == []  # running, then timed for its next poll: held by the pool
    time.sleep(WAIT_S + 0.1)
    assert tick.run() == []
    assert pool().idle(10)
    assert _ended(ids) == [(OperationState.SUCCEEDED, "", {"polled": 2})] * 2
    assert len(_seen["runs"]) == 4  # two polls each, none twice
