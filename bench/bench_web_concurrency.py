"""Pages under 50 concurrent users on gunicorn, with 20 progress tabs polling every second.

Estate: the sandbox in a process of its own (``harness.RemoteSandbox``), 6 brokers, 3,000 topics x
4 partitions x RF 3 plus one 300-partition topic with 2 GB per replica, the clock running in real
time (``speed=1``). A throttled reassignment of that topic (every partition's last replica to
another broker, 10 MB/s) is started through the service path and driven to ``moving`` by the
operation runner; from then on it moves for hours, and a real Celery poll worker and beat (started
as ``make run`` starts them: ``console.runner.worker_commands``, an embedded Redis) poll its progress
every second, so the fragment changes under the tabs.

The console: a throwaway database (``harness.setup_console``, SQLite in a temp dir, as ``make run``
on one machine), 70 users (operator + auditor on the cluster), each with its own session cookie
(made with Django's ``login`` in this process, so no password hashing in the measured window),
and the web server started exactly as ``make run`` starts it (``console.runner.web_command``:
gunicorn and its config file ``console/gunicorn_conf.py``) on a free port.

Load generator (the same 2 cores, kept cheap): one thread per session, each with its own
keep-alive ``httpx.Client`` (HTTP/1.1, no redirects followed); page threads sleep between pages
(think time uniform in THINK_S = 2-8 s, mean 5 s: about 10 page views a second from 50 users);
each progress tab thread GETs ``/c/<c>/reassignments/<id>/progress/`` with ``HX-Request: true``
(what the page's htmx ``hx-trigger="every 1s"`` sends) every second, measured from the start of
one request to the start of the next, as htmx's timer does. Every response must be 200.

Pages (a user cycles through them, starting at a random one): cluster overview, topic list (first
page), topic search (``?q=``), a topic's detail page (a random topic), brokers, the reassignment's
page, the audit page.

Measured (client side, per request, wall time from send to the last body byte): the single-user
phase has one user and no tabs; the user pauses 0.5 s between pages (same pages, same order) to
collect enough samples in a short phase. The load phase has the 50 users and the 20 tabs. Both
phases run ROUNDS (>= 5) times, which goes first alternating between rounds; each phase lasts
PHASE_S seconds after a warm-up of the load (the first WARMUP_S of a load phase are not counted,
as the 50 users start together).

Ratio per round = p95 of every page time under load / p95 of every page time of the single user:
p95 against p95 of the same page mix, because the mix spans pages whose single-user times differ by
an order of magnitude (a median denominator would make the ratio > 1 with no contention at all,
from the mix alone). The median of the per-round ratios is gated (goal <= 2). Also printed: p50 /
p95 / max per page, the tabs' fragment times and how many polls were late (the 1 s cadence kept).

Prints ``RESULT web_concurrency ratio=<p95 load / p95 single> goal<=2`` last; exit 1 above it.
Small runs while developing: ``BENCH_SCALE=0.1`` (300 topics) and ``BENCH_ROUNDS=5 BENCH_PHASE_S=10``.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from django.conf import settings  # noqa: E402 - lazy: read once setup_console has configured Django

from bench.harness import RemoteSandbox, gate, setup_console, teardown  # noqa: E402

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
BROKERS = 6
TOPICS = max(10, int(3000 * SCALE))
PARTITIONS = 4
RF = 3
MOVING_TOPIC = "bench.moving"
MOVING_PARTITIONS = 300
GB = 1024**3
MB = 1024**2
THROTTLE = 10 * MB
USERS = 50
TABS = int(os.environ.get("BENCH_TABS", "20"))  # other values: diagnosis only
THINK_S = (2.0, 8.0)
SINGLE_THINK_S = 0.5
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
PHASE_S = float(os.environ.get("BENCH_PHASE_S", "30"))
WARMUP_S = 8.0
GOAL = 2.0
# A browser drops an idle connection before the server does (gunicorn keepalive = 5 s), rather than
# sending on one the server is closing (connection reset).
KEEPALIVE_S = 4.0
CLUSTER = "bench"


# -- processes ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout_s: float, logs: Path | None = None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    tails = ""
    if logs is not None:
        tails = "".join(f"\n--- {f.name}\n{f.read_text()[-3000:]}" for f in sorted(logs.glob("*.log")))
    raise SystemExit(f"timed out waiting for {what}{tails}")


class Children:
    """Processes this bench starts, each in its own process group; ``stop`` ends every group."""

    def __init__(self, logs: Path, env: dict[str, str]) -> None:
        self.logs = logs
        self.env = env
        self.procs: dict[str, subprocess.Popen] = {}

    def spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        from console.runner import BASE_DIR

        with open(self.logs / f"{name}.log", "w") as out:
            proc = subprocess.Popen(
                argv, env=self.env, cwd=BASE_DIR, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.procs[name] = proc
        return proc

    def check_alive(self) -> None:
        dead = {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}
        if dead:
            tails = "".join(f"\n--- {n}\n{(self.logs / f'{n}.log').read_text()[-3000:]}" for n in dead)
            raise SystemExit(f"a child died: {dead}{tails}")

    def stop(self, grace_s: float = 15) -> None:
        """TERM every group, the last started first (Redis last: the workers ack on their way out),
        KILL what is left after ``grace_s``; the logs go unless BENCH_KEEP_LOGS is set."""
        for p in reversed(self.procs.values()):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + grace_s
        for p in self.procs.values():
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=10)
        if not os.environ.get("BENCH_KEEP_LOGS"):
            shutil.rmtree(self.logs, ignore_errors=True)


def child_env(redis_url: str) -> dict[str, str]:
    """What every console process reads: this bench's database and keys (CONSOLE_VAR_DIR), its Redis."""
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "REDIS_URL": redis_url,
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "LOG_LEVEL": "WARNING",
    }


def start_redis(children: Children) -> str:
    port = free_port()
    # console.runner imports console.settings_celery, which reads these once: a bench that configures
    # Django after this (bench_memory_100k) must find them set, else Celery looks for Redis on 6390
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
    os.environ["CELERY_RESULT_BACKEND"] = f"redis://127.0.0.1:{port}/1"
    from console.runner import redis_executable, redis_ping

    redis_dir = children.logs / "redis"
    redis_dir.mkdir()
    argv = [redis_executable(), "--bind", "127.0.0.1", "--port", str(port), "--dir", str(redis_dir)]
    children.spawn("redis", [*argv, "--save", "", "--appendonly", "no"])
    wait_for("Redis", lambda: redis_ping(port), 20)
    return f"redis://127.0.0.1:{port}/0"


def start_workers(children: Children, queues: tuple[str, ...], beat: bool) -> None:
    """The Celery workers of ``make run`` for ``queues`` (same argv), and beat when asked."""
    from console.runner import beat_command, worker_commands

    celery = [sys.executable, "-m", "celery", "-A", "tasks"]
    for name, argv in worker_commands(celery):
        if argv[argv.index("-Q") + 1] in queues:
            children.spawn(name, argv)
    if beat:
        argv = beat_command(celery, children.logs / "celerybeat-schedule")
        argv[argv.index("-l") + 1] = "warning"
        children.spawn("beat", argv)


def start_web(children: Children) -> str:
    """gunicorn as ``make run`` starts it, on a free port; returns its base URL once it answers."""
    from console.runner import http_ok, web_command

    port = free_port()
    children.spawn("web", web_command(sys.executable, "127.0.0.1", port))
    url = f"http://127.0.0.1:{port}"
    wait_for("the web server", lambda: http_ok(url + "/login/"), 90, children.logs)
    return url


# -- the estate -------------------------------------------------------------------------------------


def original(p: int) -> list[int]:
    return [p % BROKERS + 1, (p + 1) % BROKERS + 1, (p + 2) % BROKERS + 1]


def moved(p: int) -> list[int]:
    return [p % BROKERS + 1, (p + 1) % BROKERS + 1, (p + 3) % BROKERS + 1]


def build_sandbox(topics: int = TOPICS):
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=BROKERS, controllers=1, port=0, speed=1, seed="bench-web")
    cluster.start()
    for i in range(topics):
        cluster.create_topic(f"bench.topic-{i:05d}", PARTITIONS, RF)
    cluster.create_topic(
        MOVING_TOPIC, MOVING_PARTITIONS, RF, assignment=[original(p) for p in range(MOVING_PARTITIONS)]
    )
    with cluster.state.lock:
        for part in cluster.state.topics[MOVING_TOPIC].partitions:
            part.sizes = dict.fromkeys(part.replicas, float(2 * GB))
            part.end_offset = 2 * GB // 1024
    return cluster


def no_queue(op_id: int, countdown: float | None = None) -> str:
    """The bench process's dispatcher: it runs the reassignment's first steps itself (below)."""
    return "bench"


def start_moving_reassignment(cluster_row, actor):
    """A throttled reassignment of MOVING_TOPIC, driven to ``moving``; returns the Reassignment."""
    from django.conf import settings

    from console import operations
    from console.models.reassignment import Reassignment
    from console.reassignment import actions as reassignment

    saved = settings.OPERATION_DISPATCHER
    settings.OPERATION_DISPATCHER = "bench.bench_web_concurrency.no_queue"
    try:
        plan = {(MOVING_TOPIC, p): tuple(moved(p)) for p in range(MOVING_PARTITIONS)}
        op = reassignment.start_reassignment(
            actor=actor, cluster=cluster_row, proposed=plan, throttle=THROTTLE
        )
        operations.run(op.pk, worker="bench")  # throttle, submit, first poll: then the poll worker's
    finally:
        settings.OPERATION_DISPATCHER = saved
    r = Reassignment.objects.get(operation=op)
    assert r.stage == "moving", r.stage
    return r


def make_sessions(cluster_row, n: int) -> list[str]:
    """``n`` users (operator + auditor on the cluster), one logged-in session cookie each."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from console.models import RoleBinding

    cookies = []
    User = get_user_model()
    for i in range(n):
        user = User.objects.create_user(f"user{i:03d}", password=None)
        RoleBinding.objects.create(cluster=cluster_row, user=user, role="operator")
        RoleBinding.objects.create(cluster=cluster_row, user=user, role="auditor")
        client = Client()
        client.force_login(user)
        cookies.append(client.cookies[settings.SESSION_COOKIE_NAME].value)
    return cookies


# -- the load -------------------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pages: list[tuple[str, float]] = []
        self.polls: list[float] = []
        self.late = 0
        self.errors: list[str] = []
        self.counting = False

    def page(self, name: str, seconds: float) -> None:
        if self.counting:
            with self.lock:
                self.pages.append((name, seconds))

    def poll(self, seconds: float, late: bool) -> None:
        if self.counting:
            with self.lock:
                self.polls.append(seconds)
                self.late += late


def fetch(client, url: str, rec: Recorder, headers=None) -> float:
    start = time.perf_counter()
    response = client.get(url, headers=headers)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        rec.errors.append(f"{url}: {response.status_code} {response.text[:200]!r}")
    return elapsed


def page_urls(rid: int, topics: int) -> list[tuple[str, object]]:
    c = f"/c/{CLUSTER}"
    return [
        ("overview", lambda: f"{c}/"),
        ("topic list", lambda: f"{c}/topics/"),
        ("topic search", lambda: f"{c}/topics/?q=topic-0{random.randrange(10)}"),
        ("topic detail", lambda: f"{c}/topics/bench.topic-{random.randrange(topics):05d}/"),
        ("brokers", lambda: f"{c}/brokers/"),
        ("reassignment", lambda: f"{c}/reassignments/{rid}/"),
        ("audit", lambda: "/audit/"),
    ]


LIMITS = None  # set in main (httpx imported lazily)


def user_loop(base: str, cookie: str, pages, think, stop: threading.Event, rec: Recorder) -> None:
    import httpx

    with httpx.Client(
        base_url=base, cookies={settings.SESSION_COOKIE_NAME: cookie}, timeout=120, limits=LIMITS
    ) as client:
        i = random.randrange(len(pages))
        while not stop.is_set():
            name, url = pages[i % len(pages)]
            try:
                rec.page(name, fetch(client, url(), rec))
            except Exception as exc:  # noqa: BLE001 - reported
                rec.errors.append(f"{name}: {type(exc).__name__}: {exc}")
            i += 1
            stop.wait(think())


def tab_loop(base: str, cookie: str, url: str, stop: threading.Event, rec: Recorder) -> None:
    import httpx

    headers = {"HX-Request": "true", "HX-Target": "reassign-progress"}
    with httpx.Client(
        base_url=base, cookies={settings.SESSION_COOKIE_NAME: cookie}, timeout=120, limits=LIMITS
    ) as client:
        stop.wait(random.random())  # tabs opened at different moments
        next_at = time.monotonic()
        while not stop.is_set():
            try:
                took = fetch(client, url, rec, headers)
                rec.poll(took, took > 1.0)
            except Exception as exc:  # noqa: BLE001 - reported
                rec.errors.append(f"poll: {type(exc).__name__}: {exc}")
            next_at = max(next_at + 1.0, time.monotonic())
            stop.wait(next_at - time.monotonic())


def phase(base: str, cookies: list[str], rid: int, users: int, tabs: int) -> Recorder:
    rec = Recorder()
    stop = threading.Event()
    pages = page_urls(rid, TOPICS)
    if users == 1:
        think = lambda: SINGLE_THINK_S  # noqa: E731
    else:
        think = lambda: random.uniform(*THINK_S)  # noqa: E731
    threads = [
        threading.Thread(target=user_loop, args=(base, cookies[i], pages, think, stop, rec), daemon=True)
        for i in range(users)
    ]
    progress = f"/c/{CLUSTER}/reassignments/{rid}/progress/"
    threads += [
        threading.Thread(target=tab_loop, args=(base, cookies[USERS + i], progress, stop, rec), daemon=True)
        for i in range(tabs)
    ]
    for t in threads:
        t.start()
    if users > 1:
        time.sleep(WARMUP_S)
    rec.counting = True
    time.sleep(PHASE_S)
    rec.counting = False
    stop.set()
    for t in threads:
        t.join(130)
    if rec.errors:
        raise SystemExit(f"{len(rec.errors)} failed requests, e.g.:\n  " + "\n  ".join(rec.errors[:5]))
    return rec


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[-1] if len(xs) > 1 else xs[0]


def describe(label: str, rec: Recorder) -> None:
    by_page: dict[str, list[float]] = {}
    for name, t in rec.pages:
        by_page.setdefault(name, []).append(t)
    times = [t for _, t in rec.pages]
    print(
        f"  {label}: {len(times)} pages, p50 {statistics.median(times) * 1000:.0f} ms, "
        f"p95 {p95(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
    )
    for name, ts in sorted(by_page.items()):
        print(
            f"    {name:<14} n={len(ts):<4} p50 {statistics.median(ts) * 1000:6.0f} ms  "
            f"p95 {p95(ts) * 1000:6.0f} ms  max {max(ts) * 1000:6.0f} ms"
        )
    if rec.polls:
        print(
            f"    progress tab   n={len(rec.polls):<4} p50 {statistics.median(rec.polls) * 1000:6.0f} ms  "
            f"p95 {p95(rec.polls) * 1000:6.0f} ms  max {max(rec.polls) * 1000:6.0f} ms  "
            f"({rec.late} answered after 1 s)"
        )


def main() -> None:
    global LIMITS
    import httpx

    LIMITS = httpx.Limits(keepalive_expiry=KEEPALIVE_S)
    sandbox = RemoteSandbox(build_sandbox)
    logs = Path(tempfile.mkdtemp(prefix="bench-web-logs-"))
    children = None
    try:
        _client, cluster_row = setup_console(sandbox.bootstrap_servers)
        assert cluster_row.name == CLUSTER
        from django.contrib.auth import get_user_model

        actor = get_user_model().objects.get(username="bench")
        children = Children(logs, {})
        redis_url = start_redis(children)
        children.env = child_env(redis_url)
        cookies = make_sessions(cluster_row, USERS + TABS)
        r = start_moving_reassignment(cluster_row, actor)
        from django.db import connection

        connection.close()  # the bench's own connection off the database the children share
        start_workers(children, ("poll",), beat=True)
        base = start_web(children)
        print(
            f"{TOPICS} topics x {PARTITIONS} + {MOVING_PARTITIONS} moving partitions on {BROKERS} brokers; "
            f"reassignment {r.pk}; {USERS} users (think {THINK_S[0]:g}-{THINK_S[1]:g} s) + {TABS} tabs; "
            f"web: {' '.join(children.procs['web'].args[1:])}",
            flush=True,
        )
        phase(base, cookies, r.pk, 1, 0)  # warm-up: every process's caches and connections
        ratios = []
        for rnd in range(ROUNDS):
            order = ["single", "load"] if rnd % 2 == 0 else ["load", "single"]
            got = {}
            for which in order:
                children.check_alive()
                got[which] = phase(base, cookies, r.pk, *((1, 0) if which == "single" else (USERS, TABS)))
            single = p95([t for _, t in got["single"].pages])
            load = p95([t for _, t in got["load"].pages])
            ratios.append(load / single)
            print(
                f"round {rnd + 1}: p95 under load {load * 1000:.0f} ms / single user {single * 1000:.0f} ms = {ratios[-1]:.2f}"
            )
            describe("single user", got["single"])
            describe(f"{USERS} users + {TABS} tabs", got["load"])
            sys.stdout.flush()
        r.refresh_from_db()
        print(f"reassignment progress at the end: {r.percent}% (polled by the Celery poll worker)")
        print(
            f"per-round ratio: min {min(ratios):.2f} median {statistics.median(ratios):.2f} max {max(ratios):.2f}"
        )
        ratio = statistics.median(ratios)
    finally:
        if children is not None:
            children.stop()
        teardown(sandbox)
    gate("web_concurrency", ratio, GOAL)


if __name__ == "__main__":
    main()
