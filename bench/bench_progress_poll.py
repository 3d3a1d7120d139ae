"""One progress poll cycle for 10,000 moving partitions vs the raw calls it makes.

Same sandbox as ``bench_reassign_submit`` (30 brokers, 100,000 partitions, its own process). A 10,000-partition
reassignment is submitted through the console, then the clock moves so every partition is part
way. The console side is ``reassignment.poll.poll_once`` (ListPartitionReassignments, DescribeLogDirs
per involved broker, KIP-179 states, per-partition rows, totals, rate/ETA, heartbeat); the raw
side is the same ListPartitionReassignments + DescribeLogDirs calls through the gateway (each
broker's DescribeLogDirs names only the moving partitions it hosts or will host, as the poll's).
Medians. Prints ``RESULT progress_poll ratio=<console/raw> goal<=1.5`` last (and checks < 1 s).
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_reassign_submit import console_submit, plan_for, setup  # noqa: E402

RUNS = 9


def main() -> None:
    sandbox, cluster_row, actor, gw = setup("bench-poll")
    try:
        from console.kafka import TopicPartition
        from console.reassignment import poll as reassign_poll
        from console.reassignment.progress import hosts

        _, r = console_submit(cluster_row, actor, plan_for(0))
        sandbox.advance(1)  # every new replica has copied a little, none is done
        rows = list(r.partitions.all())
        tps = [TopicPartition(x.topic, x.partition) for x in rows]
        brokers = sorted({b for x in rows for b in (*x.original, *x.target)})
        # The same requests the poll makes: each broker is asked about the partitions it may host.
        by_broker = hosts((TopicPartition(x.topic, x.partition), x.original, x.target) for x in rows)

        def raw() -> None:
            gw.list_partition_reassignments(tps)
            gw.describe_log_dirs(partitions=by_broker)

        def console() -> None:
            reassign_poll.poll_once(r)

        console()
        raw()
        console_times, raw_times = [], []
        for _ in range(RUNS):
            start = time.perf_counter()
            console()
            console_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            raw()
            raw_times.append(time.perf_counter() - start)
        r.refresh_from_db()
        assert r.partitions.filter(state="moving").count() == len(rows), (
            "partitions finished during the bench"
        )
        assert 0 < r.bytes_done < r.bytes_total
        c, w = statistics.median(console_times), statistics.median(raw_times)
        print(
            f"console poll cycle ({len(rows)} partitions, {len(brokers)} brokers): median {c:.3f}s {console_times}"
        )
        print(f"raw ListPartitionReassignments + DescribeLogDirs:       median {w:.3f}s {raw_times}")
        print(f"under one second: {'yes' if c < 1.0 else 'NO'}")
        print(f"RESULT progress_poll ratio={c / w:.2f} goal<=1.5")
    finally:
        from bench.bench_topic_list import teardown

        teardown(sandbox)


if __name__ == "__main__":
    main()
