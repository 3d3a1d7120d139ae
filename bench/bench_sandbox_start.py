"""Start a 50-broker sandbox and load 100,000 partitions; goal: under 10 s.

Prints ``RESULT sandbox_start ratio=<seconds/10> goal<=1.0`` last.
"""

from __future__ import annotations

import os
import sys
import time

from sandbox import SandboxCluster

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import gate  # noqa: E402

BROKERS = 50
TOPICS = 10_000
PARTITIONS_PER_TOPIC = 10
REPLICATION_FACTOR = 3
TARGET_S = 10.0


def build() -> tuple[SandboxCluster, float]:
    """Start the cluster and create the topics; return it with the seconds it took."""
    start = time.perf_counter()
    cluster = SandboxCluster(
        brokers=BROKERS,
        controllers=3,
        port=0,
        speed=10.0,
        racks=[f"rack-{i}" for i in range(5)],
        seed="bench",
    )
    cluster.start()
    for i in range(TOPICS):
        cluster.create_topic(f"bench.topic-{i:05d}", PARTITIONS_PER_TOPIC, REPLICATION_FACTOR)
    return cluster, time.perf_counter() - start


def main() -> None:
    cluster, seconds = build()
    try:
        parts = sum(len(t.partitions) for t in cluster.state.topics.values())
        print(
            f"brokers={BROKERS} partitions={parts} start_s={seconds:.2f} target_s={TARGET_S} "
            f"(process cpu {time.process_time():.2f}s; wall time counts, a loaded host inflates it)"
        )
    finally:
        cluster.shutdown()
    gate("sandbox_start", seconds / TARGET_S, 1.0)


if __name__ == "__main__":
    main()
