"""Cluster overview page at 20,000 topics and 1,000,000 audit events vs the fastest raw calls it makes.

Estate: ``bench_topic_list.build_sandbox`` (30 brokers, 20,000 topics x 5 partitions x RF 3) in a
process of its own; the console's database holds ``BENCH_AUDIT_EVENTS`` (default 1,000,000)
hash-chained audit events (``bench_audit_search.fill``), as a long-lived console's would.

Console side: ``GET /c/<cluster>/`` through Django's test client (middleware, auth, the view,
``brokers.overview.cluster_overview``: DescribeCluster, the full metadata for the topic and partition
counts and health, DescribeQuorum for the active controller, an ApiVersions to every broker; the
template), cold: the page keeps its figures with the metadata snapshot, which is emptied before each
console run (``overview_1m`` times the warm view too).
Raw floors, on warmed clients, the same three reads:

* kafka-python's own client: ``DescribeClusterRequest``, full ``MetadataRequest``,
  ``DescribeQuorumRequest``;
* confluent-kafka ``describe_cluster()`` + ``list_topics()`` + kafka-python's
  ``DescribeQuorumRequest`` (confluent-kafka has none);
* the wire (``raw_clients.Wire``, as ``overview_1m``): the same reads and an ApiVersions to each
  broker written to plain sockets at once, every answer read whole, nothing decoded - the console
  decodes its Metadata in C, faster than either client, so a client's decoding is no floor for it.

Both floors count partitions, under-replicated and offline partitions from the answer, as the page
counts them (offline: no leader; under-replicated: ISR shorter than the replicas; until 2026-11 the
floors also checked every partition's replicas against the live brokers, a set test per partition
the page does not make, ~0.015 s of ~0.3 s at 100,000 partitions, in the console's favour). The floor is the faster in this run. GC: setup frozen for both sides, collector on for
both (the overview does not pause it). 7 alternating runs; min / median / max.
Prints ``RESULT overview_page ratio=<console/floor> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import cold, compare, console_on, gate, gc_paused, get_ok  # noqa: E402
from bench.raw_clients import KpRaw, Wire, confluent_admin  # noqa: E402

EVENTS = int(os.environ.get("BENCH_AUDIT_EVENTS", "1000000"))
GOAL = 1.5


def floors(bootstrap: str):
    from kafka.protocol.admin import DescribeClusterRequest, DescribeQuorumRequest
    from kafka.protocol.metadata import MetadataRequest

    kp = KpRaw(bootstrap)
    admin = confluent_admin(bootstrap)
    T = DescribeQuorumRequest.TopicData

    def quorum() -> int:
        request = DescribeQuorumRequest(
            topics=[T(topic_name="__cluster_metadata", partitions=[T.PartitionData(partition_index=0)])]
        )
        return kp.send(request).topics[0].partitions[0].leader_id

    def kafka_python() -> tuple:
        brokers = kp.send(DescribeClusterRequest(include_cluster_authorized_operations=False)).brokers
        md = kp.send(MetadataRequest(topics=None, allow_auto_topic_creation=False))
        parts = under = offline = 0
        for t in md.topics:
            for p in t.partitions:
                parts += 1
                under += len(p.isr_nodes) < len(p.replica_nodes)
                offline += p.leader_id < 0
        return len(brokers), len(md.topics), parts, under, offline, quorum()

    def confluent() -> tuple:
        info = admin.describe_cluster(request_timeout=60).result()
        md = admin.list_topics(timeout=60)
        parts = under = offline = 0
        for t in md.topics.values():
            for p in t.partitions.values():
                parts += 1
                under += len(p.isrs) < len(p.replicas)
                offline += p.leader < 0
        return len(info.nodes), len(md.topics), parts, under, offline, quorum()

    return {"raw kafka-python": kafka_python, "raw confluent + kafka-python DescribeQuorum": confluent}


def wire_floor(bootstrap: str, brokers: int):
    """The page's reads over plain sockets, nothing decoded (``overview_1m``'s floor)."""
    from bench.bench_overview_1m import raw_requests

    wire = Wire(bootstrap)
    return gc_paused(lambda: wire.exchange(raw_requests(brokers)))


def main() -> None:
    from bench.bench_topic_list import PARTITIONS, TOPICS, build_sandbox

    started = time.perf_counter()
    with console_on(build_sandbox) as (sandbox, client, cluster):
        from django.db import connection

        from bench.bench_audit_search import fill

        with connection.cursor() as cur:  # the few setup events make way for a chain of EVENTS from id 1
            cur.execute("DELETE FROM console_audittarget")
            cur.execute("DELETE FROM console_auditevent")
        t = time.perf_counter()
        fill(EVENTS)
        print(f"filled {EVENTS:,} audit events in {time.perf_counter() - t:.0f}s", flush=True)
        raw = floors(sandbox.bootstrap_servers)
        for name, fn in raw.items():
            got = fn()
            assert got[1:3] == (TOPICS, TOPICS * PARTITIONS), (name, got)
        url = f"/c/{cluster.name}/"
        body = get_ok(client, url).content.decode()
        assert f"{TOPICS:,}" in body or str(TOPICS) in body, "the page does not show the topic count"
        _, topics, parts, under, offline, leader = raw["raw confluent + kafka-python DescribeQuorum"]()
        shown = dict(re.findall(r'<div class="label">([^<]+)</div><div class="value">([^<]*)</div>', body))
        expected = {
            "Topics": topics,
            "Partitions": parts,
            "Under-replicated": under,
            "Offline partitions": offline,
        }
        assert {k: shown.get(k) for k in expected} == {k: str(v) for k, v in expected.items()}, shown
        assert shown.get("Active controller") == str(leader), shown
        from bench.bench_topic_list import BROKERS

        ratio = compare(
            {"console overview page (cold)": cold(lambda: get_ok(client, url))},
            {**raw, "raw socket reads (in parallel)": wire_floor(sandbox.bootstrap_servers, BROKERS)},
            note=f"set up in {time.perf_counter() - started:.0f}s",
        )
    gate("overview_page", ratio, GOAL)


if __name__ == "__main__":
    main()
