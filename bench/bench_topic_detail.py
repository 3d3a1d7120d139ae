"""Topic detail of a 1,000-partition topic vs the raw calls the page needs.

Console: the detail page (Django test client): describe, earliest and latest offsets of every
partition (batched), configs, recent audit events, the 1,000-row table. Raw: confluent-kafka
``describe_topics`` + ``list_offsets`` (earliest, latest) + ``describe_configs`` on a warmed client.
Prints ``RESULT topic_detail ratio=<console/raw> goal<=1.5`` last.
"""

from __future__ import annotations

from bench_topic_list import BROKERS, build_sandbox, compare, get_ok, raw_admin, setup_console, teardown

PARTITIONS = 1_000
TOPIC = "bench.wide"


def main() -> None:
    from confluent_kafka import TopicCollection, TopicPartition
    from confluent_kafka.admin import ConfigResource, OffsetSpec, ResourceType

    sandbox = build_sandbox(topics=0)
    sandbox.create_topic(TOPIC, PARTITIONS, 3)
    try:
        client, cluster = setup_console(sandbox.bootstrap_servers)
        admin = raw_admin(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/{TOPIC}/"

        def raw():
            desc = admin.describe_topics(TopicCollection([TOPIC]), request_timeout=60)[TOPIC].result()
            tps = [TopicPartition(TOPIC, p.id) for p in desc.partitions]
            for spec in (OffsetSpec.earliest(), OffsetSpec.latest()):
                for f in admin.list_offsets({tp: spec for tp in tps}, request_timeout=60).values():
                    f.result()
            for f in admin.describe_configs(
                [ConfigResource(ResourceType.TOPIC, TOPIC)], request_timeout=60
            ).values():
                f.result()

        ours, theirs = compare(lambda: get_ok(client, url), raw)
        print(f"partitions={PARTITIONS} brokers={BROKERS} console_s={ours:.3f} raw_s={theirs:.3f}")
    finally:
        teardown(sandbox)
    print(f"RESULT topic_detail ratio={ours / theirs:.3f} goal<=1.5")


if __name__ == "__main__":
    main()
