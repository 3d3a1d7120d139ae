"""Throttle removal: time from a reassignment's completion on Kafka to its throttles being gone.

Sandbox: 6 brokers, ``BENCH_THROTTLE_TOPICS`` (default 100) topics of 100 partitions x RF 2 with
1 MB logs - 10,000 partitions, the size the issue asks the removal to be timed at (the first version
moved one topic of 60) - clock stopped, in a process of its own. The console runs as in production,
minus Redis: a reassignment of every partition
(second replica to another broker, 50 MB/s throttle) is started through the service path and its
operation run by ``operations.run`` (throttle, submit, first poll); then a beat thread calls
``operations.run_due`` every second (Celery beat's ``operation tick``, the worker running it at
once), which polls the moving reassignment every ``POLL_INTERVAL_S`` (1 s) and, once Kafka lists
no reassignment and the replicas match, removes the throttles and finishes.

Completion: once the console has polled the reassignment for 2 s, the bench moves the sandbox's
clock far enough for every copy to finish (``advance``); that instant is t0. From then a watcher
asks Kafka directly every 10 ms (DescribeConfigs of the topics and of each broker, through
kafka-python's own client, no console code) until no leader/follower throttled-replicas entry
and no throttled-rate set by the reassignment is left: t1. The delay t1 - t0 is measured for 5
reassignments (moving the replicas away and back in turn, each on a clean state: the previous
operation finished, its throttles gone); min / median / max printed.

RESULT ratio = median delay / poll interval (goal <= 2: within two poll intervals of completion).
Prints ``RESULT throttle_removal ratio=<delay/interval> goal<=2`` last; exit 1 above.
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import RemoteSandbox, freeze, gate, setup_console, teardown  # noqa: E402
from bench.raw_clients import KpRaw  # noqa: E402

BROKERS = 6
TOPICS = int(os.environ.get("BENCH_THROTTLE_TOPICS", "100"))
PER_TOPIC = 100
NAMES = [f"bench.throttled.{i:03d}" for i in range(TOPICS)]
RUNS = 5
GOAL = 2.0
MB = 1024 * 1024
TOPIC_KEYS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
BROKER_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")


def original(p: int) -> tuple[int, int]:
    return (p % BROKERS + 1, (p + 1) % BROKERS + 1)


def moved(p: int) -> tuple[int, int]:
    return (p % BROKERS + 1, (p + 3) % BROKERS + 1)


def build_sandbox():
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=BROKERS, controllers=1, port=0, speed=0, seed="bench-throttle")
    cluster.start()
    for name in NAMES:
        cluster.create_topic(name, PER_TOPIC, 2, assignment=[list(original(p)) for p in range(PER_TOPIC)])
    with cluster.state.lock:
        for name in NAMES:
            for part in cluster.state.topics[name].partitions:
                part.sizes = dict.fromkeys(part.replicas, float(MB))
                part.end_offset = 1024
    return cluster


def no_queue(op_id: int, countdown: float | None = None) -> str:
    """The bench's dispatcher: the beat thread below runs due operations, as the tick does."""
    return "bench"


class Beat(threading.Thread):
    """Celery beat's 1 s ``operation tick`` with a worker taking it at once."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.errors: list[str] = []

    def run(self) -> None:
        from django.db import connection

        from console.operations.runner import run_due

        next_at = time.monotonic()
        try:
            while not self.stop.is_set():
                try:
                    run_due(worker="bench-beat")
                except Exception as exc:  # noqa: BLE001 - reported by the bench
                    self.errors.append(f"{type(exc).__name__}: {exc}")
                next_at += 1.0
                self.stop.wait(max(0.0, next_at - time.monotonic()))
        finally:
            connection.close()


def throttled(kp) -> list[str]:
    """What is still set on Kafka: topic throttled replicas, broker throttled rates (dynamic ones)."""
    from kafka.protocol.admin import DescribeConfigsRequest

    R = DescribeConfigsRequest.DescribeConfigsResource

    def request(rtype: int, name: str, keys) -> DescribeConfigsRequest:
        return DescribeConfigsRequest(
            resources=[R(resource_type=rtype, resource_name=name, configuration_keys=list(keys))],
            include_synonyms=False,
            include_documentation=False,
        )

    topics = DescribeConfigsRequest(
        resources=[R(resource_type=2, resource_name=n, configuration_keys=list(TOPIC_KEYS)) for n in NAMES],
        include_synonyms=False,
        include_documentation=False,
    )
    asks = [(topics, None)] + [(request(4, str(b), BROKER_KEYS), b) for b in range(1, BROKERS + 1)]
    left = []
    for answer in kp.send_many(asks):
        for res in answer.results:
            for c in res.configs:
                if c.value not in (None, "") and c.config_source in (1, 2):  # dynamic topic / broker
                    left.append(f"{res.resource_name}:{c.name}={c.value}")
    return left


def main() -> None:
    sandbox = RemoteSandbox(build_sandbox)
    beat = None
    try:
        _client, cluster = setup_console(sandbox.bootstrap_servers)
        from django.conf import settings
        from django.contrib.auth import get_user_model

        from console import operations
        from console.models import Operation
        from console.models.reassignment import Reassignment
        from console.reassignment import actions as reassignment
        from console.reassignment.poll import POLL_INTERVAL_S

        settings.OPERATION_DISPATCHER = "bench.bench_throttle_removal.no_queue"
        actor = get_user_model().objects.get(username="bench")
        kp = KpRaw(sandbox.bootstrap_servers)
        assert not throttled(kp)
        beat = Beat()
        freeze()
        beat.start()
        delays = []
        for run in range(RUNS):
            target = moved if run % 2 == 0 else original
            plan = {(name, p): target(p) for name in NAMES for p in range(PER_TOPIC)}
            op = reassignment.start_reassignment(
                actor=actor, cluster=cluster, proposed=plan, throttle=50 * MB
            )
            operations.run(op.pk, worker="bench")  # what the queued task does: throttle, submit, first poll
            r = Reassignment.objects.get(operation=op)
            assert r.stage == "moving", r.stage
            assert throttled(kp), "no throttle was set"
            time.sleep(2 * POLL_INTERVAL_S)  # the console is polling a moving reassignment
            sandbox.advance(3600)  # every copy finishes: Kafka completes the reassignment now
            t0 = time.perf_counter()
            while throttled(kp):
                if time.perf_counter() - t0 > 60:
                    raise SystemExit(f"throttles still set 60 s after completion: {throttled(kp)[:5]}")
                time.sleep(0.01)
            delays.append(time.perf_counter() - t0)
            deadline = time.monotonic() + 30
            while Operation.objects.get(pk=op.pk).state == "running" and time.monotonic() < deadline:
                time.sleep(0.05)
            op.refresh_from_db()
            print(
                f"run {run + 1}: throttles gone {delays[-1]:.3f}s after completion; operation {op.state}",
                flush=True,
            )
            assert op.state == "succeeded", (op.state, op.last_error)
        if beat.errors:
            print("beat errors:", *beat.errors[:5], sep="\n  ")
        med = statistics.median(delays)
        print(
            f"completion -> throttles removed: min {min(delays):.3f}s median {med:.3f}s max {max(delays):.3f}s "
            f"(n={len(delays)}); poll interval {POLL_INTERVAL_S:g}s"
        )
        ratio = med / POLL_INTERVAL_S
    finally:
        if beat is not None:
            beat.stop.set()
            beat.join(10)
        teardown(sandbox)
    gate("throttle_removal", ratio, GOAL)


if __name__ == "__main__":
    main()
