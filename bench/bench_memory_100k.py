"""Memory of the web server and the Celery workers with a 100,000-partition cluster.

Estate: the sandbox in a process of its own (``harness.RemoteSandbox``): 30 brokers on 3 racks,
9,000 topics x 5 partitions + 55 topics x 1,000 partitions (100,000 partitions, RF 3, sized
logs), the clock stopped (the bench moves it).

The console as ``make run`` starts it, on a throwaway database (``harness.setup_console``) and an
embedded Redis: the web server (``console.runner.web_command``: gunicorn with
``console/gunicorn_conf.py``), one Celery worker per queue (``console.runner.worker_commands``:
poll, admin, batch) and beat.

The heavy paths, each sent WEB_PARALLEL at a time (so every gunicorn worker takes some) and
repeated 2 x WEB_PARALLEL times: the topic list cold (``?refresh=1``: the whole cluster's metadata
from Kafka), warm (page 1 and page 3), a substring and a regex search, the cluster overview, the
brokers page, the detail page of a 1,000-partition topic; a telemetry snapshot (the batch
worker's ``collect_snapshots``: every partition's offsets, log dirs, configs into Parquet); a
reassignment of 10,000 partitions started with the form (``POST .../reassignments/new/``, plan
JSON, 10 MB/s throttle: the web process reads the plan's partitions, the admin worker runs the
throttle and submit steps) and then polled for PROGRESS_S seconds by beat's 1 s tick on the poll
worker while two tabs poll its progress fragment every second and the bench moves the sandbox's
clock 1 s a second, so every poll has new figures; then the reassignment page once more.

Memory, read at the end from ``/proc/<pid>``: every process of the web server (gunicorn's master
and each worker) and of each Celery worker (its main process and its pool's children) and beat:
peak resident set (``VmHWM``), current (``VmRSS``) and proportional set size (``Pss``, which
counts pages a prefork child shares with its parent once). Per service the total is printed twice:
the sum of ``Pss`` (honest: shared pages once) and the sum of ``VmHWM`` (an upper bound).

Ratio = the largest peak RSS of any one console process / 400 MB (goal <= 1; absolute MB printed).
Prints ``RESULT memory_100k ratio=<max peak MB / 400> goal<=1`` last; exit 1 above.
Small runs while developing: ``BENCH_SCALE=0.1`` (10,000 partitions, a 1,000-partition move).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from django.conf import settings  # noqa: E402 - lazy: read once setup_console has configured Django

from bench.bench_web_concurrency import Children, child_env, start_redis, start_web, start_workers, wait_for  # noqa: E402
from bench.harness import RemoteSandbox, fill_log_sizes, gate, setup_console, teardown  # noqa: E402

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
# BENCH_MEMORY_ESTATE=1m (set by bench_memory_1m.py, read here so the spawned sandbox builds the same):
# 1,000,000 partitions on 200 brokers (19,800 topics x 50 + 10 x 1,000), the same 10,000-partition move
ESTATE_1M = os.environ.get("BENCH_MEMORY_ESTATE") == "1m"
BROKERS = 200 if ESTATE_1M else 30
SMALL_TOPICS, SMALL_PARTITIONS = (19_800, 50) if ESTATE_1M else (int(9000 * SCALE), 5)
BIG_TOPICS, BIG_PARTITIONS = (10, 1000) if ESTATE_1M else (max(1, int(55 * SCALE)), 1000)
MOVE = 10_000 if ESTATE_1M else int(10_000 * SCALE)
RF = 3
PROGRESS_S = 30
LIMIT_MB = 400
GOAL = 1.0
CLUSTER = "bench"


def rack_of(b: int) -> int:
    return (b - 1) % 3


def replicas(t: int, p: int) -> list[int]:
    first = (t * 7 + p) % BROKERS
    return [first + 1, (first + 10) % BROKERS + 1, (first + 20) % BROKERS + 1]


def build_sandbox(scale: float = SCALE):
    from sandbox.cluster import SandboxCluster

    racks = [f"rack-{i % 3}" for i in range(BROKERS)]
    cluster = SandboxCluster(
        brokers=BROKERS, controllers=1, port=0, speed=0, seed="bench-memory", racks=racks
    )
    cluster.start()
    for t in range(SMALL_TOPICS):
        cluster.create_topic(f"app.events-{t:05d}", SMALL_PARTITIONS, RF)
    for t in range(BIG_TOPICS):
        assignment = [replicas(t, p) for p in range(BIG_PARTITIONS)]
        cluster.create_topic(f"big-{t:03d}", BIG_PARTITIONS, RF, assignment=assignment)
    fill_log_sizes(cluster, seed=11)
    return cluster


def plan() -> dict[tuple[str, int], list[int]]:
    """MOVE partitions of the big topics, each moving its last replica to the next broker after it
    on a rack the two kept replicas do not use (at 30 brokers the third broker on from it, its own
    rack; at 200, which 3 does not divide, a fixed step wrapped into a kept replica's rack for 1,150
    of the 10,000 partitions and the console refused the plan for its broken rack constraint)."""
    per_topic = MOVE // BIG_TOPICS
    out = {}
    for t in range(BIG_TOPICS):
        for p in range(per_topic):
            *keep, last = replicas(t, p)
            used = {rack_of(b) for b in keep}
            to = last
            while True:
                to = to % BROKERS + 1
                if to not in keep and to != last and rack_of(to) not in used:
                    break
            out[(f"big-{t:03d}", p)] = [*keep, to]
    return out


# -- memory ---------------------------------------------------------------------------------------


def status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def process_tree(pid: int) -> list[int]:
    import psutil

    root = psutil.Process(pid)
    return [root.pid] + [c.pid for c in root.children(recursive=True)]


def pss_by_pid(children: Children) -> dict[int, float]:
    """Every console process's PSS in MB now (redis left out)."""
    return {
        pid: pss_kb(pid) / 1024
        for name, proc in children.procs.items()
        if name != "redis"
        for pid in process_tree(proc.pid)
    }


def measure(children: Children) -> tuple[float, list[str]]:
    """(largest peak RSS in MB of any console process, printed lines)."""
    peak, _total, lines = measure_all(children)
    return peak, lines


def measure_all(children: Children) -> tuple[float, float, list[str]]:
    """(largest peak RSS in MB of any console process, PSS in MB summed over every console
    process, printed lines)."""
    lines, peak, total = [], 0.0, 0.0
    for name, proc in children.procs.items():
        if name == "redis":
            continue
        pids = process_tree(proc.pid)
        hwm = pss = 0
        for i, pid in enumerate(pids):
            h, rss, p = status_kb(pid, "VmHWM"), status_kb(pid, "VmRSS"), pss_kb(pid)
            role = "main" if i == 0 else "child"
            lines.append(
                f"  {name:<14} pid {pid:<7} {role:<5} peak RSS {h / 1024:7.1f} MB  RSS {rss / 1024:7.1f} MB  "
                f"PSS {p / 1024:7.1f} MB"
            )
            hwm += h
            pss += p
            peak = max(peak, h / 1024)
        lines.append(
            f"  {name:<14} total of {len(pids)} processes: PSS {pss / 1024:.1f} MB (shared pages once), "
            f"peak RSS summed {hwm / 1024:.1f} MB (upper bound)"
        )
        total += pss / 1024
    return peak, total, lines


# -- the heavy paths --------------------------------------------------------------------------------


def drive_pages(base: str, cookie: str, parallel: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    c = f"/c/{CLUSTER}"
    paths = [
        ("topic list cold", f"{c}/topics/?refresh=1"),
        ("topic list", f"{c}/topics/"),
        ("topic list page 3", f"{c}/topics/?page=3"),
        ("topic search", f"{c}/topics/?q=events-00"),
        ("topic regex search", f"{c}/topics/?q=%5Eapp%5C.events-0%5B0-4%5D&regex=1"),
        ("overview", f"{c}/"),
        ("brokers", f"{c}/brokers/"),
        ("topic detail (1,000 partitions)", f"{c}/topics/big-000/"),
    ]
    clients = [
        httpx.Client(base_url=base, cookies={settings.SESSION_COOKIE_NAME: cookie}, timeout=600)
        for _ in range(parallel)
    ]

    def get(job: tuple[int, str]) -> int:
        return clients[job[0]].get(job[1]).status_code

    try:
        with ThreadPoolExecutor(parallel) as pool:
            for label, url in paths:
                start = time.perf_counter()
                codes = list(pool.map(get, [(i % parallel, url) for i in range(2 * parallel)]))
                bad = [x for x in codes if x != 200]
                if bad:
                    raise SystemExit(f"{label}: {url} answered {bad}")
                print(f"  {label:<32} x{len(codes)} in {time.perf_counter() - start:.1f}s", flush=True)
    finally:
        for cl in clients:
            cl.close()


def telemetry_snapshot() -> None:
    """The cluster's snapshot task on the batch worker, as beat's ``collect_snapshots`` sends it (one
    ``collect_cluster_snapshot`` per cluster). A first run that fails is reported and sent once more
    (beat sends it again next interval); a second failure ends the bench."""
    from console.models import Cluster
    from tasks.celery import app

    cluster_id = Cluster.objects.get(name=CLUSTER).pk
    for attempt in (1, 2):
        start = time.perf_counter()
        result = app.send_task("tasks.telemetry.collect_cluster_snapshot", (cluster_id,), queue="batch")
        got = result.get(timeout=600, propagate=False)
        if result.state == "SUCCESS" and got in ("ok", "skipped"):
            print(
                f"  telemetry snapshot (batch worker): {got} in {time.perf_counter() - start:.1f}s",
                flush=True,
            )
            return
        last = (result.traceback or "").strip().splitlines()[-1:] or [repr(got)]
        print(
            f"  FINDING: telemetry snapshot attempt {attempt} failed on the batch worker: {last[0]}",
            flush=True,
        )
    raise SystemExit("the telemetry snapshot failed twice")


def reassign(base: str, cookie: str, sandbox) -> int:
    """Start the reassignment with the form, wait for it to move, poll it PROGRESS_S seconds."""
    import httpx

    from console.models.reassignment import Reassignment
    from console.reassignment import planner

    with httpx.Client(base_url=base, cookies={settings.SESSION_COOKIE_NAME: cookie}, timeout=600) as client:
        url = f"/c/{CLUSTER}/reassignments/new/"
        assert client.get(url).status_code == 200
        token = client.cookies[settings.CSRF_COOKIE_NAME]
        form = {
            "intent": "json",
            "plan_json": planner.export_plan({k: tuple(v) for k, v in plan().items()}),
            "throttle_mb": "10",
            "action": "start",
            "csrfmiddlewaretoken": token,
        }
        start = time.perf_counter()
        response = client.post(url, data=form)
        if response.status_code != 302:
            raise SystemExit(f"start answered {response.status_code}: {response.text[:800]!r}")
        rid = int(response.headers["location"].rstrip("/").rsplit("/", 1)[1])
        print(
            f"  reassignment {rid} of {MOVE} partitions started (form) in {time.perf_counter() - start:.1f}s"
        )

        def moving() -> bool:
            r = Reassignment.objects.get(pk=rid)
            if r.operation.finished:
                raise SystemExit(
                    f"the reassignment ended early: {r.operation.state} {r.operation.last_error}"
                )
            return r.stage == "moving" and r.last_poll_at is not None

        wait_for("the admin worker to submit it and the poller to poll it", moving, 600)
        print(f"  moving and polled {time.perf_counter() - start:.1f}s after the POST", flush=True)
        stop = threading.Event()
        errors: list[str] = []

        def tab() -> None:
            with httpx.Client(
                base_url=base, cookies={settings.SESSION_COOKIE_NAME: cookie}, timeout=600
            ) as tab_client:
                while not stop.is_set():
                    got = tab_client.get(
                        f"/c/{CLUSTER}/reassignments/{rid}/progress/", headers={"HX-Request": "true"}
                    )
                    if got.status_code not in (200, 286):  # 286: finished, polling stops
                        errors.append(f"progress answered {got.status_code}")
                    stop.wait(1.0)

        tabs = [threading.Thread(target=tab, daemon=True) for _ in range(2)]
        for t in tabs:
            t.start()
        first = Reassignment.objects.get(pk=rid).bytes_done
        for _ in range(PROGRESS_S):
            sandbox.advance(1)
            time.sleep(1)
        stop.set()
        for t in tabs:
            t.join(600)
        r = Reassignment.objects.get(pk=rid)
        if errors:
            raise SystemExit("; ".join(errors[:5]))
        if r.bytes_done <= first:
            raise SystemExit("the poll worker did not record any progress")
        print(f"  polled {PROGRESS_S}s with two tabs open: {r.percent}% moved", flush=True)
        assert client.get(f"/c/{CLUSTER}/reassignments/{rid}/").status_code == 200
    return rid


def main(name: str = "memory_100k") -> None:
    started = time.perf_counter()
    sandbox = RemoteSandbox(build_sandbox)
    logs = Path(tempfile.mkdtemp(prefix="bench-memory-logs-"))
    children = Children(logs, {})
    peak = 0.0
    try:
        redis_url = start_redis(children)
        os.environ["REDIS_URL"] = redis_url
        os.environ["CELERY_RESULT_BACKEND"] = redis_url[: -len("/0")] + "/1"
        _client, cluster_row = setup_console(sandbox.bootstrap_servers, timeout_s=120)
        children.env = child_env(redis_url)
        from django.contrib.auth import get_user_model
        from django.db import connection
        from django.test import Client

        client = Client()
        client.force_login(get_user_model().objects.get(username="bench"))
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        connection.close()
        start_workers(children, ("poll", "admin", "batch"), beat=True)
        base = start_web(children)
        from tasks.celery import app

        wait_for("every worker to answer a ping", lambda: len(app.control.ping(timeout=1)) == 3, 120, logs)
        print(
            f"sandbox ({SMALL_TOPICS * SMALL_PARTITIONS + BIG_TOPICS * BIG_PARTITIONS} partitions) and console up "
            f"in {time.perf_counter() - started:.0f}s; web: {' '.join(children.procs['web'].args[1:])}",
            flush=True,
        )
        web_workers = len(process_tree(children.procs["web"].pid)) - 1  # gunicorn's master + its workers
        idle = pss_by_pid(children)  # each process's own code and Django before any cluster data
        drive_pages(base, cookie, web_workers)
        telemetry_snapshot()
        reassign(base, cookie, sandbox)
        children.check_alive()
        peak, total, lines = measure_all(children)
        grown = {pid: mb - idle.get(pid, 0.0) for pid, mb in pss_by_pid(children).items()}
        print(f"memory at the end ({PROGRESS_S}s of progress polling included):")
        print("\n".join(lines))
    finally:
        children.stop()
        teardown(sandbox)
    print(f"largest peak RSS of one console process: {peak:.1f} MB (limit {LIMIT_MB} MB)")
    if ESTATE_1M:  # issue 35: and every console process together <= 2x one process
        print(
            f"PSS of every console process together: {total:.1f} MB = {total / peak:.2f}x the largest peak (goal <= 2)"
        )
        # Not gated, printed beside it: what the heavy paths added to each process (PSS at the end minus
        # PSS once started, before any page), summed, against the largest such growth. The sum
        # also counts every process's own code and Django, ~80-130 MB PSS each for 12 processes, which
        # no sharing of cluster data can remove: it is ~2x the largest peak before a page is shown.
        top = max(grown.values(), default=0.0)
        print(
            f"PSS the heavy paths added, all processes: {sum(grown.values()):.1f} MB = "
            f"{sum(grown.values()) / max(top, 1e-9):.2f}x the largest process's ({top:.1f} MB); "
            f"PSS of the processes once started: {sum(idle.values()):.1f} MB"
        )
    gate(name, max(peak / LIMIT_MB, total / peak / 2) if ESTATE_1M else peak / LIMIT_MB, GOAL)


if __name__ == "__main__":
    main()
