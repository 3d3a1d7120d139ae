"""Topic list, first page, cold metadata cache, at 100,000 partitions, against the wire.

Sandbox: 20,000 topics x 5 partitions x RF 3 on 30 brokers (``BENCH_TOPIC_PARTITIONS`` and
``BENCH_TOPIC_BROKERS`` change the partitions per topic and the broker count: 50 and 200 make the
1M estate), in a process of its own (``harness.RemoteSandbox``). Console side: the whole page view
(Django test client: middleware, auth, service, gateway, decoder, template) with the metadata cache
emptied first, so it reads the whole cluster's metadata (and the first page's configs) from Kafka.

Floor (``wire_floor``): the same Metadata request (v12, topics=null) written to a plain socket held
open across runs and its whole answer read into a buffer (``raw_clients.Wire``): the bytes the
console must receive, nothing decoded. Not a client's decoded read: the console decodes the answer
in C (console/kafka/_metadata.c) and beats confluent-kafka's ``list_topics`` (~4x) and
kafka-python (~8x), so a client is no floor. Shown, not gated: those two clients' reads
(``client_reads``), the same first page with the snapshot cached (the page's own fixed cost), and
the cold page over wire + that warm page (what is left for reading and decoding the answer).
GC: setup frozen for both sides; the collector paused around the raw reads as the console pauses
it around its own. 7 alternating runs, median gated.
Prints ``RESULT topic_list_cold ratio=<console/wire> goal<=3`` last (the goal of
topic_list_cold_1m, the same page against the same floor at 1M partitions); exit 1 above.

At 100,000 partitions the answer is ~5 MB and crosses loopback in ~6 ms while a page from the
cached snapshot alone costs ~12 ms, so "3x the wire" is below the page's fixed cost here; the
1M bench (``bench_topic_list_cold_1m``) is where the goal means something.

This module also holds the estate the other topic benchmarks share (``build_sandbox``) and the
warm benches' measurement on it (``against_metadata_read``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import Runs, cold, compare, console_on, gate, gc_paused, get_ok  # noqa: E402
from bench.raw_clients import KpRaw, Wire, confluent_admin  # noqa: E402

BROKERS = int(os.environ.get("BENCH_TOPIC_BROKERS", "30"))
TOPICS = 20_000
PARTITIONS = int(os.environ.get("BENCH_TOPIC_PARTITIONS", "5"))
RF = 3
GOAL = 3.0
WIRE = "raw socket read of the Metadata answer (the wire)"


def build_sandbox(topics: int = TOPICS, partitions: int = PARTITIONS, brokers: int = BROKERS):
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=brokers, controllers=3, port=0, speed=0, seed="bench-topics")
    cluster.start()
    for i in range(topics):
        cluster.create_topic(f"bench.topic-{i:05d}", partitions, RF)
    return cluster


def wire_floor(bootstrap: str) -> dict:
    """The full Metadata answer (v12, topics=null) read whole off a plain socket, nothing decoded."""
    from kafka.protocol.metadata import MetadataRequest

    wire = Wire(bootstrap)

    def read() -> None:
        wire.exchange([(0, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)])

    (size,) = wire.exchange([(0, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)])
    print(
        f"{TOPICS * PARTITIONS:,} partitions on {BROKERS} brokers: the Metadata answer is {size / 1e6:.1f} MB"
    )
    # The console pauses the cyclic collector around its fetch; so does the raw side.
    return {WIRE: gc_paused(read)}


def client_reads(bootstrap: str) -> dict:
    """Shown, not gated: confluent-kafka's list_topics and kafka-python's Metadata, each decoded."""
    from kafka.protocol.metadata import MetadataRequest

    admin = confluent_admin(bootstrap)
    kp = KpRaw(bootstrap)

    def kafka_python() -> None:
        response = kp.send(MetadataRequest(topics=None, allow_auto_topic_creation=False))
        assert len(response.topics) >= TOPICS

    return {
        "raw confluent list_topics (decoded by librdkafka)": gc_paused(lambda: admin.list_topics(timeout=60)),
        "raw kafka-python Metadata (decoded in Python)": gc_paused(kafka_python),
    }


def against_metadata_read(name: str, goal: float, sides, **warm) -> None:
    """A warm topic-list bench on this estate: the console's sides (``sides(client, url)``, url the
    topic list's) against ``wire_floor``, after one untimed page with ``warm``'s query."""
    with console_on(build_sandbox) as (sandbox, client, cluster):
        floors = wire_floor(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/"
        get_ok(client, url, **warm)
        ratio = compare(
            sides(client, url),
            floors,
            shown=client_reads(sandbox.bootstrap_servers),
            note="the wire: the answer's bytes received, nothing decoded",
        )
    gate(name, ratio, goal)


def main() -> None:
    with console_on(build_sandbox) as (sandbox, client, cluster):
        floors = wire_floor(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/"

        m = Runs()
        ratio = compare(
            {"console page (cold)": cold(lambda: get_ok(client, url))},
            floors,
            shown={
                # the page's fixed cost: the same first page from the cached snapshot
                "console page (warm, for scale)": lambda: get_ok(client, url),
                **client_reads(sandbox.bootstrap_servers),
            },
            note="the wire: the answer's bytes received, nothing decoded",
            into=m,
        )
        cold_s, warm, wire = (
            m.median(k) for k in ("console page (cold)", "console page (warm, for scale)", WIRE)
        )
        print(
            f"not gated: cold page {cold_s * 1000:.1f} ms = wire {wire * 1000:.1f} ms + warm page {warm * 1000:.1f} ms "
            f"+ {(cold_s - wire - warm) * 1000:.1f} ms; cold / (wire + warm page) = {cold_s / (wire + warm):.2f}"
        )
    gate("topic_list_cold", ratio, GOAL)


if __name__ == "__main__":
    main()
