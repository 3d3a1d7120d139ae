"""Topic list, first page, cold metadata cache vs the fastest raw full Metadata read.

Sandbox: 20,000 topics x 5 partitions x RF 3 on 30 brokers, in a process of its own
(``harness.RemoteSandbox``). Console side: the whole page view (Django test client: middleware,
auth, service, gateway, template) with the metadata cache emptied first, so it reads the whole
cluster's metadata (and the first page's configs) from Kafka. Raw floors, both on warmed clients:
confluent-kafka ``AdminClient.list_topics()`` (what the console's gateway calls) and a full
``MetadataRequest`` (topics=null) through kafka-python's own client; the floor is whichever has
the lower median in this run (printed). GC: setup frozen (``gc.freeze()``) for both sides, which
run in this process, and the collector paused around the raw fetch as the console pauses it
around its own (``topics.cache``). 7 alternating runs. Prints ``RESULT topic_list_cold ratio=<console/floor>
goal<=1.5`` last; exit 1 above.

This module also holds the estate the other topic benchmarks share (``build_sandbox``) and the
warm benches' measurement on it (``against_metadata_read``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import compare, console_on, gate, gc_paused, get_ok  # noqa: E402
from bench.raw_clients import KpRaw, confluent_admin  # noqa: E402

BROKERS = 30
TOPICS = 20_000
PARTITIONS = 5
RF = 3
GOAL = 1.5


def build_sandbox(topics: int = TOPICS, partitions: int = PARTITIONS, brokers: int = BROKERS):
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=brokers, controllers=3, port=0, speed=0, seed="bench-topics")
    cluster.start()
    for i in range(topics):
        cluster.create_topic(f"bench.topic-{i:05d}", partitions, RF)
    return cluster


def raw_metadata_floors(bootstrap: str) -> dict:
    """The two raw full-metadata reads: confluent-kafka's list_topics and kafka-python's Metadata."""
    from kafka.protocol.metadata import MetadataRequest

    admin = confluent_admin(bootstrap)
    kp = KpRaw(bootstrap)

    def kafka_python() -> None:
        response = kp.send(MetadataRequest(topics=None, allow_auto_topic_creation=False))
        assert len(response.topics) >= TOPICS

    # The console pauses the cyclic collector around this fetch; so do the raw sides.
    return {
        "raw confluent list_topics": gc_paused(lambda: admin.list_topics(timeout=60)),
        "raw kafka-python Metadata": gc_paused(kafka_python),
    }


def against_metadata_read(name: str, goal: float, sides, **warm) -> None:
    """A warm topic-list bench on this estate: the console's sides (``sides(client, url)``, url the
    topic list's) against ``raw_metadata_floors``, after one untimed page with ``warm``'s query."""
    with console_on(build_sandbox) as (sandbox, client, cluster):
        floors = raw_metadata_floors(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/"
        get_ok(client, url, **warm)
        ratio = compare(sides(client, url), floors)
    gate(name, ratio, goal)


def main() -> None:
    with console_on(build_sandbox) as (sandbox, client, cluster):
        from console.clusters.actions import gateway_for
        from console.topics import cache as metadata_cache

        floors = raw_metadata_floors(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/"
        gateway = gateway_for(cluster)

        def console_cold():
            metadata_cache.clear()
            get_ok(client, url)

        ratio = compare(
            {"console page (cold)": console_cold},
            floors,
            # not gated: the gateway's own fetch + conversion, to show where the page's time goes
            shown={"console gateway.list_topics_metadata": gateway.list_topics_metadata},
            note="the fastest client for a full Metadata read in this run",
        )
    gate("topic_list_cold", ratio, GOAL)


if __name__ == "__main__":
    main()
