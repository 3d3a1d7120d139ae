"""The pipeline on a real Spark standalone cluster of two workers gives the same reports as the
hourly path in pyarrow.

A master and two workers (one core each) are started on 127.0.0.1 from the installed PySpark's own
launcher (``pyspark/bin/spark-class ...deploy.master.Master`` / ``...deploy.worker.Worker``, Java
from PATH or JAVA_HOME), then ``manage.py run_pipeline`` runs twice over the same small lake (two
copies, read by path by the executors): once as the hourly run does, in pyarrow inside the
command's process (no JVM), once with ``--rebuild`` and ``SPARK_MASTER=spark://127.0.0.1:<port>``,
so the roll-up runs on executors the two workers launched. The driver waits for both executors
(``spark.scheduler.minRegisteredResourcesRatio=1``) and writes Spark's event log, from which the
test reads which executor ran each task and, from the executors' log addresses, on which worker.
Every process started here is stopped by the fixtures' finalizers (process group TERM, then KILL).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings

from console.models import Cluster, Operation, OperationState
from pipeline import generate, reports
from tests.pipeline.standalone import BASE_DIR, alive_workers, missing, running_standalone, spark_env, spawn
from tests.procs import stop_groups

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(400)]

START = datetime(2026, 4, 1, tzinfo=UTC)
UNTIL = START + timedelta(days=2)
SHAPE = generate.Shape(topics=8, partitions=3, snapshots=36, interval_s=3600)
CLUSTER = "prod"
WORKERS = 2


def _tail(path: Path) -> str:
    return f"\n--- {path.name}\n{path.read_text(errors='replace')[-4000:]}" if path.exists() else ""


@pytest.fixture
def standalone(tmp_path):
    """A Spark standalone master and two workers (1 core, 768 MB each) on loopback; yields the master
    URL, its UI port, the logs directory and each worker's UI port."""
    assert not (lack := missing()), lack
    with running_standalone(tmp_path, workers=WORKERS) as cluster:
        yield cluster.url, cluster.ui_port, cluster.logs, list(cluster.worker_ui_ports)


def _run_pipeline(tmp: Path, lake_dir: Path, name: str, master: str = "", events: Path | None = None):
    """``manage.py run_pipeline`` in its own process, on the test database: the hourly path (pyarrow)
    or, given a master, a rebuild in Spark on it (the driver in the command's process) writing its
    event log to ``events``."""
    env = spark_env(tmp)
    env.update(
        DJANGO_SETTINGS_MODULE="console.settings",
        DATABASE_URL=f"sqlite:///{settings.DATABASES['default']['NAME']}",
        TELEMETRY_LAKE_DIR=str(lake_dir),
        SPARK_SHUFFLE_PARTITIONS="2",
        PIPELINE_IDLE_DAYS="1",
    )
    argv = [sys.executable, str(BASE_DIR / "manage.py"), "run_pipeline", "--cluster", CLUSTER]
    argv += ["--since", START.isoformat(), "--until", UNTIL.isoformat()]
    if master:
        conf = {
            "spark.executor.memory": "512m",
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",  # both executors before the first job
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": f"file://{events}",
            "spark.eventLog.compress": "false",
        }
        env.update(SPARK_MASTER=master, SPARK_CONF=";".join(f"{k}={v}" for k, v in conf.items()))
        argv.append("--rebuild")
    return spawn(argv, env, tmp / "logs" / f"{name}.log")


def _tasks_per_worker(events: Path, worker_uis: list[int]) -> dict[int, int]:
    """Tasks that ended successfully per worker (by its UI port), from the application's event log:
    each executor's log address names the worker that launched it."""
    # one file, or (rolling event logs, Spark 4's default) a directory of events_<n>_<app> files
    files = [
        p for p in sorted(events.rglob("*")) if p.is_file() and not p.name.startswith((".", "appstatus"))
    ]
    lines = [line for p in files for line in p.read_text().splitlines() if line]
    worker_of, tasks = {}, dict.fromkeys(worker_uis, 0)
    for line in lines:
        event = json.loads(line)
        if event["Event"] == "SparkListenerExecutorAdded":
            stdout = event["Executor Info"]["Log Urls"]["stdout"]
            worker_of[event["Executor ID"]] = next(p for p in worker_uis if f"127.0.0.1:{p}/" in stdout)
        elif event["Event"] == "SparkListenerTaskEnd" and event["Task End Reason"]["Reason"] == "Success":
            tasks[worker_of[event["Task Info"]["Executor ID"]]] += 1
    return tasks


def _finish(proc: subprocess.Popen, log: Path, timeout_s: float) -> None:
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop_groups([proc])
        raise AssertionError(f"run_pipeline did not finish in {timeout_s:.0f}s{_tail(log)}") from None
    assert code == 0, f"run_pipeline exited {code}{_tail(log)}"


def test_the_pipeline_on_a_two_worker_standalone_cluster_equals_the_hourly_path(standalone, tmp_path):
    url, ui, logs, worker_uis = standalone
    hourly_lake, cluster_lake, events = (
        tmp_path / "lake-hourly",
        tmp_path / "lake-standalone",
        tmp_path / "events",
    )
    generate.write_lake(hourly_lake, CLUSTER, SHAPE, START, per_file=12)
    shutil.copytree(hourly_lake, cluster_lake)
    events.mkdir()
    Cluster.objects.create(name=CLUSTER, bootstrap_servers="127.0.0.1:1")

    hourly = _run_pipeline(tmp_path, hourly_lake, "hourly")  # runs while the cluster comes up
    try:
        deadline = time.monotonic() + 90
        while alive_workers(ui) < WORKERS:
            assert time.monotonic() < deadline, (
                f"{WORKERS} Spark workers did not register{_tail(logs / 'master.log')}"
            )
            time.sleep(0.5)
        on_cluster = _run_pipeline(tmp_path, cluster_lake, "standalone", url, events)
        try:
            _finish(on_cluster, logs / "standalone.log", 240)
        finally:
            stop_groups([on_cluster])
        _finish(hourly, logs / "hourly.log", 240)
    finally:
        stop_groups([hourly])

    # the rebuild really ran on the cluster, and on both workers
    with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as resp:
        apps = json.load(resp)
    assert [a["name"] for a in apps["completedapps"] + apps["activeapps"]] == ["kafka-console-pipeline"]
    per_worker = _tasks_per_worker(events, worker_uis)
    assert all(n > 0 for n in per_worker.values()), per_worker
    runs = Operation.objects.filter(kind="pipeline.run")
    assert sorted((r.state, r.result["engine"], r.result.get("spark_master")) for r in runs) == [
        (OperationState.SUCCEEDED, "pyarrow", None),
        (OperationState.SUCCEEDED, "spark", url),
    ]

    # the same published reports, exactly: the engines give the same integer rollups to the same
    # driver code, so the floats are the same too
    compared = 0
    for name in reports.SCHEMAS:
        want = reports.sort_rows(name, reports.read_report(hourly_lake, CLUSTER, name))
        got = reports.sort_rows(name, reports.read_report(cluster_lake, CLUSTER, name))
        assert got == want, name
        compared += len(want)
    assert compared > 100  # every report has rows on this lake
