"""Process helpers for tests that start real servers (Celery workers, Redis, Spark)."""

from __future__ import annotations

import os
import signal
import subprocess
import time


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
