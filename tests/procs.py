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
