"""The snapshot fan-out: beat sends one task per cluster to the batch queue, where BATCH_SLOTS run at once.

Real Redis (the embedded one `make run` uses), the sandbox, the lake in a temp dir. The dispatcher's
messages are read back from the batch queue's Redis list as a worker would receive them; the
end-to-end test runs the batch worker exactly as `make run` starts it (``worker_commands``, with
``--concurrency BATCH_SLOTS``) against the test database.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time

import pytest
import redis

from console.models import Cluster
from console.runner import BASE_DIR, WORKER_CONCURRENCY, worker_commands
from tasks import telemetry as telemetry_tasks
from tests.procs import RedisServer, celery_env, point_celery_at, stop_groups, wait_for

INTERVAL_S = 300


@pytest.fixture
def broker(tmp_path, settings):
    server = RedisServer(tmp_path).start()
    url = f"redis://127.0.0.1:{server.port}"
    settings.REDIS_URL = f"{url}/0"  # the snapshot lock's Redis, as in a deployment: the broker's
    undo = point_celery_at(f"{url}/0")
    try:
        yield url
    finally:
        undo()
        server.stop()


@pytest.fixture
def lake_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))
    monkeypatch.setenv("TELEMETRY_INTERVAL_S", str(INTERVAL_S))
    return tmp_path / "lake"


def _queued(url: str, queue: str) -> list[tuple[str, tuple, float | None]]:
    """(task name, args, seconds until it expires) of every message waiting in ``queue``."""
    from datetime import datetime

    out = []
    for raw in redis.Redis.from_url(f"{url}/0").lrange(queue, 0, -1):
        message = json.loads(raw)
        headers = message["headers"]
        args = tuple(json.loads(base64.b64decode(message["body"]))[0])
        expires = headers.get("expires")
        left = None if expires is None else (datetime.fromisoformat(expires).timestamp() - time.time())
        out.append((headers["task"], args, left))
    return out


def _snapshots(lake_dir, name: str) -> list:
    return sorted((lake_dir / "partitions" / f"cluster={name}").rglob("snap-*.parquet"))


@pytest.mark.django_db
def test_it_sends_one_task_per_cluster_to_the_batch_queue_expiring_after_the_interval(
    kafka_cluster, offline_cluster, broker, lake_dir
):
    sent = telemetry_tasks.collect_snapshots.run()

    assert sorted(sent) == ["offline", "sandbox"] and all(sent.values())
    queued = _queued(broker, "batch")
    assert sorted((task, args) for task, args, _ in queued) == [
        ("tasks.telemetry.collect_cluster_snapshot", (kafka_cluster.pk,)),
        ("tasks.telemetry.collect_cluster_snapshot", (offline_cluster.pk,)),
    ]
    assert all(INTERVAL_S - 30 < left <= INTERVAL_S for _, _, left in queued)
    assert _snapshots(lake_dir, "sandbox") == []  # the dispatcher itself snapshots nothing


@pytest.mark.django_db
def test_a_clusters_task_snapshots_it_once_per_interval(
    kafka_cluster, offline_cluster, broker, lake_dir, monkeypatch
):
    # Both runs in one interval, whatever the wall clock: the clock the snapshot reads is pinned to
    # the middle of the current interval (two runs straddling an interval's end are two snapshots).
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from console.telemetry import snapshots

    now = time.time()
    middle = datetime.fromtimestamp(now - now % INTERVAL_S + INTERVAL_S / 2, UTC)
    monkeypatch.setattr(snapshots, "timezone", SimpleNamespace(now=lambda: middle))
    task = telemetry_tasks.collect_cluster_snapshot

    assert task.run(kafka_cluster.pk) == "ok"
    assert task.run(kafka_cluster.pk) == "skipped"
    assert "127.0.0.1:1" in task.run(offline_cluster.pk)  # why Kafka could not be read
    assert task.run(10_000_000) == "gone"
    assert len(_snapshots(lake_dir, "sandbox")) == 1
    assert not (lake_dir / "partitions" / "cluster=offline").exists()


@pytest.mark.django_db
def test_a_cluster_being_snapshotted_is_not_snapshotted_again_at_once(kafka_cluster, broker, lake_dir):
    task = telemetry_tasks.collect_cluster_snapshot

    with telemetry_tasks.snapshot_lock(kafka_cluster.pk, ttl_s=60) as held:
        assert held
        assert task.run(kafka_cluster.pk) == telemetry_tasks.BUSY  # another slot holds it
        assert _snapshots(lake_dir, "sandbox") == []
    assert task.run(kafka_cluster.pk) == "ok"  # released: the next task takes it
    assert redis.Redis.from_url(f"{broker}/0").keys("console:telemetry:*") == []  # released again


@pytest.mark.django_db
def test_without_redis_the_snapshot_runs_unlocked(kafka_cluster, lake_dir, settings):
    from tests.procs import free_port

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    assert telemetry_tasks.collect_cluster_snapshot.run(kafka_cluster.pk) == "ok"
    assert len(_snapshots(lake_dir, "sandbox")) == 1


@pytest.mark.timeout(180)
@pytest.mark.django_db(transaction=True)
def test_the_batch_worker_snapshots_every_cluster_once_even_when_beat_sends_twice(
    sandbox, broker, lake_dir, tmp_path, settings, monkeypatch
):
    """Four clusters (the sandbox under four names), two dispatches (two beats): each cluster ends
    with one snapshot, taken by the batch worker's BATCH_SLOTS processes.

    The interval is a day here: with 300 s, a run that straddled a slot's end (CI ci54a, a loaded
    machine) rightly took a second snapshot in the next slot, which this test cannot tell from a
    duplicate."""
    interval_s = 86_400
    monkeypatch.setenv("TELEMETRY_INTERVAL_S", str(interval_s))
    from celery.backends.redis import RedisBackend
    from celery.result import AsyncResult

    from tasks.celery import app

    names = [f"fleet-{i}" for i in range(4)]
    for name in names:
        Cluster.objects.create(name=name, bootstrap_servers=sandbox.bootstrap_servers, request_timeout_s=5)
    logs = tmp_path / "logs"
    logs.mkdir()
    argv = dict(worker_commands([sys.executable, "-m", "celery", "-A", "tasks"]))["worker-batch"]
    assert argv[argv.index("--concurrency") + 1] == str(WORKER_CONCURRENCY["batch"]) == "2"
    env = celery_env(broker, TELEMETRY_LAKE_DIR=str(lake_dir), TELEMETRY_INTERVAL_S=str(interval_s))
    with open(logs / "worker-batch.log", "w") as out:
        proc = subprocess.Popen(
            argv, env=env, cwd=BASE_DIR, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        wait_for("the batch worker", lambda: len(app.control.ping(timeout=0.5)) == 1, 90, logs)
        first = telemetry_tasks.collect_snapshots.run()
        second = telemetry_tasks.collect_snapshots.run()
        backend = RedisBackend(app=app, url=f"{broker}/1")
        answers = {
            name: sorted(
                AsyncResult(ids[name], app=app, backend=backend).get(timeout=120, interval=0.1)
                for ids in (first, second)
            )
            for name in names
        }
    finally:
        stop_groups([proc])

    for name in names:  # one "ok"; the other copy found it taken ("skipped") or being taken ("busy")
        assert answers[name] in (["ok", "skipped"], ["busy", "ok"]), (name, answers[name])
        assert len(_snapshots(lake_dir, name)) == 1
    log = (logs / "worker-batch.log").read_text()
    slots = {f"ForkPoolWorker-{n}" for n in (1, 2) if f"{n}] Task tasks.telemetry.collect_cluster" in log}
    assert len(slots) == 2, log[-3000:]  # both slots took clusters
