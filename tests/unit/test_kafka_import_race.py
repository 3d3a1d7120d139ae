"""The first Kafka calls of a fresh process, made by several threads at once, do not deadlock.

kafka-python's protocol packages import their submodules from ``__init__``; when two threads
run the first import of a package and of one of its submodules at once, Python's per-module
import locks deadlock (``_DeadlockError: deadlock detected by _ModuleLock('kafka.protocol.consumer')``).
The first telemetry snapshot of a fresh Celery worker hit it every time (the log dirs are asked on
a helper thread while the offsets are read), and gunicorn's threaded workers can hit it on their
first pages. ``console/kafka/kp.py`` imports the protocol packages when ``console.kafka`` is
imported. Each case runs in a fresh interpreter (the test process has long imported kafka-python).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import os, sys, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
import django
django.setup()
from console.kafka import ClusterConnection, KafkaOperationError, get_gateway

gw = get_gateway(ClusterConnection(bootstrap_servers=sys.argv[1]))
errors = []

def guarded(call):
    def run():
        try:
            call()
        except KafkaOperationError:
            pass  # an answer from Kafka, whatever it is, means the imports went through
        except BaseException as exc:  # the deadlock error, or anything else
            errors.append(f"{type(exc).__name__}: {exc}")
    return run
"""

# The snapshot's own split: Metadata, then log dirs, configs and groups' offsets on its helper
# thread while this thread reads the offsets.
SNAPSHOT = """
from console.telemetry.snapshots import fetch_snapshot
guarded(lambda: fetch_snapshot(gw))()
"""

# Three threads released together, each making a different first call (as web threads would).
THREADS = """
go = threading.Barrier(3)
calls = (
    lambda: gw.offsets_by_leader({1: {"race": [0]}}, ("latest", "earliest")),
    lambda: gw.describe_log_dirs([1]),
    lambda: gw.list_consumer_group_offsets(),
)
threads = [threading.Thread(target=guarded(lambda c=c: (go.wait(), c()))) for c in calls]
for t in threads:
    t.start()
for t in threads:
    t.join(120)
"""

REPORT = """
print("ERRORS" if errors else "OK", *errors, sep="\\n")
"""


def run_fresh(body: str, bootstrap: str) -> str:
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(body) + textwrap.dedent(REPORT)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, bootstrap],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.mark.parametrize("body", [SNAPSHOT, THREADS], ids=["snapshot", "threads"])
def test_first_kafka_calls_on_several_threads_do_not_deadlock(sandbox, body):
    if "race" not in sandbox.state.topics:
        sandbox.create_topic("race", 1, 1)
    # Without the eager imports every one of these runs failed (deadlock on the first import);
    # three fresh processes per case keep a lucky interleaving from hiding it.
    for _ in range(3):
        out = run_fresh(body, sandbox.bootstrap_servers)
        assert out == "OK", out


def test_every_lazy_kafka_import_of_the_gateway_is_loaded_eagerly():
    """A kafka-python module imported inside a gateway function is one of kp.EAGER_IMPORTS (or a
    new lazy import would bring the race back for that module)."""
    import ast

    from console.kafka import kp

    lazy = set()
    for path in sorted((ROOT / "console" / "kafka").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (inner.module or "").split(".")[0] == "kafka":
                    lazy.add((path.name, inner.module))
                elif isinstance(inner, ast.Import):
                    lazy |= {(path.name, a.name) for a in inner.names if a.name.split(".")[0] == "kafka"}
    assert lazy, "the scan found no lazy import at all: it no longer sees them"
    missing = sorted(f"{file}: {module}" for file, module in lazy if module not in kp.EAGER_IMPORTS)
    assert missing == []
