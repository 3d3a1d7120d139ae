"""Telemetry snapshot of a sandbox vs the fastest raw requests for the same data.

Sandbox: ``BENCH_PARTITIONS_TOPICS`` (default 300) topics x 100 partitions x RF 2 on 6 brokers, data
in two logs of three, in a process of its own. Default 30,000 partitions so that 5 alternating runs
stay within a few minutes; ``BENCH_PARTITIONS_TOPICS=1000`` gives the 100,000-partition case.

Console: the whole ``collect_snapshot`` service (Metadata, ListOffsets latest and earliest per
leader, DescribeLogDirs per broker, the topics' retention configs, the groups' committed offsets,
Arrow columns, three Parquet files written atomically), a fresh interval each run.
Raw floors, the same data with no console code, on warmed clients:

* kafka-python's own client: full ``MetadataRequest``, reduced to the partitions per leader and
  dropped; then all in flight together: first one ``DescribeLogDirsRequest`` per broker, one
  ``DescribeConfigsRequest`` of every topic (retention.ms, retention.bytes) and ``ListGroupsRequest``
  per broker (the sandbox has no groups, so no OffsetFetch follows), then, built while the brokers
  answer those, one ``ListOffsetsRequest`` per leader and timestamp (latest, earliest); each answer
  is reduced (counted) and dropped as it arrives. The console overlaps these reads the same way
  (its log dirs go out on a helper thread while it builds the ListOffsets) and reduces each answer
  as it reads it. Earlier floors were not the fastest way to make the same calls: sent round after
  round they measured 0.85; sent all at once with the ListOffsets built first, 0.90-0.96 (the log
  dirs, the brokers' longest work, left ~150-190 ms later than the console's: kafka-python encodes
  a request on its one I/O thread, 10-18 ms per ListOffsets of 5,000 partitions);
* the same with the metadata read by confluent-kafka's ``list_topics()`` (confluent-kafka has no
  DescribeLogDirs, so it cannot make the whole set alone).

The floor is the faster in this run. GC: setup frozen for both sides; 5 alternating runs; min /
median / max. Prints ``RESULT telemetry_snapshot ratio=<snapshot/floor> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import compare, console_on, gate  # noqa: E402
from bench.raw_clients import KpRaw, confluent_admin, raw_list_offsets  # noqa: E402

TOPICS = int(os.environ.get("BENCH_PARTITIONS_TOPICS", 300))
PARTITIONS, RF, BROKERS = 100, 2, 6
RUNS = 5
GOAL = 1.5


def build_sandbox():
    from sandbox.cluster import SandboxCluster

    sandbox = SandboxCluster(brokers=BROKERS, controllers=1, port=0, speed=0, seed="bench-telemetry")
    sandbox.start()
    for i in range(TOPICS):
        name = f"bench.t{i:04d}"
        sandbox.create_topic(name, PARTITIONS, RF)
        sandbox.produce_synthetic(name, 1_000_000 if i % 3 else 0)
    sandbox.advance(2)
    return sandbox


def raw_floors(bootstrap: str):
    from kafka.protocol.admin import DescribeConfigsRequest, DescribeLogDirsRequest, ListGroupsRequest
    from kafka.protocol.metadata import MetadataRequest

    kp = KpRaw(bootstrap)
    admin = confluent_admin(bootstrap)
    R = DescribeConfigsRequest.DescribeConfigsResource

    def rest(by_leader: dict, topics: list[str], brokers: list[int]) -> None:
        # Cheap to build, long for the brokers to answer: out first, so the brokers work on them
        # while the ListOffsets (60,000 partitions at the default size) are built and encoded.
        first = [(DescribeLogDirsRequest(topics=None), b) for b in brokers]
        first.append(
            (
                DescribeConfigsRequest(
                    resources=[
                        R(
                            resource_type=2,
                            resource_name=t,
                            configuration_keys=["retention.ms", "retention.bytes"],
                        )
                        for t in topics
                    ],
                    include_synonyms=False,
                    include_documentation=False,
                ),
                None,
            )
        )
        first += [(ListGroupsRequest(), b) for b in brokers]
        answers = kp.start(first)
        offsets = [
            (raw_list_offsets(by_topic, ts), leader)
            for ts in (-1, -2)
            for leader, by_topic in by_leader.items()
        ]
        answers.add(offsets)
        del offsets
        # each answer reduced (counted) and dropped as it arrives, as the console reduces its own
        n_offsets = n_replicas = 0
        for i, answer in answers:
            if i < len(brokers):
                n_replicas += sum(len(t.partitions) for r in answer.results for t in r.topics)
            elif i >= len(first):
                n_offsets += sum(len(t.partitions) for t in answer.topics)
            del answer
        assert n_offsets == 2 * TOPICS * PARTITIONS, n_offsets
        assert n_replicas == TOPICS * PARTITIONS * RF, n_replicas

    def kafka_python() -> None:
        md = kp.send(MetadataRequest(topics=None, allow_auto_topic_creation=False))
        by_leader = defaultdict(lambda: defaultdict(list))
        for t in md.topics:
            for p in t.partitions:
                by_leader[p.leader_id][t.name].append(p.partition_index)
        topics, brokers = [t.name for t in md.topics], [b.node_id for b in md.brokers]
        del md  # the answer reduced to what the rest needs, as the console drops librdkafka's
        rest(by_leader, topics, brokers)

    def confluent_metadata() -> None:
        md = admin.list_topics(timeout=60)
        by_leader = defaultdict(lambda: defaultdict(list))
        for name, t in md.topics.items():
            for p in t.partitions.values():
                by_leader[p.leader][name].append(p.id)
        topics, brokers = list(md.topics), list(md.brokers)
        del md
        rest(by_leader, topics, brokers)

    return {
        "raw kafka-python (all requests)": kafka_python,
        "raw confluent Metadata + kafka-python rest": confluent_metadata,
    }


def main() -> None:
    with console_on(build_sandbox, timeout_s=300) as (sandbox, _client, cluster):
        os.environ["TELEMETRY_LAKE_DIR"] = os.path.join(os.environ["CONSOLE_VAR_DIR"], "lake")
        from console.clusters.actions import gateway_for
        from console.telemetry import snapshots as telemetry

        gateway_for(cluster).describe_cluster()  # connections up, like a long-lived worker
        floors = raw_floors(sandbox.bootstrap_servers)
        stamps = itertools.count()
        base = datetime(2026, 1, 1, tzinfo=UTC)
        results = []

        def console() -> None:
            now = base + timedelta(minutes=5 * next(stamps))
            result = telemetry.collect_snapshot(cluster=cluster, now=now, force=True)
            assert result.partitions == TOPICS * PARTITIONS and not result.errors, result.errors
            results.append(result)

        ratio = compare(
            {"console collect_snapshot": console},
            floors,
            runs=RUNS,
            note=f"partitions={TOPICS * PARTITIONS} brokers={BROKERS}",
        )
        last = results[-1]
        print(
            f"last snapshot: requests {last.rpc_seconds:.3f}s of {last.total_seconds:.3f}s (the console's own split)"
        )
    gate("telemetry_snapshot", ratio, GOAL)


if __name__ == "__main__":
    main()
