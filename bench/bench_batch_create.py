"""Batch create of 1,000 topics from YAML through the console vs the fastest parse + batched CreateTopics.

30 brokers, the sandbox in its own process. Every side starts from the same pasted YAML text (one
flow mapping per topic: ``- {name: ..., partitions: 3, rf: 3}``), made outside the timing with fresh
names every run. Console: the batch page (Django test client) with the text - parse, policy, one
CreateTopics request, the per-topic audit event. Raw floors, on warmed clients, both timing the
same text's parse and waiting for every topic's answer:

* the text parsed by libyaml's C loader (``yaml.load(text, Loader=yaml.CSafeLoader)``, the fastest
  parse of YAML in Python: every path from pasted YAML to topics parses it), then kafka-python's
  ``CreateTopicsRequest`` of the 1,000 topics through kafka-python's own client (the request the
  console sends, at the same version: v4, whose answer has no per-topic configs);
* the same parse, then confluent-kafka ``AdminClient.create_topics`` of 1,000 ``NewTopic`` and
  every future.

A clean cluster for every run: after each run, untimed, its 1,000 topics are deleted (the
sandbox's CreateTopics grows slower with every topic it holds, so without it each run, of either
side, was slower than the last). The floor is the one with the lower median in this run; the
parse alone is timed and printed too. GC: setup frozen for both sides; 5 alternating runs.
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
    import yaml
    from confluent_kafka.admin import NewTopic
    from kafka.protocol.admin import CreateTopicsRequest

    from console.kafka.topics import CREATE_TOPICS_MAX_VERSION

    counter = itertools.count()
    with console_on(build_empty) as (sandbox, client, cluster):
        admin = confluent_admin(sandbox.bootstrap_servers)
        kp = KpRaw(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/-/batch/"

        def names(prefix: str):
            """Fresh names and the YAML a user pastes for them (untimed)."""

            def make() -> tuple[list[str], str]:
                run = next(counter)
                batch = [f"{prefix}{run}.t{i:04d}" for i in range(COUNT)]
                return batch, "".join(f"- {{name: {n}, partitions: 3, rf: 3}}\n" for n in batch)

            return make

        def parse(text: str) -> list[dict]:
            """The fastest parse of the text: libyaml's C loader, safe tags only."""
            items = yaml.load(text, Loader=yaml.CSafeLoader)
            assert len(items) == COUNT
            return items

        def console(made: tuple[list[str], str]) -> None:
            _batch, text = made
            response = client.post(url, {"text": text, "format": "yaml", "action": "create"})
            body = response.content.decode()
            if response.status_code != 200 or body.count(">created<") != COUNT:
                raise SystemExit(f"console batch failed: {response.status_code} {body[:500]}")

        def raw_confluent(made: tuple[list[str], str]) -> None:
            futures = admin.create_topics(
                [
                    NewTopic(t["name"], num_partitions=t["partitions"], replication_factor=t["rf"])
                    for t in parse(made[1])
                ],
                operation_timeout=60,
                request_timeout=60,
            )
            for f in futures.values():
                f.result()

        T = CreateTopicsRequest.CreatableTopic

        def raw_kafka_python(made: tuple[list[str], str]) -> None:
            response = kp.send(
                CreateTopicsRequest(
                    topics=[
                        T(
                            name=t["name"],
                            num_partitions=t["partitions"],
                            replication_factor=t["rf"],
                            assignments=[],
                            configs=[],
                        )
                        for t in parse(made[1])
                    ],
                    timeout_ms=60_000,
                    validate_only=False,
                    max_version=CREATE_TOPICS_MAX_VERSION,  # the version the console asks for
                )
            )
            bad = [t.name for t in response.topics if t.error_code]
            assert len(response.topics) == COUNT and not bad, bad[:5]

        def delete(made: tuple[list[str], str], _result) -> None:
            """Untimed: the run's topics deleted, so every run creates into the same cluster."""
            for f in admin.delete_topics(made[0], operation_timeout=60, request_timeout=60).values():
                f.result()

        floors = {
            "raw C-YAML parse + kafka-python CreateTopics": (names("k"), raw_kafka_python, delete),
            "raw C-YAML parse + confluent create_topics": (names("r"), raw_confluent, delete),
        }
        ratio = compare(
            {"console batch page": (names("c"), console, delete)},
            floors,
            runs=RUNS,
            shown={"the C-YAML parse alone": (names("p"), lambda made: parse(made[1]))},
            note=f"topics={COUNT} per run",
        )
    gate("batch_create", ratio, GOAL)


if __name__ == "__main__":
    main()
