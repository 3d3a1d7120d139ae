"""Topic detail of a 1,000-partition topic vs the fastest raw calls the page makes.

Estate: 30 brokers, one topic ``bench.wide`` of 1,000 partitions x RF 3, the sandbox in its own
process. The console's database holds ``BENCH_AUDIT_EVENTS`` (default 1,000,000) hash-chained audit
events (``bench_audit_search.fill``, other clusters' topics) and then 200 events recorded on this
cluster through ``audit.record`` (100 naming ``bench.wide``, 100 naming other topics), as a
long-lived console's trail would (untimed setup; issue 19: "topic_detail at 1M audit events").
Console: the detail page (Django test client): describe, earliest and latest offsets of
every partition (batched per leader), configs, recent audit events, the 1,000-row table.
Raw floors, on warmed clients, each making the page's Kafka calls in the page's order:

* kafka-python (the client the console uses for these calls): ``MetadataRequest`` of the topic,
  then one ``ListOffsetsRequest`` per leader and timestamp (earliest, latest) all in flight
  together, then ``DescribeConfigsRequest`` of the topic;
* confluent-kafka: ``describe_topics`` + ``list_offsets`` (earliest, latest) + ``describe_configs``
  (the client the project dropped for these calls: its ListOffsets grows super-linearly).

The floor is the one with the lower median in this run (printed). GC: setup frozen for both
sides; 15 alternating runs (a run is ~0.1 s, so the median can afford more of them than the
harness's 7: its per-run spread is 1.3-2.0), min / median / max printed.
Prints ``RESULT topic_detail ratio=<console/floor> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import compare, console_on, gate, get_ok  # noqa: E402
from bench.raw_clients import KpRaw, confluent_admin, raw_list_offsets  # noqa: E402

BROKERS = 30
PARTITIONS = 1_000
TOPIC = "bench.wide"
GOAL = 1.5
RUNS = 15
EVENTS = int(os.environ.get("BENCH_AUDIT_EVENTS", "1000000"))


def build_wide():
    from bench.bench_topic_list import build_sandbox

    cluster = build_sandbox(topics=0)
    cluster.create_topic(TOPIC, PARTITIONS, 3)
    return cluster


def kafka_python_raw(bootstrap: str):
    from kafka.protocol.admin import DescribeConfigsRequest
    from kafka.protocol.metadata import MetadataRequest

    kp = KpRaw(bootstrap)

    def raw() -> None:
        md = kp.send(
            MetadataRequest(
                topics=[MetadataRequest.MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False
            )
        )
        by_leader = defaultdict(list)
        for p in md.topics[0].partitions:
            by_leader[p.leader_id].append(p.partition_index)
        requests = [
            (raw_list_offsets({TOPIC: parts}, ts), leader)
            for ts in (-2, -1)
            for leader, parts in by_leader.items()
        ]
        answers = kp.send_many(requests)
        assert sum(len(t.partitions) for a in answers for t in a.topics) == 2 * PARTITIONS
        R = DescribeConfigsRequest.DescribeConfigsResource
        kp.send(
            DescribeConfigsRequest(
                resources=[R(resource_type=2, resource_name=TOPIC, configuration_keys=None)],
                include_synonyms=True,
                include_documentation=True,
            )
        )

    return raw


def confluent_raw(bootstrap: str):
    from confluent_kafka import TopicCollection, TopicPartition
    from confluent_kafka.admin import ConfigResource, OffsetSpec, ResourceType

    admin = confluent_admin(bootstrap)

    def raw() -> None:
        desc = admin.describe_topics(TopicCollection([TOPIC]), request_timeout=60)[TOPIC].result()
        tps = [TopicPartition(TOPIC, p.id) for p in desc.partitions]
        for spec in (OffsetSpec.earliest(), OffsetSpec.latest()):
            for f in admin.list_offsets({tp: spec for tp in tps}, request_timeout=60).values():
                f.result()
        for f in admin.describe_configs(
            [ConfigResource(ResourceType.TOPIC, TOPIC)], request_timeout=60
        ).values():
            f.result()

    return raw


def fill_audit(cluster) -> int:
    """EVENTS chained events (other clusters) + 200 recorded on this cluster; the newest naming the topic."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from bench.bench_audit_search import fill
    from console.audit.store import record

    with connection.cursor() as cur:  # the few setup events make way for a chain of EVENTS from id 1
        cur.execute("DELETE FROM console_audittarget")
        cur.execute("DELETE FROM console_auditevent")
    started = time.perf_counter()
    fill(EVENTS)
    user = get_user_model().objects.get(username="bench")
    for i in range(100):
        with transaction.atomic():
            record(actor=user, action="topic.create", cluster=cluster, targets=[f"topic:bench.other-{i:04d}"])
        with transaction.atomic():
            newest = record(
                actor=user,
                action="config.alter",
                cluster=cluster,
                targets=[f"topic:{TOPIC}"],
                params={"note": f"bench.note.{i:04d}"},
                outcome="success",
            )
    print(f"filled {EVENTS:,} + 200 audit events in {time.perf_counter() - started:.0f}s", flush=True)
    return newest.pk


def main() -> None:
    with console_on(build_wide) as (sandbox, client, cluster):
        newest = fill_audit(cluster)
        url = f"/c/{cluster.name}/topics/{TOPIC}/"
        body = get_ok(client, url).content.decode()
        events = body.split('id="topic-events"', 1)[-1]
        assert f"<td>{newest}</td>" in events, "the page does not list the topic's newest audit event"
        floors = {
            "raw kafka-python": kafka_python_raw(sandbox.bootstrap_servers),
            "raw confluent-kafka": confluent_raw(sandbox.bootstrap_servers),
        }
        ratio = compare(
            {"console detail page": lambda: get_ok(client, url)},
            floors,
            runs=RUNS,
            note=f"partitions={PARTITIONS} brokers={BROKERS}",
        )
    gate("topic_detail", ratio, GOAL)


if __name__ == "__main__":
    main()
