"""Topic list, first page, cold metadata cache vs a bare confluent-kafka ``list_topics()``.

Sandbox: 20,000 topics x 5 partitions x RF 3 on 30 brokers, started in-process. The console
side is the whole page view (Django test client: middleware, auth, service, gateway, template);
the raw side is ``AdminClient.list_topics()`` on a warmed client. Medians of interleaved runs.
Prints ``RESULT topic_list_cold ratio=<console/raw> goal<=1.5`` last.

This module also holds the setup the other topic benchmarks share.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time

BROKERS = 30
TOPICS = 20_000
PARTITIONS = 5
RF = 3
RUNS = 7


def build_sandbox(topics: int = TOPICS, partitions: int = PARTITIONS, brokers: int = BROKERS):
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=brokers, controllers=3, port=0, speed=0, seed="bench-topics")
    cluster.start()
    for i in range(topics):
        cluster.create_topic(f"bench.topic-{i:05d}", partitions, RF)
    return cluster


def teardown(sandbox) -> None:
    """Close the console's clients first so they do not log reconnect errors at shutdown; then
    stop the sandbox and remove the throwaway console directory."""
    try:
        from console.kafka import close_all

        close_all()
    finally:
        sandbox.shutdown()
        var_dir = os.environ.get("CONSOLE_VAR_DIR", "")
        if os.path.basename(var_dir).startswith("bench-console-"):
            shutil.rmtree(var_dir, ignore_errors=True)


def setup_console(bootstrap: str):
    """A throwaway console (SQLite in a temp dir) with the sandbox registered; returns (client, cluster)."""
    os.environ["CONSOLE_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-console-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1,localhost"
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from console.models import Cluster

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_superuser("bench", password="bench")
    cluster = Cluster.objects.create(name="bench", bootstrap_servers=bootstrap, request_timeout_s=60)
    client = Client()
    client.force_login(user)
    return client, cluster


def raw_admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.list_topics(timeout=60)  # connections up, like the console's long-lived gateway
    return admin


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(console_fn, raw_fn, runs: int = RUNS) -> tuple[float, float]:
    """Medians of interleaved runs (console, raw) after one warm-up of each."""
    console_fn()
    raw_fn()
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(timed(console_fn))
        theirs.append(timed(raw_fn))
    return statistics.median(ours), statistics.median(theirs)


def get_ok(client, url: str, **params) -> None:
    response = client.get(url, params)
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}: {response.content[:300]!r}")


def main() -> None:
    sandbox = build_sandbox()
    try:
        client, cluster = setup_console(sandbox.bootstrap_servers)
        from console.topics import cache as metadata_cache

        admin = raw_admin(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/"

        def console_cold():
            metadata_cache.clear()
            get_ok(client, url)

        ours, raw = compare(console_cold, lambda: admin.list_topics(timeout=60))
        print(
            f"topics={TOPICS} partitions={TOPICS * PARTITIONS} brokers={BROKERS} "
            f"console_cold_s={ours:.3f} raw_list_topics_s={raw:.3f}"
        )
    finally:
        teardown(sandbox)
    print(f"RESULT topic_list_cold ratio={ours / raw:.3f} goal<=1.5")


if __name__ == "__main__":
    main()
