"""A fleet's snapshots fan out over the batch worker's slots: 50 clusters in ~ slowest single x 50 / slots.

World: ``bench/fleet_world.py``: CLUSTERS (50) sandbox clusters of PARTITIONS (20,000) partitions on
BROKERS (6) brokers each (RF 3, sized logs), all served by one sandbox process of their own,
registered in a throwaway console. The batch worker is the console's own (``bench/fleet_workers.py``:
`make run`'s argv, ``--concurrency BATCH_SLOTS``, default 2) on a Redis and the bench's database;
every snapshot is the console's whole path: a Celery task per cluster, the lock, Kafka reads, Arrow,
Parquet into the lake, the cluster's summary row.

Fleet side: beat's dispatcher (``tasks.telemetry.collect_snapshots``, called here as beat would send
it) sends one task per cluster; timed until every task has answered "ok" (results in Redis).
Ideal side, the issue's measure: the slowest single snapshot x CLUSTERS / BATCH_SLOTS, where a single
snapshot is one cluster's task sent alone to the same idle worker (SAMPLE clusters per run, the
slowest kept; every cluster has the same shape). The lake is emptied (untimed) before each side, so
every snapshot is taken. Both sides run in the same worker processes (same collector policy);
RUNS (5) alternating runs after one warm-up of each, median gated.
Prints ``RESULT fleet_snapshots ratio=<fleet / (slowest single x clusters / slots)> goal<=1.2``.
Smaller runs while developing: ``BENCH_FLEET_CLUSTERS=6 BENCH_FLEET_PARTITIONS=2000``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.fleet_workers import Workers, cpu_seconds, fleet_console, sandbox_pid  # noqa: E402
from bench.fleet_world import FleetWorld, fleet_size  # noqa: E402
from bench.harness import Runs, gate  # noqa: E402

CLUSTERS = fleet_size(50)
PARTITIONS = int(os.environ.get("BENCH_FLEET_PARTITIONS", "20000"))
PER_TOPIC = 100
BROKERS = int(os.environ.get("BENCH_FLEET_BROKERS", "6"))
SLOTS = int(os.environ.get("BATCH_SLOTS", "2"))
SAMPLE = 3
RUNS = 5
GOAL = 1.2
TASK_TIMEOUT_S = 900.0


def results(sent: dict[str, str]) -> dict[str, str]:
    """Each task's answer (waits for all), by cluster name."""
    from celery.result import AsyncResult

    from tasks.celery import app

    return {
        name: AsyncResult(tid, app=app).get(timeout=TASK_TIMEOUT_S, interval=0.02)
        for name, tid in sent.items()
    }


def check(answers: dict[str, str]) -> None:
    bad = {name: answer for name, answer in answers.items() if answer != "ok"}
    if bad:
        raise SystemExit(f"snapshots not taken: {bad}")


def fleet(lake: Path) -> float:
    """Every cluster through beat's dispatcher and the batch slots: seconds until the last answered."""
    from tasks.telemetry import collect_snapshots

    shutil.rmtree(lake, ignore_errors=True)
    started = time.perf_counter()
    answers = results(collect_snapshots.run())
    took = time.perf_counter() - started
    check(answers)
    if len(answers) != CLUSTERS:
        raise SystemExit(f"{len(answers)} snapshots for {CLUSTERS} clusters")
    return took


def singles(lake: Path, world: FleetWorld, run: int) -> list[float]:
    """SAMPLE clusters' snapshots, each sent alone to the idle worker: seconds each."""
    from tasks.telemetry import collect_cluster_snapshot

    took = []
    for i in range(SAMPLE):
        name = world.names[(run * SAMPLE + i) * 7 % CLUSTERS]
        shutil.rmtree(lake, ignore_errors=True)
        started = time.perf_counter()
        answer = collect_cluster_snapshot.apply_async((world.clusters[name].pk,)).get(timeout=TASK_TIMEOUT_S)
        took.append(time.perf_counter() - started)
        check({name: answer})
    return took


class Cpu:
    """CPU seconds the sandbox process and the batch worker's processes use during each side."""

    def __init__(self, workers: Workers) -> None:
        self.sandbox = sandbox_pid()
        self.workers = workers
        self.used: dict[str, list[tuple[float, float, float]]] = {}  # side -> (wall, sandbox, worker)

    def timed(self, side: str, fn, *args):
        pids = self.workers.pids()
        before = (time.perf_counter(), cpu_seconds([self.sandbox]), cpu_seconds(pids))
        result = fn(*args)
        after = (time.perf_counter(), cpu_seconds([self.sandbox]), cpu_seconds(pids))
        self.used.setdefault(side, []).append(tuple(b - a for a, b in zip(before, after, strict=True)))
        return result

    def per_snapshot(self, side: str, snapshots: int) -> tuple[float, float, float]:
        """Median (wall, sandbox CPU, worker CPU) of the side's runs, per snapshot."""
        rows = self.used[side]
        return tuple(statistics.median(r[i] for r in rows) / snapshots for i in range(3))


def main() -> None:
    lake = Path(tempfile.mkdtemp(prefix="bench-fleet-lake-"))
    os.environ["TELEMETRY_LAKE_DIR"] = str(lake)
    os.environ["TELEMETRY_INTERVAL_S"] = "3600"  # no run crosses into another interval's file
    try:
        with fleet_console(
            CLUSTERS,
            {"batch": SLOTS},
            partitions=PARTITIONS,
            per_topic=PER_TOPIC,
            brokers=BROKERS,
            sized=True,
            timeout_s=180,
        ) as (world, workers):
            ratio = measure(world, workers, lake)
    finally:
        shutil.rmtree(lake, ignore_errors=True)
    gate("fleet_snapshots", ratio, GOAL)


def measure(world: FleetWorld, workers: Workers, lake: Path) -> float:
    """The alternating runs; prints every figure, returns the gated ratio."""
    cpu = Cpu(workers)
    m = Runs()
    every_single: list[float] = []
    fleet(lake)  # warm-up: every cluster's clients opened in the worker processes
    singles(lake, world, 0)
    for run in range(RUNS):
        order = ("fleet", "single") if run % 2 == 0 else ("single", "fleet")
        for side in order:
            if side == "fleet":
                m.add("fleet", cpu.timed("fleet", fleet, lake))
            else:
                took = cpu.timed("single", singles, lake, world, run + 1)
                every_single += took
                m.add("ideal", max(took) * CLUSTERS / SLOTS)
        print(
            f"run {run + 1}: fleet {m.times['fleet'][-1]:.2f}s, ideal {m.times['ideal'][-1]:.2f}s", flush=True
        )
    print(
        f"{CLUSTERS} clusters x {PARTITIONS:,} partitions, {BROKERS} brokers each, {SLOTS} batch slots, "
        f"{os.cpu_count()} cores"
    )
    print(
        f"single snapshot: min {min(every_single):.3f}s median {statistics.median(every_single):.3f}s "
        f"max {max(every_single):.3f}s (n={len(every_single)})"
    )
    m.report(
        {
            "fleet": "fleet: dispatch + every cluster's task answered",
            "ideal": f"ideal: slowest single x {CLUSTERS} / {SLOTS}",
        }
    )
    print(m.ratios("fleet", "ideal"))
    serial = statistics.median(every_single) * CLUSTERS
    print(f"for scale: one slot, one after another (median single x {CLUSTERS}): {serial:.1f}s")
    bounds(cpu, m)
    return m.median("fleet") / m.median("ideal")


def bounds(cpu: Cpu, m: Runs) -> None:
    """What bounds the fleet on this machine: the sandbox's one serving thread, or the cores."""
    wall, sandbox, worker = cpu.per_snapshot("single", SAMPLE)
    f_wall, f_sandbox, f_worker = cpu.per_snapshot("fleet", CLUSTERS)
    cores = os.cpu_count() or 1
    print(
        f"per snapshot, alone: {wall:.2f}s wall, sandbox CPU {sandbox:.2f}s, batch worker CPU {worker:.2f}s; "
        f"in the fleet: {f_wall:.2f}s wall, sandbox CPU {f_sandbox:.2f}s, batch worker CPU {f_worker:.2f}s"
    )
    serving = CLUSTERS * sandbox
    cpu_bound = CLUSTERS * (sandbox + worker) / cores
    print(
        f"bounds for {CLUSTERS}: the sandbox's one serving thread {serving:.1f}s (clusters x its CPU per "
        f"snapshot), the {cores} cores {cpu_bound:.1f}s (clusters x both CPUs / cores), the slots "
        f"{m.median('ideal'):.1f}s; fleet {m.median('fleet'):.1f}s = "
        f"{m.median('fleet') / max(serving, cpu_bound, m.median('ideal')):.2f} x the largest"
    )


if __name__ == "__main__":
    main()
