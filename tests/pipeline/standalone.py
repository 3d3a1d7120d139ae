"""A Spark standalone cluster on loopback, from the installed PySpark's own launcher: a master and
workers (``pyspark/bin/spark-class ...deploy.master.Master`` / ``...deploy.worker.Worker``, Java from
PATH or JAVA_HOME), each in its own process group. tests/pipeline/test_spark_standalone.py runs the
pipeline on it; ``make try-spark`` (tests/try_it.py) starts one beside ``make run``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyspark

from tests.procs import free_port, stop_groups

BASE_DIR = Path(__file__).resolve().parent.parent.parent
SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"
MASTER, WORKER = "org.apache.spark.deploy.master.Master", "org.apache.spark.deploy.worker.Worker"


@dataclass(frozen=True)
class Standalone:
    url: str  # spark://127.0.0.1:<port>, what SPARK_MASTER names
    ui_port: int  # the master's web UI (its /json/ says how many workers are alive)
    logs: Path
    worker_ui_ports: tuple[int, ...]


def spawn(argv: list[str], env: dict[str, str], log: Path, cwd: Path = BASE_DIR) -> subprocess.Popen:
    """``argv`` in a process group of its own, its output in ``log``."""
    with open(log, "w") as out:
        return subprocess.Popen(
            argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def spark_env(workdir: Path) -> dict[str, str]:
    """The environment of Spark's processes (and of a driver): loopback, this Python, Java found."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    if not env.get("JAVA_HOME") and (java := shutil.which("java")):
        env["JAVA_HOME"] = str(Path(java).resolve().parent.parent)
    env.update(SPARK_LOG_DIR=str(workdir / "spark-logs"), SPARK_WORKER_DIR=str(workdir / "spark-work"))
    return env


def alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as resp:
            return int(json.load(resp).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


def missing() -> str:
    """What this machine lacks to start a cluster ("" when nothing)."""
    if not SPARK_CLASS.exists():
        return f"PySpark ships no launcher at {SPARK_CLASS}"
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "Spark needs Java (17 is what CI installs)"
    return ""


@contextmanager
def running_standalone(
    workdir: Path, workers: int = 2, memory: str = "768m", port: int = 0, ui_port: int = 0
) -> Iterator[Standalone]:
    """A master (``port``/``ui_port``, 0: free ones) and ``workers`` workers of one core and ``memory``
    each; the logs under ``workdir``/logs. Started, not waited for (``alive_workers``); every process
    group is stopped when the block ends."""
    port, ui_port = port or free_port(), ui_port or free_port()
    worker_uis = tuple(free_port() for _ in range(workers))
    env, logs = spark_env(workdir), workdir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    url = f"spark://127.0.0.1:{port}"
    procs = []
    try:
        master = [str(SPARK_CLASS), MASTER, "--host", "127.0.0.1", "--port", str(port)]
        procs.append(spawn([*master, "--webui-port", str(ui_port)], env, logs / "master.log"))
        for i, worker_ui in enumerate(worker_uis):
            worker = [str(SPARK_CLASS), WORKER, url, "--host", "127.0.0.1", "--webui-port", str(worker_ui)]
            worker += ["--cores", "1", "--memory", memory, "--work-dir", str(workdir / f"spark-work-{i}")]
            procs.append(spawn(worker, env, logs / f"worker-{i}.log"))
        yield Standalone(url, ui_port, logs, worker_uis)
    finally:
        stop_groups(procs)
