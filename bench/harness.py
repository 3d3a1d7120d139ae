"""The one measuring method every benchmark uses.

* ``RemoteSandbox(builder, *args)``: the sandbox built by ``builder`` (a module-level function
  returning a started ``SandboxCluster``) in a process of its own, as a real cluster runs outside
  the console's; its estate is frozen out of its own collector. ``advance``, ``call`` (a method of
  the cluster by name) and ``shutdown`` go over a pipe.
* ``setup_console(bootstrap)``: a throwaway console (SQLite in a temp dir) with the cluster
  registered and a superuser ``bench``; ``teardown(sandbox)`` closes the clients, stops the
  sandbox and removes the directory. ``console_on(builder, *args)``: both, as a ``with`` block
  yielding ``(sandbox, client, cluster)``.
* ``freeze()``: ``gc.collect(); gc.freeze()`` after setup, so that neither side pays a full
  collection over the other's setup (both sides run in this process, under the same collector);
  ``gc_paused(fn)``: a raw call with the collector paused, where the console pauses it around the
  same call.
* ``alternate(sides, runs)``: one warm-up call of each side, then ``runs`` (>= 5) runs, which side
  goes first alternating between runs; a side may be ``(prepare, fn)`` or ``(prepare, fn,
  cleanup)``: ``prepare()`` is untimed and its result is ``fn``'s argument (fresh plans), and
  ``cleanup(arg, result)`` runs untimed right after (clean state for whichever side runs next).
* ``Runs``: min / median / max per side, per-run ratios, the fastest of several floors.
* ``compare(ours, floors)``: the console-vs-floor measurement: ``freeze()``, ``alternate`` the
  console's sides and the raw floors, print them, the floor (the fastest raw side of this run) and
  the per-run ratios; the median ratio of the slowest console side to that floor is the result.
* ``gate(name, ratio, goal, absolute=[...])``: every printed absolute goal is checked, then the
  RESULT line is printed last; exit 1 when the median ratio or any absolute goal is missed.
* The floors' clients (``KpRaw``, ``confluent_admin``, ``raw_list_offsets``) are in
  ``bench/raw_clients.py``.
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RUNS = 7


# -- the sandbox in its own process ------------------------------------------------------------


class RemoteSandbox:
    """``builder(*args)``'s cluster in a child process (spawned: nothing of this process is shared)."""

    def __init__(self, builder: Callable, *args) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve_built, args=(builder, args, child), daemon=True)
        self._proc.start()
        self.bootstrap_servers = self._recv()

    def _recv(self):
        if not self._conn.poll(600):
            raise RuntimeError("the sandbox process did not answer within 600 s")
        ok, value = self._conn.recv()
        if not ok:
            raise RuntimeError(value)
        return value

    def _call(self, *msg):
        self._conn.send(msg)
        return self._recv()

    def advance(self, seconds: float) -> None:
        self._call("advance", seconds)

    def call(self, method: str, *args):
        """``cluster.<method>(*args)`` in the sandbox process; its result must pickle."""
        return self._call("call", method, *args)

    def shutdown(self) -> None:
        try:
            self._call("stop")
        finally:
            self._proc.join(30)


def _serve_built(builder: Callable, args: tuple, conn) -> None:
    try:
        cluster = builder(*args)
    except Exception as exc:  # noqa: BLE001 - reported to the bench
        conn.send((False, f"building the sandbox failed: {type(exc).__name__}: {exc}"))
        return
    gc.collect()
    gc.freeze()  # the estate out of the sandbox's own collector
    serve(cluster, conn)


def serve(cluster, conn) -> None:
    """The sandbox process's loop: announce the bootstrap servers, then advance, call or stop."""
    conn.send((True, cluster.bootstrap_servers))
    while True:
        cmd, *args = conn.recv()
        try:
            if cmd == "advance":
                cluster.advance(*args)
                conn.send((True, None))
            elif cmd == "call":
                conn.send((True, getattr(cluster, args[0])(*args[1:])))
            elif cmd == "stop":
                cluster.shutdown()
                conn.send((True, None))
                return
            else:
                conn.send((False, f"unknown command {cmd!r}"))
        except Exception as exc:  # noqa: BLE001 - reported to the bench
            conn.send((False, f"{type(exc).__name__}: {exc}"))


# -- the console ---------------------------------------------------------------------------------


def fill_log_sizes(cluster, seed: int) -> None:
    """Give every partition of a sandbox a log-normal size (median ~9 MB) on each replica and an end
    offset of one message per KB, the same on every run of a bench (``seed``)."""
    import random

    rng = random.Random(seed)
    with cluster.state.lock:
        for topic in cluster.state.topics.values():
            for part in topic.partitions:
                size = float(int(rng.lognormvariate(16, 1)))
                part.sizes = dict.fromkeys(part.replicas, size)
                part.end_offset = int(size // 1024)


def setup_console(bootstrap: str, timeout_s: int = 60, name: str = "bench"):
    """A throwaway console (SQLite in a temp dir) with the sandbox registered as ``name``; returns
    (client, cluster)."""
    os.environ["CONSOLE_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-console-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1,localhost"
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import logging

    import django

    django.setup()
    # kafka-python warns when a big response's decoding holds its I/O loop, and both clients log
    # the sandbox going away at the end: neither is a result.
    logging.getLogger("kafka").setLevel(logging.CRITICAL)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from console.models import Cluster

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_superuser("bench", password="bench")
    cluster = Cluster.objects.create(name=name, bootstrap_servers=bootstrap, request_timeout_s=timeout_s)
    client = Client()
    client.force_login(user)
    return client, cluster


def teardown(sandbox) -> None:
    """Close the console's clients (no reconnect noise), stop the sandbox, remove the console dir."""
    try:
        from console.kafka import close_all

        close_all()
    except Exception:  # noqa: BLE001 - Django may not be set up
        pass
    finally:
        if sandbox is not None:
            sandbox.shutdown()
        var_dir = os.environ.get("CONSOLE_VAR_DIR", "")
        if os.path.basename(var_dir).startswith("bench-"):
            shutil.rmtree(var_dir, ignore_errors=True)


@contextmanager
def console_on(builder: Callable, *args, timeout_s: int = 60) -> Iterator[tuple]:
    """``RemoteSandbox(builder, *args)`` and a console registered to it: ``(sandbox, client, cluster)``;
    ``teardown`` at the end, whatever happened."""
    sandbox = RemoteSandbox(builder, *args)
    try:
        client, cluster = setup_console(sandbox.bootstrap_servers, timeout_s)
        yield sandbox, client, cluster
    finally:
        teardown(sandbox)


def get_ok(client, url: str, **params):
    response = client.get(url, params)
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}: {response.content[:300]!r}")
    return response


def cold(fn: Callable) -> tuple:
    """A side for ``alternate``/``compare``: ``fn()`` timed from an emptied metadata cache (a view after
    the snapshot expired). Emptying the cache (which removes the host's copy) and the copy the view
    writes beside it are not the user's wait: they happen before and after the timed call, so the
    next side starts from a quiet machine."""
    from console.topics import cache

    return (cache.clear, lambda _: fn(), lambda _arg, _result: cache.wait_shared())


def gc_paused(fn: Callable) -> Callable:
    """``fn`` with the cyclic collector paused while it runs, as the console pauses it around its
    metadata fetch (``console.topics.cache``): a raw side gets the same collector policy."""

    def call(*args, **kwargs):
        was = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was:
                gc.enable()

    return call


def freeze() -> None:
    """Setup out of the cyclic collector, for both sides (call after setup, before the runs)."""
    gc.collect()
    gc.freeze()


# -- runs and results ----------------------------------------------------------------------------


class Runs:
    """Seconds per side over alternating runs; min/median/max and per-run ratios."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}

    def add(self, name: str, seconds: float) -> None:
        self.times.setdefault(name, []).append(seconds)

    def median(self, name: str) -> float:
        return statistics.median(self.times[name])

    def line(self, name: str, label: str = "") -> str:
        ts = self.times[name]
        return (
            f"{label or name:<58} min {min(ts):.4f}s  median {statistics.median(ts):.4f}s  max {max(ts):.4f}s"
            f"  (n={len(ts)})"
        )

    def ratios(self, ours: str, floor: str) -> str:
        """min/median/max of the per-run ratios (run i of ours over run i of the floor)."""
        rs = [a / b for a, b in zip(self.times[ours], self.times[floor], strict=True)]
        return f"per-run ratio {ours}/{floor}: min {min(rs):.2f} median {statistics.median(rs):.2f} max {max(rs):.2f}"

    def fastest(self, names) -> str:
        return min(names, key=self.median)

    def report(self, labels: dict[str, str] | None = None) -> None:
        for name in self.times:
            print(self.line(name, (labels or {}).get(name, name)))


def alternate(sides: dict, runs: int = RUNS, into: Runs | None = None, warmup: bool = True) -> Runs:
    """Time each side ``runs`` times, alternating which goes first; see the module docstring."""
    if runs < 5:
        raise ValueError("at least 5 runs")
    m = into or Runs()

    def once(name: str, side, record: bool) -> None:
        if isinstance(side, tuple):
            prepare, fn, *cleanup = side
            arg = prepare()
            start = time.perf_counter()
            result = fn(arg)
            elapsed = time.perf_counter() - start
            for c in cleanup:  # untimed: the next run, of either side, starts from a clean state
                c(arg, result)
        else:
            start = time.perf_counter()
            side()
            elapsed = time.perf_counter() - start
        if record:
            m.add(name, elapsed)

    names = list(sides)
    if warmup:
        for name in names:
            once(name, sides[name], False)
    for run in range(runs):
        for name in names if run % 2 == 0 else names[::-1]:
            once(name, sides[name], True)
    return m


def compare(
    ours: dict,
    floors: dict,
    *,
    runs: int = RUNS,
    shown: dict | None = None,
    note: str = "",
    into: Runs | None = None,
) -> float:
    """The console's sides (``ours``) against the raw ``floors``, setup frozen for both, in one
    alternating loop (``shown``: sides timed with them, not gated); prints every side, the floor
    (the raw side with the lowest median in this run, ``note`` beside it) and the per-run ratios of the
    gated console side (the slowest of ``ours``). Returns median(that side) / median(floor); every
    side's times are in ``into`` when given."""
    freeze()
    m = alternate({**ours, **(shown or {}), **floors}, runs=runs, into=into)
    m.report()
    floor = m.fastest(floors)
    side = max(ours, key=m.median)
    gated = f"; gated console side: {side}" if len(ours) > 1 else ""
    print(f"floor: {floor} ({note}){gated}" if note else f"floor: {floor}{gated}")
    print(m.ratios(side, floor))
    return m.median(side) / m.median(floor)


def gate(name: str, ratio: float, goal: float, absolute=()) -> None:
    """Check ``absolute`` = [(label, value, limit)] (value <= limit), print RESULT last, exit 1 on a miss."""
    missed = []
    for label, value, limit in absolute:
        ok = value <= limit
        print(f"goal {label}: {value:.3f} <= {limit:g}: {'ok' if ok else 'MISSED'}")
        if not ok:
            missed.append(label)
    if ratio > goal:
        missed.append("ratio")
    print(f"RESULT {name} ratio={ratio:.2f} goal<={goal:g}", flush=True)
    if missed:
        raise SystemExit(1)


def list_page_bench(
    name: str,
    goal: float,
    builder: Callable,
    floor: tuple[str, Callable[[str], Callable[[], int]]],
    *,
    path: str,
    total: int,
    noun: str,
    first_page: Callable[[str], str | None] | None = None,
) -> None:
    """A paged list's bench: the console's page (first 200) and API (first 50) at ``/c/<cluster>/<path>``
    and ``/api/v1/clusters/<cluster>/<path>`` against ``floor`` = (label, make(bootstrap) -> the raw read,
    returning how many ``noun`` it got), run with the collector paused as the console's read runs.
    Both sides must see all ``total`` rows (and ``first_page(html)`` must return None: else why the
    page is wrong) before anything is timed; then RESULT ``name`` against ``goal``."""
    with console_on(builder) as (sandbox, client, cluster):
        label, make = floor
        floors = {label: gc_paused(make(sandbox.bootstrap_servers))}
        got = floors[label]()
        if got != total:
            raise SystemExit(f"{label} returned {got} {noun}, expected {total}")
        page = f"/c/{cluster.name}/{path}"
        api = f"/api/v1/clusters/{cluster.name}/{path}"
        counted = get_ok(client, api).json()["count"]
        if counted != total:
            raise SystemExit(f"the API counted {counted} {noun}, expected {total}")
        wrong = first_page(get_ok(client, page).content.decode()) if first_page else None
        if wrong:
            raise SystemExit(wrong)
        ratio = compare(
            {
                "console page (first 200)": lambda: get_ok(client, page),
                "console API (first 50)": lambda: get_ok(client, api),
            },
            floors,
            note=f"{noun}={total}",
        )
    gate(name, ratio, goal)
