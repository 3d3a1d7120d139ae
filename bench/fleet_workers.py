"""Real Celery workers for the fleet benches (fleet_snapshots, fleet_polls), as `make run` starts them.

``fleet_console(count, queues, beat=..., **world)`` is the bench's whole console: a redis-server of its
own (the one `make run` embeds; ``tests/procs.RedisServer``) named in this process's environment before
Django is set up (tasks on db 0, results on db 1), the world (``bench/fleet_world.FleetWorld``: the
sandbox clusters in their own process, registered in a throwaway console), then one Celery worker per
queue with the argv of ``console.runner.worker_commands`` (``{queue: concurrency}``) and, with
``beat=True``, Celery beat, each in its own process group on the bench console's database and var
directory (``tests/procs.celery_env``; the same keys open the same stored secrets). It yields
``(world, workers)`` once every worker answers a ping, and stops beat, the workers, Redis and the
world at the end. ``workers.pids()`` lists the workers' processes; ``cpu_seconds(pids)`` and
``sandbox_pid()`` let a bench say where its time went. Logs: ``<var_dir>/worker-<queue>.log``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.fleet_world import FleetWorld  # noqa: E402

BASE_DIR = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 120.0
CELERY = [sys.executable, "-m", "celery", "-A", "tasks"]


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo += children.get(found[-1], [])
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes have used so far (those still running)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def sandbox_pid() -> int:
    """The bench's sandbox process (harness.RemoteSandbox: this process's one multiprocessing child)."""
    import multiprocessing

    (child,) = multiprocessing.active_children()
    return child.pid


class Workers:
    """The bench's Celery workers (and beat); see the module docstring."""

    def __init__(self, broker: str) -> None:
        self.broker = broker
        self.procs: list[subprocess.Popen] = []  # the workers
        self.others: list[subprocess.Popen] = []  # beat

    def _spawn(self, argv: list[str], log: str, into: list[subprocess.Popen]) -> None:
        from tests.procs import celery_env

        with open(Path(os.environ["CONSOLE_VAR_DIR"]) / log, "w") as out:
            into.append(
                subprocess.Popen(
                    argv,
                    env=celery_env(self.broker),
                    cwd=BASE_DIR,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )

    def start(self, queues: dict[str, int]) -> Workers:
        """One worker per queue ({queue: concurrency}), logging warnings only."""
        from console.runner import worker_commands

        argvs = dict(worker_commands(CELERY))
        for queue, slots in queues.items():
            argv = list(argvs[f"worker-{queue}"])
            argv[argv.index("--concurrency") + 1] = str(slots)
            argv[argv.index("-l") + 1] = "warning"
            self._spawn(argv, f"worker-{queue}.log", self.procs)
        return self

    def beat(self) -> Workers:
        """Celery beat as `make run` starts it (its schedule file in the console's var directory)."""
        from console.runner import beat_command

        schedule = Path(os.environ["CONSOLE_VAR_DIR"]) / "celerybeat-schedule"
        self._spawn(beat_command(CELERY, schedule), "beat.log", self.others)
        return self

    def wait_ready(self) -> None:
        from tasks.celery import app

        deadline = time.monotonic() + START_TIMEOUT_S
        while len(app.control.ping(timeout=0.5)) < len(self.procs):
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                raise SystemExit(f"the Celery workers did not all answer within {START_TIMEOUT_S:.0f} s")

    def pids(self) -> list[int]:
        """Every worker process, pool children included."""
        return [pid for p in self.procs for pid in descendants(p.pid)]

    def stop(self) -> None:
        from tests.procs import stop_groups

        stop_groups([*self.others, *self.procs])


@contextmanager
def fleet_console(count: int, queues: dict[str, int], *, beat: bool = False, **world) -> Iterator[tuple]:
    """Redis, the world of ``count`` clusters, the workers (and beat): ``(world, workers)``."""
    from tests.procs import RedisServer

    redis = RedisServer(Path(tempfile.mkdtemp(prefix="bench-redis-")))
    broker = f"redis://127.0.0.1:{redis.port}"
    # before console.settings_celery is first imported (Django's settings, console.runner): it reads them
    os.environ["REDIS_URL"] = f"{broker}/0"
    os.environ["CELERY_RESULT_BACKEND"] = f"{broker}/1"
    redis.start()
    found = workers = None
    try:
        found = FleetWorld.start(count, **world)
        from django.db import connection

        connection.close()
        workers = Workers(broker).start(queues)
        if beat:
            workers.beat()
        workers.wait_ready()
        yield found, workers
    finally:
        if workers is not None:
            workers.stop()
        redis.stop()
        shutil.rmtree(redis.directory, ignore_errors=True)
        if found is not None:
            found.stop()
