"""Beat's tick runs the due operations at once on POLL_THREADS threads; each thread closes its connection.

A toy kind whose one step waits on "Kafka" (a sleep) and records which thread ran it and how many
steps were in flight; the operations are made due as a reassignment's poll is (running, unclaimed).
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from console.models import Operation, OperationState
from console.operations import Done, Kind, Step, registry

WAIT_S = 0.3
_seen: dict = {}


def _poll(ctx):
    with _seen["lock"]:
        _seen["in_flight"] += 1
        _seen["peak"] = max(_seen["peak"], _seen["in_flight"])
        _seen["connections"].append(connections["default"])  # this thread's own
        _seen["threads"].add(threading.get_ident())
        _seen["claimants"].add(ctx.worker)
    time.sleep(WAIT_S)  # waiting on Kafka
    with _seen["lock"]:
        _seen["in_flight"] -= 1
    return Done(OperationState.SUCCEEDED, {"polled": ctx.op.pk})


POLLED = Kind("test.polled", (Step("poll", _poll),))


@pytest.fixture
def polled_kind(monkeypatch):
    monkeypatch.setitem(registry._KINDS, POLLED.name, POLLED)
    monkeypatch.setattr("console.health.record_tick", lambda at=None: True)  # no Redis here
    _seen.update(lock=threading.Lock(), in_flight=0, peak=0, connections=[], threads=set(), claimants=set())
    yield POLLED
    _seen.clear()


def _due(count: int) -> list[int]:
    return [
        Operation.objects.create(kind=POLLED.name, state=OperationState.RUNNING, claimed_by="").pk
        for _ in range(count)
    ]


@pytest.mark.django_db(transaction=True)
def test_it_runs_the_due_operations_of_a_tick_at_once_on_poll_threads(polled_kind, settings):
    from tasks.operations import tick, worker_name

    settings.POLL_THREADS = 3
    ids = _due(5)

    started = time.monotonic()
    ran = tick.run()
    took = time.monotonic() - started

    assert ran == ids  # every due operation ran, reported in due order
    assert _seen["peak"] == 3  # three at once, never more than POLL_THREADS
    assert len(_seen["threads"]) == 3 and threading.get_ident() not in _seen["threads"]
    assert _seen["claimants"] == {f"{worker_name()}:poll_{n}" for n in range(3)}  # each its own claim
    assert took < 5 * WAIT_S  # overlapped: one after another would take 1.5 s
    ended = Operation.objects.filter(pk__in=ids).order_by("pk")
    assert [(o.state, o.claimed_by, o.result) for o in ended] == [
        (OperationState.SUCCEEDED, "", {"polled": pk}) for pk in ids
    ]
    # each pool thread's own connection was closed when its work was done
    assert all(c.connection is None for c in _seen["connections"])


@pytest.mark.django_db(transaction=True)
def test_a_single_due_operation_runs_on_the_tick_itself(polled_kind, settings):
    from tasks.operations import tick, worker_name

    (op_id,) = _due(1)

    assert tick.run() == [op_id]
    assert _seen["threads"] == {threading.get_ident()}  # no thread, no second connection
    assert _seen["claimants"] == {worker_name()}
    assert Operation.objects.get(pk=op_id).state == OperationState.SUCCEEDED
