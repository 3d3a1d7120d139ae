"""Two real Celery poll workers and two real Celery admin workers over 20 operations: each step runs once.

The workers are the console's own (``console.runner.worker_commands``: the same argv as `make run`,
two of each with their own node names), on a Redis of the test's and the test database (SQLite file,
or the session's PostgreSQL with ``CONSOLE_TEST_DB=postgres``), importing ``tests.race_worker`` to
declare the toy kind ``test.race`` (tests/race_kind.py). The operations are started as the console
starts any (``run_operation(id)`` on commit, routed to ``admin``) and every id is sent a second time
(a redelivery, or a second click): both admin workers' slots race to claim. The middle step waits
once, so each operation is claimed again through beat's tick, sent here every 0.2 s to ``poll``,
where both poll workers take ticks and each runs its due operations on POLL_THREADS threads. Every
execution of every step is appended to its process's file; the test counts them.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from console.models import Operation
from console.models.operations import FINISHED_STATES
from console.operations import registry
from console.runner import BASE_DIR, worker_commands
from tests.procs import RedisServer, celery_env, point_celery_at, stop_groups, wait_for
from tests.race_kind import RACE, RUNS_ENV, assert_each_ran_once, start

pytestmark = pytest.mark.timeout(240)

OPERATIONS = 20
DEADLINE_S = 60.0
TICK_EVERY_S = 0.2


@pytest.fixture
def broker(tmp_path, settings):
    redis = RedisServer(tmp_path).start()
    url = f"redis://127.0.0.1:{redis.port}"
    settings.REDIS_URL = f"{url}/0"
    undo = point_celery_at(f"{url}/0")
    try:
        yield url
    finally:
        undo()
        redis.stop()


def _argv(queue: str, node: str) -> list[str]:
    """`make run`'s worker for ``queue``, named ``node``, also importing the toy kind."""
    argv = dict(worker_commands([sys.executable, "-m", "celery", "-A", "tasks"]))[f"worker-{queue}"]
    argv[argv.index("-n") + 1] = f"{node}@%h"
    return [*argv, "--include", "tests.race_worker"]


@pytest.fixture
def workers(broker, tmp_path, monkeypatch):
    """poll1, poll2, admin1, admin2 consuming; yields the directory of their step records."""
    from tasks.celery import app

    runs = tmp_path / "runs"
    logs = tmp_path / "logs"
    runs.mkdir()
    logs.mkdir()
    monkeypatch.setitem(registry._KINDS, RACE.name, RACE)  # this process starts and audits them
    env = celery_env(broker, **{RUNS_ENV: str(runs), "POLL_THREADS": "4"})
    nodes = {"poll1": "poll", "poll2": "poll", "admin1": "admin", "admin2": "admin"}
    procs = []
    try:
        for node, queue in nodes.items():
            with open(logs / f"{node}.log", "w") as out:
                procs.append(
                    subprocess.Popen(
                        _argv(queue, node),
                        env=env,
                        cwd=BASE_DIR,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        wait_for("four workers to answer a ping", lambda: len(app.control.ping(timeout=0.5)) == 4, 90, logs)
        yield runs, logs
    finally:
        stop_groups(procs)


def _unfinished(ids: list[int]) -> int:
    return Operation.objects.filter(pk__in=ids).exclude(state__in=FINISHED_STATES).count()


@pytest.mark.django_db(transaction=True)
def test_it_runs_each_step_once_with_two_real_poll_and_two_real_admin_workers(
    workers, django_user_model, settings
):
    from tasks.operations import enqueue, tick

    runs, logs = workers
    settings.OPERATION_DISPATCHER = "tasks.operations.enqueue"  # the console's own: Celery, by id
    ids = start(django_user_model.objects.create_user(username="operator"), OPERATIONS)
    for op_id in ids:
        enqueue(op_id)  # a second copy of every message: two admin slots race to claim

    deadline = time.monotonic() + DEADLINE_S
    while _unfinished(ids) and time.monotonic() < deadline:
        tick.apply_async()  # beat, faster: both poll workers take ticks
        time.sleep(TICK_EVERY_S)

    assert _unfinished(ids) == 0, "\n".join(
        (logs / f).read_text()[-2000:] for f in ("poll1.log", "admin1.log")
    )
    assert_each_ran_once(ids, runs)  # every step of every operation ran, and ran once
    by_node = _steps_by_node(runs)
    assert set(by_node) >= {"poll", "admin"}, by_node  # both queues' workers ran steps
    print("steps run per worker:", by_node)


def _steps_by_node(runs) -> dict[str, int]:
    """Steps run per queue and worker node ({"admin": n, "admin1": n, ...}), from the pool processes'
    pids each worker reports."""
    from tasks.celery import app

    node_of = {
        pid: name.split("@")[0]
        for name, stats in (app.control.inspect(timeout=2).stats() or {}).items()
        for pid in stats["pool"]["processes"]
    }
    counts: dict[str, int] = {}
    for path in runs.glob("runs-*.tsv"):
        node = node_of.get(int(path.stem.split("-")[1]), "?")
        steps = len(path.read_text().splitlines())
        for key in (node, node.rstrip("12")):
            counts[key] = counts.get(key, 0) + steps
    return counts
