"""Child processes in their own process groups: start, prefix output, supervise, stop (TERM, then KILL).

Used by ``console/runner.py`` (``make run``). Every child is the leader of its own group, so
stopping it also stops whatever it forked (Celery's pool, for instance) and nothing else.

Supervision (``Supervisor.supervise``): a long-running child that exits is restarted on its own, the
others keep running. The first restart comes after RESTART_BACKOFF_S, each further one within
CRASH_LOOP_WINDOW_S waits twice as long (at most RESTART_BACKOFF_MAX_S). A child that exits more than
CRASH_LOOP_RESTARTS times within CRASH_LOOP_WINDOW_S is in a crash loop: everything is stopped.
Before supervision starts (while the console is starting) any exit is fatal at once: a start-up
problem does not go away by restarting.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import DEVNULL, PIPE, STDOUT, Popen, TimeoutExpired
from typing import TextIO

GRACE_S = 10.0  # per tier: time between TERM and KILL
RESTART_BACKOFF_S = 1.0  # first restart of a crashed child; doubles per crash within the window
RESTART_BACKOFF_MAX_S = 30.0
CRASH_LOOP_RESTARTS, CRASH_LOOP_WINDOW_S = 5, 60.0  # more than 5 exits of one child in 60 s: stop
TIER_INFRA, TIER_APP = 0, 1  # apps stop first, so the worker can still reach Redis while it stops


class Interrupted(Exception):
    """A stop signal arrived while the runner was waiting for something."""


class ChildFailed(Exception):
    """A child exited (or a setup step failed); the message says which and how."""


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


@dataclass
class Child:
    """A started process and how to start it again (its argv, env, cwd and output hook)."""

    name: str
    popen: Popen
    tier: int
    one_shot: bool
    reader: threading.Thread
    stop_signal: int = signal.SIGTERM
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: Path | str | None = None
    on_line: Callable[[str], None] | None = None
    crashes: list[float] = field(default_factory=list)  # monotonic times of exits within the window
    restarts: int = 0
    restart_due: float | None = None  # set while it waits out its backoff

    @property
    def pgid(self) -> int:
        return self.popen.pid  # leader of its own group (process_group=0)


class Supervisor:
    """Starts children in their own process groups, prefixes their output, stops them all."""

    def __init__(
        self,
        out: TextIO | None = None,
        grace_s: float = GRACE_S,
        width: int = 8,
        backoff_s: float = RESTART_BACKOFF_S,
        backoff_max_s: float = RESTART_BACKOFF_MAX_S,
        max_restarts: int = CRASH_LOOP_RESTARTS,
        window_s: float = CRASH_LOOP_WINDOW_S,
    ) -> None:
        self.out = out or sys.stdout
        self.grace_s = grace_s
        self.width = width
        self.backoff_s, self.backoff_max_s = backoff_s, backoff_max_s
        self.max_restarts, self.window_s = max_restarts, window_s
        self.children: list[Child] = []
        self.stop_signal: int | None = None
        self.stopping = False
        self.last_output = time.monotonic()
        self._lock = threading.Lock()

    # output ------------------------------------------------------------------
    def say(self, name: str, text: str) -> None:
        with self._lock:
            self.last_output = time.monotonic()
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
        env = dict(env) if env is not None else None
        popen, reader = self._start(name, argv, env, cwd, on_line)
        child = Child(name, popen, tier, one_shot, reader, stop_signal, list(argv), env, cwd, on_line)
        self.children.append(child)
        return child

    def _start(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str] | None,
        cwd: Path | str | None,
        on_line: Callable[[str], None] | None,
    ) -> tuple[Popen, threading.Thread]:
        popen = Popen(
            argv,
            cwd=cwd,
            env=env,
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
        return popen, reader

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

    def wait_quiet(self, quiet_s: float, max_s: float) -> None:
        """Wait until no child has printed anything for quiet_s (at most max_s), so what we say next is last."""
        deadline = time.monotonic() + max_s
        while time.monotonic() - self.last_output < quiet_s and time.monotonic() < deadline:
            self.check()
            dead = self.first_dead()
            if dead:
                raise ChildFailed(
                    f"{dead.name} exited ({describe_exit(dead.popen.returncode)}) while starting"
                )
            time.sleep(0.1)

    def supervise(self) -> None:
        """Restart children that exit until a signal arrives (Interrupted) or one crash-loops (ChildFailed)."""
        while True:
            self.check()
            self.tend()
            time.sleep(0.2)

    def tend(self) -> None:
        """One round of supervision: note children that exited, restart those whose backoff is over."""
        now = time.monotonic()
        for child in self.children:
            if child.one_shot:
                continue
            if child.restart_due is not None:
                if now >= child.restart_due:
                    self._restart(child)
                continue
            if child.popen.poll() is None:
                continue
            how = describe_exit(child.popen.returncode)
            child.crashes = [t for t in child.crashes if now - t < self.window_s] + [now]
            crashes = len(child.crashes)
            if crashes > self.max_restarts:
                raise ChildFailed(
                    f"{child.name} exited {crashes} times within {self.window_s:g}s (last: {how}): "
                    f"a crash loop (more than {self.max_restarts} restarts in {self.window_s:g}s)"
                )
            delay = min(self.backoff_max_s, self.backoff_s * 2 ** (crashes - 1))
            self._signal(child, signal.SIGTERM)  # what it forked (a pool, gunicorn's workers) goes too
            child.restart_due = now + delay
            self.say(
                "runner",
                f"{child.name} exited unexpectedly ({how}); restarting it in {delay:g}s "
                f"({crashes} of at most {self.max_restarts} exits in {self.window_s:g}s); "
                "the other processes keep running",
            )

    def _restart(self, child: Child) -> None:
        """Start child again in a new group, once what is left of its old group is gone."""
        if self._alive(child):
            self._signal(child, signal.SIGKILL)  # leftovers would hold its port or queue
            end = time.monotonic() + 5
            while self._alive(child) and time.monotonic() < end:
                time.sleep(0.05)
        child.reader.join(timeout=1)
        child.popen, child.reader = self._start(child.name, child.argv, child.env, child.cwd, child.on_line)
        child.restart_due = None
        child.restarts += 1
        self.say("runner", f"{child.name} restarted (pid {child.popen.pid}, restart {child.restarts})")

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
