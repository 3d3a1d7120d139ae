"""Topic list, first page, cold metadata cache, at 1,000,000 partitions on 200 brokers, against the
wire: a raw socket read of the same full Metadata answer.

Sandbox: 20,000 topics x 50 partitions x RF 3 on 200 brokers (``BENCH_1M_TOPICS`` changes the topic
count), in a process of its own (``harness.RemoteSandbox``). Console side: the whole page view
(Django test client: middleware, auth, service, gateway, decoder, template) with the metadata cache
emptied first, so it reads the whole cluster's metadata (and the first page's configs) from Kafka.
Floor: the same Metadata request (v12, topics=null) written to a plain socket held open across
runs, and its whole answer read off it into a buffer (``raw_clients.Wire``) - the bytes the console
must receive, with no client and no decoding: what a faster console could approach but not beat.
Shown, not gated: kafka-python's and confluent-kafka's full reads of the same answer, to show what a
client costs. GC: setup frozen for both sides; the collector paused around the raw read as the
console pauses it around its own. 5 alternating runs, median gated.
Prints ``RESULT topic_list_cold_1m ratio=<console/wire> goal<=3`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_topic_list import build_sandbox  # noqa: E402
from bench.harness import cold, compare, console_on, gate, gc_paused, get_ok  # noqa: E402
from bench.raw_clients import KpRaw, Wire, confluent_admin  # noqa: E402

BROKERS = 200
TOPICS = int(os.environ.get("BENCH_1M_TOPICS", "20000"))
PARTITIONS = 50
GOAL = 3.0
RUNS = 5


def main() -> None:
    with console_on(build_sandbox, TOPICS, PARTITIONS, BROKERS) as (sandbox, client, cluster):
        from kafka.protocol.metadata import MetadataRequest

        wire = Wire(sandbox.bootstrap_servers)

        def wire_read() -> None:
            wire.exchange([(0, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)])

        (size,) = wire.exchange([(0, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)])
        print(f"{TOPICS * PARTITIONS:,} partitions on {BROKERS} brokers: the answer is {size / 1e6:.1f} MB")
        admin = confluent_admin(sandbox.bootstrap_servers)
        admin.list_topics(timeout=120)  # connected and warm
        kp = KpRaw(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/"

        ratio = compare(
            {"console page (cold)": cold(lambda: get_ok(client, url))},
            {"raw socket read of the Metadata answer": gc_paused(wire_read)},
            shown={
                "raw kafka-python Metadata (decoded in Python)": gc_paused(
                    lambda: kp.send(MetadataRequest(topics=None, allow_auto_topic_creation=False))
                ),
                "raw confluent list_topics (decoded by librdkafka)": gc_paused(
                    lambda: admin.list_topics(timeout=120)
                ),
            },
            note="the wire: the answer's bytes received, nothing decoded",
            runs=RUNS,
        )
    gate("topic_list_cold_1m", ratio, GOAL)


if __name__ == "__main__":
    main()
