"""Validate + submit a 10,000-partition plan vs the raw AlterPartitionReassignments calls it makes.

Sandbox: 30 brokers, 100,000 partitions (100 topics x 1,000, RF 3, sized logs), clock stopped, in a
process of its own (``RemoteSandbox``) as a real cluster would be.
The console side is the whole service path: ``start_reassignment`` (metadata snapshot, racks,
in-progress list, per-partition validation, Operation + rows + audit) and the worker's ``submit``
(conflict checks, batches of 1,000, per-partition states); the throttle step between them
(ledger, DescribeConfigs, IncrementalAlterConfigs) is timed and printed apart. The raw side is the same batches of AlterPartitionReassignments sent
through the gateway. Each console run moves a fresh, disjoint set of partitions. Medians.
Prints ``RESULT reassign_submit ratio=<console/raw> goal<=1.5`` last.

With ``BENCH_KAFKA_BOOTSTRAP_SERVERS`` set, the same comparison runs against that real cluster
instead (``main_real``: smaller, 1,000 partitions per run by default), where Kafka's controller
does the work a real AlterPartitionReassignments costs.
"""

from __future__ import annotations

import gc
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BROKERS = 30
TOPICS = 100
PARTITIONS_PER_TOPIC = 1000
MOVE = 10_000
RUNS = 3
MB = 1024 * 1024


def no_queue(op_id: int, countdown: float | None = None) -> str:
    """The bench's dispatcher (settings.OPERATION_DISPATCHER): nothing runs the operation."""
    return "bench"


def build_sandbox(seed: str = "bench-reassign"):
    """30 brokers on 3 racks, 100,000 partitions with log sizes, the clock stopped."""
    from sandbox.cluster import SandboxCluster

    rng = random.Random(7)
    racks = [f"rack-{i % 3}" for i in range(BROKERS)]
    cluster = SandboxCluster(brokers=BROKERS, controllers=1, port=0, speed=0, seed=seed, racks=racks)
    cluster.start()
    for t in range(TOPICS):
        assignment = []
        for p in range(PARTITIONS_PER_TOPIC):
            first = (t * 7 + p) % BROKERS
            assignment.append([first + 1, (first + 10) % BROKERS + 1, (first + 20) % BROKERS + 1])
        cluster.create_topic(
            f"bench-{t:03d}", partitions=PARTITIONS_PER_TOPIC, replication_factor=3, assignment=assignment
        )
    with cluster.state.lock:
        for topic in cluster.state.topics.values():
            for part in topic.partitions:
                size = float(int(rng.lognormvariate(16, 1)))
                part.sizes = dict.fromkeys(part.replicas, size)
                part.end_offset = int(size // 1024)
    return cluster


class RemoteSandbox:
    """The benchmark sandbox in its own process, as a real cluster runs outside the console's.

    In-process, the sandbox's request handling shares the console's interpreter lock, so its
    work lands inside whichever side of a ratio sends more requests; in a child process it runs
    beside the console as Kafka would. ``advance`` and ``shutdown`` are sent over a pipe.
    """

    def __init__(self, seed: str) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve_sandbox, args=(seed, child), daemon=True)
        self._proc.start()
        self.bootstrap_servers = self._call("ready")

    def _call(self, *msg):
        if msg != ("ready",):
            self._conn.send(msg)
        ok, value = self._conn.recv()
        if not ok:
            raise RuntimeError(value)
        return value

    def advance(self, seconds: float) -> None:
        self._call("advance", seconds)

    def shutdown(self) -> None:
        try:
            self._call("stop")
        finally:
            self._proc.join(30)


def _serve_sandbox(seed: str, conn) -> None:
    serve(build_sandbox(seed), conn)


def serve(cluster, conn) -> None:
    """The sandbox process's loop: announce the bootstrap servers, then advance or stop on command."""
    conn.send((True, cluster.bootstrap_servers))
    while True:
        cmd, *args = conn.recv()
        try:
            if cmd == "advance":
                cluster.advance(*args)
            elif cmd == "stop":
                cluster.shutdown()
                conn.send((True, None))
                return
            conn.send((True, None))
        except Exception as exc:  # noqa: BLE001 - reported to the bench
            conn.send((False, f"{type(exc).__name__}: {exc}"))


def plan_for(chunk: int, total: int = MOVE) -> dict[tuple[str, int], tuple[int, ...]]:
    """``total`` partitions (spread over every topic), each moving its last replica to a new broker."""
    per_topic = total // TOPICS
    plan = {}
    for t in range(TOPICS):
        for i in range(per_topic):
            p = chunk * per_topic + i
            first = (t * 7 + p) % BROKERS
            reps = [first + 1, (first + 10) % BROKERS + 1, (first + 23) % BROKERS + 1]
            plan[(f"bench-{t:03d}", p)] = tuple(reps)
    return plan


def console_submit(
    cluster_row, actor, plan, timings: dict | None = None, throttle: int | None = 50 * MB
) -> tuple[float, object]:
    """Validate + submit (the RESULT); the throttle step in between is timed apart in ``timings``."""
    from console import operations
    from console.models.reassignment import Reassignment
    from console.reassignment import actions as reassignment
    from console.reassignment import worker as reassign_run

    start = time.perf_counter()
    op = reassignment.start_reassignment(actor=actor, cluster=cluster_row, proposed=plan, throttle=throttle)
    r = Reassignment.objects.select_related("cluster", "operation").get(operation=op)
    validated = time.perf_counter()
    r.operation = operations.claim(op.pk, "bench")  # what the worker does first (the runner's claim)
    claimed = time.perf_counter()
    assert reassign_run._throttle(r) is None, "the throttles could not be set"
    throttled = time.perf_counter()
    reassign_run.submit(r)
    done = time.perf_counter()
    moving = r.partitions.filter(state="moving").count()
    assert moving == len(plan), f"only {moving} of {len(plan)} partitions submitted"
    if timings is not None:
        timings.setdefault("validate", []).append(validated - start)
        timings.setdefault("throttle", []).append(throttled - validated)
        timings.setdefault("submit", []).append(done - throttled)
    return (claimed - start) + (done - throttled), r


def raw_submit(gw, plan) -> float:
    from console.kafka import TopicPartition
    from console.reassignment.worker import SUBMIT_BATCH

    items = [(TopicPartition(t, p), list(r)) for (t, p), r in plan.items()]
    start = time.perf_counter()
    for i in range(0, len(items), SUBMIT_BATCH):
        gw.alter_partition_reassignments(dict(items[i : i + SUBMIT_BATCH]))
    return time.perf_counter() - start


def setup(seed: str = "bench-reassign"):
    """Sandbox, throwaway console database, registered cluster and a superuser actor."""
    from bench.bench_topic_list import setup_console

    sandbox = RemoteSandbox(seed)
    _client, cluster_row = setup_console(sandbox.bootstrap_servers)
    from django.contrib.auth import get_user_model

    actor = get_user_model().objects.get(username="bench")
    from console.clusters.actions import gateway_for

    gw = gateway_for(cluster_row)
    gw.list_topics_metadata()  # connections up, like a long-lived worker
    # A live queue publishes in milliseconds; the bench runs no Redis, so enqueueing is a stub.
    from django.conf import settings

    settings.OPERATION_DISPATCHER = "bench.bench_reassign_submit.no_queue"
    # What setup left behind (Django, the metadata snapshot of 100,000 partitions) is kept out of
    # the cyclic collector, whose full passes over it would land at random inside either side.
    gc.collect()
    gc.freeze()
    return sandbox, cluster_row, actor, gw


def main_real(bootstrap: str) -> None:
    """The same comparison against a real cluster (``BENCH_KAFKA_BOOTSTRAP_SERVERS``, 3+ brokers).

    A topic of 2 x (RUNS + 1) chunks of ``BENCH_REAL_PARTITIONS`` (default 1,000) RF 2 partitions
    is created; console and raw runs alternate over disjoint chunks, each moving every
    partition's second replica to the third broker, without throttles (real data would move).
    The topic is deleted at the end.
    """
    from bench.bench_topic_list import setup_console, teardown
    from console.kafka import NewTopic

    n = int(os.environ.get("BENCH_REAL_PARTITIONS", "1000"))
    _client, cluster_row = setup_console(bootstrap)
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from console.clusters.actions import gateway_for

    settings.OPERATION_DISPATCHER = "bench.bench_reassign_submit.no_queue"
    actor = get_user_model().objects.get(username="bench")
    gw = gateway_for(cluster_row)
    brokers = sorted(b.id for b in gw.describe_cluster().brokers)[:3]
    if len(brokers) < 3:
        raise SystemExit("the real-cluster run needs at least 3 brokers")
    name = f"bench-reassign-{os.getpid()}"
    chunks = 2 * (RUNS + 1)
    assign = [[brokers[p % 3], brokers[(p + 1) % 3]] for p in range(chunks * n)]
    created = gw.create_topics([NewTopic(name, -1, -1, assign, {})])[name]
    if created.__class__.__name__ != "Ok":
        raise SystemExit(f"could not create {name}: {created}")

    def plan(chunk: int) -> dict:
        return {(name, p): (assign[p][0], brokers[(p + 2) % 3]) for p in range(chunk * n, (chunk + 1) * n)}

    class _NoSandbox:
        def shutdown(self) -> None:
            pass

    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # every partition has a leader before anything moves
            md = gw.describe_topics([name]).get(name)
            if getattr(md, "partitions", None) and all(p.leader >= 0 for p in md.partitions):
                break
            time.sleep(1)
        console_submit(cluster_row, actor, plan(0), throttle=None)  # warm-up
        raw_submit(gw, plan(1))
        console_times, raw_times = [], []
        for run in range(RUNS):
            console_times.append(console_submit(cluster_row, actor, plan(2 + 2 * run), throttle=None)[0])
            raw_times.append(raw_submit(gw, plan(3 + 2 * run)))
        c, r = statistics.median(console_times), statistics.median(raw_times)
        print(f"real cluster {bootstrap}: {n} partitions per run")
        print(f"console validate+submit: median {c:.3f}s ({console_times})")
        print(f"raw AlterPartitionReassignments batches: median {r:.3f}s ({raw_times})")
        print(f"RESULT reassign_submit ratio={c / r:.2f} goal<=1.5")
    finally:
        gw.delete_topics([name])
        teardown(_NoSandbox())


def main() -> None:
    bootstrap = os.environ.get("BENCH_KAFKA_BOOTSTRAP_SERVERS")
    if bootstrap:
        return main_real(bootstrap)
    sandbox, cluster_row, actor, gw = setup()
    try:
        raw_plan = plan_for(9)
        raw_submit(gw, raw_plan)  # warm-up
        console_times, raw_times, timings = [], [], {}
        console_submit(cluster_row, actor, plan_for(0))  # warm-up
        for run in range(RUNS):
            elapsed, _ = console_submit(cluster_row, actor, plan_for(run + 1), timings)
            console_times.append(elapsed)
            raw_times.append(raw_submit(gw, raw_plan))
        c, r = statistics.median(console_times), statistics.median(raw_times)
        parts = ", ".join(f"{k} {statistics.median(v):.3f}s" for k, v in timings.items())
        print(f"console steps (medians): {parts}; the throttle step is not part of the ratio")
        print(f"console validate+submit of {MOVE} partitions: median {c:.3f}s ({console_times})")
        print(f"raw AlterPartitionReassignments batches:      median {r:.3f}s ({raw_times})")
        print(f"RESULT reassign_submit ratio={c / r:.2f} goal<=1.5")
    finally:
        from bench.bench_topic_list import teardown

        teardown(sandbox)


if __name__ == "__main__":
    main()
