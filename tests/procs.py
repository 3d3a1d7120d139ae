"""Process helpers for tests that start real servers (Celery workers, Redis, Spark)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path


def stop_groups(procs: list[subprocess.Popen], grace_s: float = 15) -> None:
    """TERM each process group (a worker's pool, executors or JVM go with it), KILL what is left
    after ``grace_s``."""
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout_s: float, logs: Path | None = None):
    """``check()``'s first truthy answer within ``timeout_s``; else fail naming ``what``, with the tails of
    the ``*.log`` files in ``logs``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.1)
    tails = ""
    if logs is not None:
        tails = "".join(f"\n--- {f.name}\n{f.read_text()[-3000:]}" for f in sorted(logs.glob("*.log")))
    raise AssertionError(f"timed out waiting for {what}{tails}")


class RedisServer:
    """A redis-server on 127.0.0.1 at a free port, keeping nothing on disk, that a test can stop and start."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.proc: subprocess.Popen | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        from console.runner import redis_executable, redis_ping

        argv = [
            redis_executable(),
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dir",
            str(self.directory),
        ]
        argv += ["--save", "", "--appendonly", "no"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)
        wait_for("Redis", lambda: redis_ping(self.port), 20)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop_groups([self.proc])
            self.proc = None


def celery_env(broker: str, **extra: str) -> dict[str, str]:
    """The environment of a console process a test starts (a Celery worker, beat): the test's
    database (the SQLite file, so that the processes share it, or the PostgreSQL pass's test database),
    ``broker`` (db 0 for tasks, db 1 for results), then ``extra``."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.postgresql":  # CONSOLE_TEST_DB=postgres (tests/pg.py)
        url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    else:
        assert db["ENGINE"] == "django.db.backends.sqlite3", "the processes share the test database"
        url = f"sqlite:///{db['NAME']}"
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "PYTHONUNBUFFERED": "1",
        "DATABASE_URL": url,
        "REDIS_URL": f"{broker}/0",
        "CELERY_RESULT_BACKEND": f"{broker}/1",
        **extra,
    }


def point_celery_at(broker_url: str):
    """Send the console's Celery app (tasks.celery.app) to ``broker_url``; returns the undo.

    ``app.close()`` drops the connection pool but not the producer pool that ``app.amqp`` keeps (task
    sends and ``app.control`` broadcasts use it), which would go on naming the old broker for the rest of
    the test run; both are reset, on the way in and on the way back.
    """
    from tasks.celery import app

    def _point(url: str) -> None:
        app.close()
        app.amqp._producer_pool = None
        app.conf.broker_url = url

    saved = app.conf.broker_url
    _point(broker_url)
    return lambda: _point(saved)
