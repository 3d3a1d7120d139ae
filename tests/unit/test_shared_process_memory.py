"""The console's processes share what they import (docs/scaling.md, "Memory").

gunicorn's master loads the console and forks its workers from it (``preload_app``), Celery's
worker main process imports the task modules before its prefork pool forks the children, both
freeze those objects out of the cyclic collector, and beat runs an app of its own that sets
Django up not at all. What a fork must not inherit: an open database connection (two processes
on one socket) or a thread (the child has none of it).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]

# Runs in a fresh interpreter: what the process holds once its set-up is done.
_STATE = """
import gc, json, sys, threading
from django.db import connections
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "threads": [t.name for t in threading.enumerate()],
    "connections": [c.alias for c in connections.all(initialized_only=True) if c.connection is not None],
    "modules": sorted(m for m in sys.modules if m.startswith(("console.", "tasks.", "pyarrow"))),
    "apps_ready": __import__("django.apps").apps.apps.ready,
}))
"""


def _state_after(setup: str, tmp_path: Path) -> dict:
    env = dict(os.environ, CONSOLE_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="console.settings")
    out = subprocess.run(
        [sys.executable, "-c", setup + _STATE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_web_master_has_every_view_imported_and_frozen_and_no_connection_or_thread_to_fork(tmp_path):
    state = _state_after(
        "import console.gunicorn_conf as conf\nimport console.wsgi\nconf.when_ready(None)\n", tmp_path
    )
    assert "console.views.topics" in state["modules"] and "console.views.reassignment" in state["modules"]
    assert state["frozen"] > 100_000  # Django, the areas and the views: out of the collector's reach
    assert state["threads"] == ["MainThread"]
    assert state["connections"] == []


def test_a_worker_imports_its_tasks_before_the_pool_forks_with_no_connection_or_thread(tmp_path):
    state = _state_after("from tasks.celery import _import_before_the_pool_forks as f\nf()\n", tmp_path)
    assert state["apps_ready"] is True
    assert {"tasks.operations", "tasks.telemetry", "tasks.alerts"} <= set(state["modules"])
    assert state["frozen"] > 100_000
    assert state["threads"] == ["MainThread"]
    assert state["connections"] == []


def test_beat_sends_the_workers_schedule_without_setting_django_up(tmp_path):
    state = _state_after(
        "import tasks.beat as beat, tasks.celery as workers\n"
        "assert beat.app.conf.beat_schedule == workers.app.conf.beat_schedule\n"
        "assert beat.app.conf.broker_url == workers.app.conf.broker_url\n"
        "assert beat.app.conf.task_routes == workers.app.conf.task_routes\n",
        tmp_path,
    )
    assert state["apps_ready"] is False
    assert not [m for m in state["modules"] if m.startswith(("console.kafka", "console.views", "pyarrow"))]
    assert not [
        m for m in state["modules"] if m.startswith("tasks.") and m not in ("tasks.beat", "tasks.celery")
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_gunicorn_with_the_console_config_serves_from_workers_forked_off_the_loaded_master(tmp_path):
    port = _free_port()
    env = dict(os.environ, CONSOLE_VAR_DIR=str(tmp_path), WEB_WORKERS="2", WEB_LOG_LEVEL="info")
    log = tmp_path / "gunicorn.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                str(ROOT / "console" / "gunicorn_conf.py"),
                "--bind",
                f"127.0.0.1:{port}",
                "console.wsgi",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline, body = time.monotonic() + 60, None
        while body is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as resp:
                    body = (resp.status, resp.read())
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.2)
        assert body[0] == 200
        while len(workers := psutil.Process(proc.pid).children()) < 2:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        time.sleep(1)  # both booted
        # Forked off a master that had loaded the console: each worker maps the master's pages
        # until it writes them, so most of what it holds is shared.
        for w in workers:
            rollup = dict(
                (k, int(v.split()[0]))
                for k, _, v in (line.partition(":") for line in open(f"/proc/{w.pid}/smaps_rollup"))
                if v.strip().endswith("kB")
            )
            shared = rollup["Shared_Clean"] + rollup["Shared_Dirty"]
            assert shared > rollup["Rss"] / 2, rollup
    finally:
        proc.terminate()
        proc.wait(30)
