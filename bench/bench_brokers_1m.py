"""The Brokers list page, cold, at 1,000,000 partitions on 200 brokers, against the wire: the raw
reads the page's figures need, in parallel over plain sockets.

Sandbox: 20,000 topics x 50 partitions x RF 3 on 200 brokers (``BENCH_1M_TOPICS`` changes the topic
count), in a process of its own (``harness.RemoteSandbox``). Console side: ``GET /c/<cluster>/brokers/``
(Django test client: middleware, auth, ``brokers.reads.list_brokers``, gateway, template) with the
metadata cache emptied first, so every figure is read again: the whole cluster's Metadata (counts
per broker), DescribeCluster (hosts, racks), DescribeLogDirs with an empty partition filter on
every broker (the dirs' total and usable bytes), and the throttles in effect (DescribeConfigs of
every topic's two throttled-replicas configs and of every broker's two throttle rates, plus the
cluster-wide default), which the page reads once per metadata snapshot.

Floor (``raw_clients.Wire``): those same requests written to plain sockets held open across runs,
all at once (Metadata v12 topics=null, DescribeCluster v2, DescribeConfigs v4 of every topic with
only the two keys and no synonyms, DescribeConfigs of each broker's rates to that broker and of the
default to any, DescribeLogDirs v4 topics=[] to each broker), every answer read whole into a buffer,
nothing decoded: the bytes the page must receive, the sandbox answering them as it answers the
console. GC: setup frozen for both sides; the collector paused around the raw reads as the console
pauses it around its metadata fetch. 5 alternating runs, median gated.
Prints ``RESULT brokers_1m ratio=<console/wire> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_topic_list import build_sandbox  # noqa: E402
from bench.bench_topic_list_cold_1m import BROKERS, PARTITIONS, TOPICS  # noqa: E402 - the 1M estate
from bench.harness import cold, compare, console_on, gate, gc_paused, get_ok  # noqa: E402
from bench.raw_clients import Wire  # noqa: E402

GOAL = 1.5
RUNS = 5
TOPIC_KEYS = ["follower.replication.throttled.replicas", "leader.replication.throttled.replicas"]
BROKER_KEYS = ["follower.replication.throttled.rate", "leader.replication.throttled.rate"]
TOPIC, BROKER = 2, 4  # DescribeConfigs resource types


def raw_requests(names: list[str], brokers: int) -> list:
    """``[(broker index, request, version)]``: every read the page's figures need, at most three per
    broker (the Wire's sockets per broker), so all are in flight at once."""
    from kafka.protocol.admin import DescribeClusterRequest, DescribeConfigsRequest, DescribeLogDirsRequest
    from kafka.protocol.metadata import MetadataRequest

    R = DescribeConfigsRequest.DescribeConfigsResource

    def configs(resources) -> DescribeConfigsRequest:
        return DescribeConfigsRequest(
            resources=[R(resource_type=t, resource_name=n, configuration_keys=k) for t, n, k in resources],
            include_synonyms=False,
            include_documentation=False,
        )

    out = [
        (0, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12),
        (1, DescribeClusterRequest(include_cluster_authorized_operations=False), 0),
        (2, configs([(TOPIC, n, TOPIC_KEYS) for n in names] + [(BROKER, "", BROKER_KEYS)]), 4),
    ]
    for b in range(brokers):
        out.append(
            (b, configs([(BROKER, str(b + 1), BROKER_KEYS)]), 4)
        )  # broker ids are 1..n in address order
        out.append((b, DescribeLogDirsRequest(topics=[]), 4))
    return out


def main() -> None:
    with console_on(build_sandbox, TOPICS, PARTITIONS, BROKERS) as (sandbox, client, cluster):
        wire = Wire(sandbox.bootstrap_servers)
        names = [f"bench.topic-{i:05d}" for i in range(TOPICS)]
        sizes = wire.exchange(raw_requests(names, BROKERS))
        print(
            f"{TOPICS * PARTITIONS:,} partitions on {BROKERS} brokers: {sum(sizes) / 1e6:.1f} MB of answers"
        )
        url = f"/c/{cluster.name}/brokers/"
        body = get_ok(client, url).content.decode()
        assert f"{BROKERS} brokers" in body, body[:2000]
        from django.contrib.auth import get_user_model

        from console.brokers.reads import list_brokers

        listing = list_brokers(actor=get_user_model().objects.get(username="bench"), cluster=cluster)
        assert len(listing.brokers) == BROKERS, len(listing.brokers)
        assert listing.partitions == TOPICS * PARTITIONS, listing.partitions
        assert sum(b.counts.replicas for b in listing.brokers) == TOPICS * PARTITIONS * 3
        assert all(b.log_dirs and b.log_dirs_error is None for b in listing.brokers)

        ratio = compare(
            {"console Brokers page (cold)": cold(lambda: get_ok(client, url))},
            {
                "raw socket reads of the same answers (in parallel)": gc_paused(
                    lambda: wire.exchange(raw_requests(names, BROKERS))
                )
            },
            note="the wire: the answers' bytes received, nothing decoded",
            runs=RUNS,
        )
    gate("brokers_1m", ratio, GOAL)


if __name__ == "__main__":
    main()
