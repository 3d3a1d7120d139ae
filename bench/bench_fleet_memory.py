"""Memory and threads of one web process that visits every cluster of a fleet: bounded per cluster.

World: ``bench/fleet_world.py``: CLUSTERS (50) sandbox clusters of PARTITIONS (20,000) partitions on
BROKERS (30) brokers each, all served by one sandbox process of their own, registered in a
throwaway console.

Each run is one fresh web process (spawned: Django set up from scratch on the bench's database, the
Django test client as the web server's thread would call the views: middleware, auth, services,
gateway, templates). It visits the first cluster's pages (overview, topic list, brokers) and reads
its resident set size (``VmRSS``) and OS thread count (``/proc/self/task``), then visits every other
cluster's same pages and reads them again. Every page must answer 200 and show the cluster's own
topic or brokers. Between visits nothing is forced free: what the process keeps is what a long-lived
web worker keeps (the metadata snapshots' LRU, ``TOPIC_METADATA_CACHE_CLUSTERS``; the Kafka clients'
cap, ``KAFKA_CLIENTS_MAX``, and idle close, ``KAFKA_CLIENT_IDLE_S``).

Ratio: RSS after all clusters / RSS after the first (the issue's measure: a web process after
visiting 50 clusters <= 1.5x its size after one); RUNS (5) runs, each a new process, median gated.
The thread counts and the open clients are printed and checked: at most the process's threads after
one cluster + KAFKA_CLIENTS_MAX. ``BENCH_FLEET_UNCAPPED=1`` also shows one run with both caps
lifted (every cluster's snapshot and clients kept: the cost the caps bound), not gated.
Prints ``RESULT fleet_memory ratio=<rss after all / rss after one> goal<=1.5`` last; exit 1 above.
Smaller runs while developing: ``BENCH_FLEET_CLUSTERS=10 BENCH_FLEET_PARTITIONS=5000``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.fleet_world import TOPIC_PREFIX, FleetWorld, fleet_size  # noqa: E402
from bench.harness import gate  # noqa: E402

CLUSTERS = fleet_size(50)
PARTITIONS = int(os.environ.get("BENCH_FLEET_PARTITIONS", "20000"))
PER_TOPIC = 50
BROKERS = 30
RUNS = 5
GOAL = 1.5


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def open_clients() -> int:
    """Gateways of this process with a Kafka client open."""
    from console.kafka import gateway

    return gateway.open_count()


def visit(client, name: str) -> None:
    """The cluster's overview, topic list and brokers pages, each checked to show this cluster."""
    for path, shows in (
        ("", b"/brokers/"),
        ("topics/", f"{TOPIC_PREFIX}00000".encode()),
        ("brokers/", f"/c/{name}/brokers/{BROKERS}/".encode()),
    ):
        url = f"/c/{name}/{path}"
        response = client.get(url)
        if response.status_code != 200 or shows not in response.content:
            raise SystemExit(
                f"{url} answered {response.status_code} without {shows!r}: {response.content[:300]!r}"
            )


def web_process(names: list[str], env: dict[str, str], conn) -> None:
    """One run, in a spawned process: the figures after the first cluster and after all of them."""
    os.environ.update(env)
    import django

    django.setup()
    import logging

    logging.getLogger("kafka").setLevel(logging.CRITICAL)
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    started = time.perf_counter()
    visit(client, names[0])
    one = {"rss": rss_mb(), "threads": os_threads(), "clients": open_clients()}
    for name in names[1:]:
        visit(client, name)
    every = {"rss": rss_mb(), "threads": os_threads(), "clients": open_clients()}
    conn.send({"one": one, "all": every, "seconds": time.perf_counter() - started})
    conn.close()


def run_once(names: list[str], env: dict[str, str]) -> dict:
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=web_process, args=(names, env, child))
    proc.start()
    if not parent.poll(1800):
        proc.kill()
        raise SystemExit("the web process did not report within 30 minutes")
    got = parent.recv()
    proc.join(60)
    if proc.exitcode:
        raise SystemExit(f"the web process exited {proc.exitcode}")
    return got


def line(label: str, got: dict) -> str:
    one, every = got["one"], got["all"]
    return (
        f"{label:<12} after 1: {one['rss']:6.1f} MB {one['threads']:3d} threads {one['clients']:2d} clients | "
        f"after {CLUSTERS}: {every['rss']:6.1f} MB {every['threads']:3d} threads {every['clients']:2d} clients | "
        f"ratio {every['rss'] / one['rss']:.2f} ({got['seconds']:.0f} s)"
    )


def main() -> None:
    world = FleetWorld.start(CLUSTERS, partitions=PARTITIONS, per_topic=PER_TOPIC, brokers=BROKERS)
    try:
        from django.conf import settings
        from django.db import connection

        connection.close()
        cap = int(settings.KAFKA_CLIENTS_MAX)
        print(
            f"caps: TOPIC_METADATA_CACHE_CLUSTERS={settings.TOPIC_METADATA_CACHE_CLUSTERS} "
            f"KAFKA_CLIENTS_MAX={cap} KAFKA_CLIENT_IDLE_S={settings.KAFKA_CLIENT_IDLE_S:g}",
            flush=True,
        )
        if os.environ.get("BENCH_FLEET_UNCAPPED"):
            lifted = {"TOPIC_METADATA_CACHE_CLUSTERS": "100000", "KAFKA_CLIENTS_MAX": "100000"}
            print(line("uncapped", run_once(world.names, lifted)) + "  (shown, not gated)", flush=True)
        ratios, threads_over, clients = [], [], []
        for run in range(RUNS):
            got = run_once(world.names, {})
            print(line(f"run {run + 1}", got), flush=True)
            ratios.append(got["all"]["rss"] / got["one"]["rss"])
            threads_over.append(got["all"]["threads"] - got["one"]["threads"])
            clients.append(got["all"]["clients"])
    finally:
        world.stop()
    ratio = statistics.median(ratios)
    print(
        f"median RSS ratio over {RUNS} runs: {ratio:.2f}; threads added after the first cluster: {threads_over}"
    )
    gate(
        "fleet_memory",
        ratio,
        GOAL,
        absolute=[
            ("threads added by the other clusters (max)", max(threads_over), cap),
            ("Kafka clients open at the end (max)", max(clients), cap),
        ],
    )


if __name__ == "__main__":
    main()
