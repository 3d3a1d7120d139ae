"""An idle `make run` logs nothing for its housekeeping: the poll worker and beat exactly as the runner
starts them (``worker_commands``, ``beat_command``), on a real Redis and the test database, run for a
few seconds of 1 s ticks; the ticks run (their results are in the backend) and neither logs a line
about them, while a task that is not housekeeping is still logged."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import redis

from console.runner import BASE_DIR, beat_command, worker_commands
from tests.procs import RedisServer, celery_env, point_celery_at, stop_groups, wait_for

pytestmark = pytest.mark.timeout(180)
IDLE_S = 6.0


@pytest.fixture
def broker_port(tmp_path):
    redis = RedisServer(tmp_path).start()
    try:
        yield redis.port
    finally:
        redis.stop()


@pytest.mark.django_db(transaction=True)
def test_an_idle_poll_worker_and_beat_log_nothing_about_the_tick(broker_port, tmp_path):
    from tasks.celery import app

    broker = f"redis://127.0.0.1:{broker_port}"
    env = celery_env(broker, LOG_LEVEL="INFO")
    celery = [sys.executable, "-m", "celery", "-A", "tasks"]
    commands = dict(worker_commands(celery))
    logs = tmp_path / "logs"
    logs.mkdir()
    procs: list[subprocess.Popen] = []

    def start(name: str, argv: list[str]) -> None:
        with open(logs / f"{name}.log", "w") as out:
            procs.append(
                subprocess.Popen(
                    argv, env=env, cwd=BASE_DIR, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            )

    results = redis.Redis(port=broker_port, db=1)
    undo = point_celery_at(f"{broker}/0")
    try:
        start("worker-poll", commands["worker-poll"])
        wait_for("the poll worker", lambda: "ready." in (logs / "worker-poll.log").read_text(), 90, logs)
        start("beat", beat_command(celery, tmp_path / "celerybeat-schedule"))
        wait_for("beat's first ticks", lambda: len(results.keys("celery-task-meta-*")) >= 2, 60, logs)
        ticks_before = len(results.keys("celery-task-meta-*"))
        time.sleep(IDLE_S)
        ticks = len(results.keys("celery-task-meta-*")) - ticks_before
        app.send_task("tasks.operations.run_operation", args=[987654], queue="poll")  # not housekeeping
        worker_log = logs / "worker-poll.log"
        wait_for(
            "the operation task's log line", lambda: "run_operation[" in worker_log.read_text(), 30, logs
        )
    finally:
        undo()
        stop_groups(procs)

    lines = worker_log.read_text().splitlines()
    worker_lines = lines[next(i for i, line in enumerate(lines) if "ready." in line) + 1 :]  # past its banner
    beat_lines = (logs / "beat.log").read_text().splitlines()
    assert ticks >= IDLE_S - 2, f"only {ticks} ticks ran in {IDLE_S}s: not a proof"
    assert [line for line in worker_lines if "tasks.operations.tick" in line] == []
    assert [
        line for line in beat_lines if "Sending due task" in line or "tasks.operations.tick" in line
    ] == []
    assert any("Task tasks.operations.run_operation[" in line and "received" in line for line in worker_lines)
