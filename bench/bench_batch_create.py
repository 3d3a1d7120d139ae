"""Batch create of 1,000 topics through the console vs one raw batched ``create_topics``.

Console: the batch page (Django test client) with pasted YAML — parse, policy, one CreateTopics
request, the per-topic audit event. Raw: confluent-kafka ``AdminClient.create_topics`` of 1,000
NewTopics and waiting on every future. Different names each run on a 30-broker sandbox.
Prints ``RESULT batch_create ratio=<console/raw> goal<=1.3`` last.
"""

from __future__ import annotations

import itertools

from bench_topic_list import BROKERS, build_sandbox, compare, raw_admin, setup_console, teardown

COUNT = 1_000
RUNS = 5


def main() -> None:
    from confluent_kafka.admin import NewTopic

    sandbox = build_sandbox(topics=0)
    counter = itertools.count()
    try:
        client, cluster = setup_console(sandbox.bootstrap_servers)
        admin = raw_admin(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/-/batch/"

        def console():
            run = next(counter)
            text = "".join(f"- {{name: c{run}.t{i:04d}, partitions: 3, rf: 3}}\n" for i in range(COUNT))
            response = client.post(url, {"text": text, "format": "yaml", "action": "create"})
            body = response.content.decode()
            if response.status_code != 200 or body.count(">created<") != COUNT:
                raise SystemExit(f"console batch failed: {response.status_code} {body[:500]}")

        def raw():
            run = next(counter)
            futures = admin.create_topics(
                [NewTopic(f"r{run}.t{i:04d}", num_partitions=3, replication_factor=3) for i in range(COUNT)],
                operation_timeout=60,
                request_timeout=60,
            )
            for f in futures.values():
                f.result()

        ours, theirs = compare(console, raw, runs=RUNS)
        print(f"topics={COUNT} brokers={BROKERS} console_s={ours:.3f} raw_create_topics_s={theirs:.3f}")
    finally:
        teardown(sandbox)
    print(f"RESULT batch_create ratio={ours / theirs:.3f} goal<=1.3")


if __name__ == "__main__":
    main()
