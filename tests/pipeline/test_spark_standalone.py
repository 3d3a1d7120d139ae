"""The pipeline on a real Spark standalone cluster gives the same reports as on ``local[*]``.

A master and a worker are started on 127.0.0.1 from the installed PySpark's own launcher
(``pyspark/bin/spark-class ...deploy.master.Master`` / ``...deploy.worker.Worker``, Java from
PATH or JAVA_HOME), then ``manage.py run_pipeline`` runs twice over the same small lake (two
copies): once with ``SPARK_MASTER=local[*]``, once with ``SPARK_MASTER=spark://127.0.0.1:<port>``,
so the executors are separate JVMs launched by the worker. The local run starts while the
cluster comes up, to keep the test near a minute and a half on a busy 2-core machine. Every
process started here is stopped by the fixtures' finalizers (process group TERM, then KILL).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyspark
import pytest
from django.conf import settings

from console.models import Cluster, Operation, OperationState
from pipeline import generate, reports
from tests.procs import free_port, stop_groups

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(400)]

BASE_DIR = Path(__file__).resolve().parent.parent.parent
SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"
START = datetime(2026, 4, 1, tzinfo=UTC)
UNTIL = START + timedelta(days=2)
SHAPE = generate.Shape(topics=8, partitions=3, snapshots=36, interval_s=3600)
CLUSTER = "prod"


def _spawn(argv: list[str], env: dict[str, str], log: Path, cwd: Path = BASE_DIR) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(
            argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as resp:
            return int(json.load(resp).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


def _tail(path: Path) -> str:
    return f"\n--- {path.name}\n{path.read_text(errors='replace')[-4000:]}" if path.exists() else ""


def _spark_env(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    if not env.get("JAVA_HOME") and (java := shutil.which("java")):
        env["JAVA_HOME"] = str(Path(java).resolve().parent.parent)
    env.update(SPARK_LOG_DIR=str(tmp / "spark-logs"), SPARK_WORKER_DIR=str(tmp / "spark-work"))
    return env


@pytest.fixture
def standalone(tmp_path):
    """A Spark standalone master and one worker (2 cores, 1 GB) on loopback; yields the master URL."""
    assert SPARK_CLASS.exists(), f"PySpark ships no launcher at {SPARK_CLASS}"
    assert shutil.which("java") or os.environ.get("JAVA_HOME"), "Spark needs Java (17 is what CI installs)"
    port, ui, worker_ui = free_port(), free_port(), free_port()
    env, logs = _spark_env(tmp_path), tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    url = f"spark://127.0.0.1:{port}"
    master_cls, worker_cls = "org.apache.spark.deploy.master.Master", "org.apache.spark.deploy.worker.Worker"
    procs = []
    try:
        master = [str(SPARK_CLASS), master_cls, "--host", "127.0.0.1", "--port", str(port)]
        procs.append(_spawn([*master, "--webui-port", str(ui)], env, logs / "master.log"))
        worker = [str(SPARK_CLASS), worker_cls, url, "--host", "127.0.0.1", "--webui-port", str(worker_ui)]
        worker += ["--cores", "2", "--memory", "1g", "--work-dir", str(tmp_path / "spark-work")]
        procs.append(_spawn(worker, env, logs / "worker.log"))
        yield url, ui, logs
    finally:
        stop_groups(procs)


def _run_pipeline(tmp: Path, lake_dir: Path, master: str, name: str) -> subprocess.Popen:
    """``manage.py run_pipeline`` in its own process (its own Spark driver), on the test database."""
    env = _spark_env(tmp)
    env.update(
        DJANGO_SETTINGS_MODULE="console.settings",
        DATABASE_URL=f"sqlite:///{settings.DATABASES['default']['NAME']}",
        TELEMETRY_LAKE_DIR=str(lake_dir),
        SPARK_MASTER=master,
        SPARK_SHUFFLE_PARTITIONS="2",
        PIPELINE_IDLE_DAYS="1",
    )
    argv = [sys.executable, str(BASE_DIR / "manage.py"), "run_pipeline", "--cluster", CLUSTER]
    argv += ["--since", START.isoformat(), "--until", UNTIL.isoformat()]
    return _spawn(argv, env, tmp / "logs" / f"{name}.log")


def _finish(proc: subprocess.Popen, log: Path, timeout_s: float) -> None:
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop_groups([proc])
        raise AssertionError(f"run_pipeline did not finish in {timeout_s:.0f}s{_tail(log)}") from None
    assert code == 0, f"run_pipeline exited {code}{_tail(log)}"


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def test_the_pipeline_on_a_standalone_cluster_equals_local(standalone, tmp_path):
    url, ui, logs = standalone
    local_lake, cluster_lake = tmp_path / "lake-local", tmp_path / "lake-standalone"
    generate.write_lake(local_lake, CLUSTER, SHAPE, START, per_file=12)
    shutil.copytree(local_lake, cluster_lake)
    Cluster.objects.create(name=CLUSTER, bootstrap_servers="127.0.0.1:1")

    local = _run_pipeline(tmp_path, local_lake, "local[*]", "local")
    try:
        deadline = time.monotonic() + 90
        while _alive_workers(ui) < 1:
            assert time.monotonic() < deadline, f"no Spark worker registered{_tail(logs / 'master.log')}"
            time.sleep(0.5)
        on_cluster = _run_pipeline(tmp_path, cluster_lake, url, "standalone")
        try:
            _finish(on_cluster, logs / "standalone.log", 240)
        finally:
            stop_groups([on_cluster])
        _finish(local, logs / "local.log", 240)
    finally:
        stop_groups([local])

    # the standalone run really used the cluster: the master lists it as a completed application
    with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as resp:
        apps = json.load(resp)
    assert [a["name"] for a in apps["completedapps"] + apps["activeapps"]] == ["kafka-console-pipeline"]
    runs = Operation.objects.filter(kind="pipeline.run").values_list("state", flat=True)
    assert list(runs) == [OperationState.SUCCEEDED] * 2

    compared = 0
    for name in reports.SCHEMAS:
        want = reports.sort_rows(name, reports.read_report(local_lake, CLUSTER, name))
        got = reports.sort_rows(name, reports.read_report(cluster_lake, CLUSTER, name))
        assert len(got) == len(want), name
        for g, w in zip(got, want, strict=True):
            assert set(g) == set(w), name
            diffs = {k: (g[k], w[k]) for k in w if not _same(g[k], w[k])}
            assert not diffs, f"{name} {w}: {diffs}"
        compared += len(want)
    assert compared > 100  # every report has rows on this lake
