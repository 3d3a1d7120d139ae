"""Batch create of 1,000 topics through the console vs the fastest raw batched CreateTopics.

30 brokers, the sandbox in its own process. Console: the batch page (Django test client) with
pasted YAML - parse, policy, one CreateTopics request, the per-topic audit event. Raw floors, on
warmed clients, both waiting for every topic's answer:

* kafka-python's ``CreateTopicsRequest`` of 1,000 topics through kafka-python's own client (the
  request the console sends, at the same version: v4, whose answer has no per-topic configs);
* confluent-kafka ``AdminClient.create_topics`` of 1,000 ``NewTopic`` and every future.

Fresh names every run on every side (the names are made outside the timing) and a clean cluster:
after each run, untimed, its 1,000 topics are deleted (the sandbox's CreateTopics grows slower with
every topic it holds, so without it each run, of either side, was slower than the last). The floor
is the one with the lower median in this run. GC: setup frozen for both sides; 5 alternating runs.
Prints ``RESULT batch_create ratio=<console/floor> goal<=1.3`` last; exit 1 above.
"""

from __future__ import annotations

import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import compare, console_on, gate  # noqa: E402
from bench.raw_clients import KpRaw, confluent_admin  # noqa: E402

COUNT = 1_000
RUNS = 5
GOAL = 1.3


def build_empty():
    from bench.bench_topic_list import build_sandbox

    return build_sandbox(topics=0)


def main() -> None:
    from confluent_kafka.admin import NewTopic
    from kafka.protocol.admin import CreateTopicsRequest

    from console.kafka.topics import CREATE_TOPICS_MAX_VERSION

    counter = itertools.count()
    with console_on(build_empty) as (sandbox, client, cluster):
        admin = confluent_admin(sandbox.bootstrap_servers)
        kp = KpRaw(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/-/batch/"

        def names(prefix: str):
            def make() -> list[str]:
                run = next(counter)
                return [f"{prefix}{run}.t{i:04d}" for i in range(COUNT)]

            return make

        def console(batch: list[str]) -> None:
            text = "".join(f"- {{name: {n}, partitions: 3, rf: 3}}\n" for n in batch)
            response = client.post(url, {"text": text, "format": "yaml", "action": "create"})
            body = response.content.decode()
            if response.status_code != 200 or body.count(">created<") != COUNT:
                raise SystemExit(f"console batch failed: {response.status_code} {body[:500]}")

        def raw_confluent(batch: list[str]) -> None:
            futures = admin.create_topics(
                [NewTopic(n, num_partitions=3, replication_factor=3) for n in batch],
                operation_timeout=60,
                request_timeout=60,
            )
            for f in futures.values():
                f.result()

        T = CreateTopicsRequest.CreatableTopic

        def raw_kafka_python(batch: list[str]) -> None:
            response = kp.send(
                CreateTopicsRequest(
                    topics=[
                        T(name=n, num_partitions=3, replication_factor=3, assignments=[], configs=[])
                        for n in batch
                    ],
                    timeout_ms=60_000,
                    validate_only=False,
                    max_version=CREATE_TOPICS_MAX_VERSION,  # the version the console asks for
                )
            )
            bad = [t.name for t in response.topics if t.error_code]
            assert len(response.topics) == COUNT and not bad, bad[:5]

        def delete(batch: list[str], _result) -> None:
            """Untimed: the run's topics deleted, so every run creates into the same cluster."""
            for f in admin.delete_topics(batch, operation_timeout=60, request_timeout=60).values():
                f.result()

        floors = {
            "raw kafka-python CreateTopics": (names("k"), raw_kafka_python, delete),
            "raw confluent create_topics": (names("r"), raw_confluent, delete),
        }
        ratio = compare(
            {"console batch page": (names("c"), console, delete)},
            floors,
            runs=RUNS,
            note=f"topics={COUNT} per run",
        )
    gate("batch_create", ratio, GOAL)


if __name__ == "__main__":
    main()
