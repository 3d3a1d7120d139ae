"""One progress poll cycle for 10,000 moving partitions vs the raw calls it makes.

Same sandbox as ``bench_reassign_submit`` (30 brokers, 100,000 partitions, its own process). A
10,000-partition reassignment is submitted through the console's service path, then the clock moves
so every partition is part way. Console side: ``reassignment.poll.poll_once`` (ListPartitionReassignments,
DescribeLogDirs per involved broker, KIP-179 states, per-partition rows, totals, rate/ETA,
heartbeat). Raw side: the same requests through kafka-python's own client (the console's client
for them; confluent-kafka has neither request): ListPartitionReassignments of the 10,000
partitions, then one DescribeLogDirs per involved broker naming only the moving partitions it
hosts or will host (original or target replica), all in flight together. GC: setup frozen for both
sides; 9 alternating runs, min / median / max printed. Goals, both gated: the median ratio <= 1.5
and the console's median cycle under 1 s.
Prints ``RESULT progress_poll ratio=<console/raw> goal<=1.5`` last; exit 1 when either is missed.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_reassign_submit import console_submit, plan_for, setup  # noqa: E402
from bench.harness import KpRaw, alternate, freeze, gate, teardown  # noqa: E402

RUNS = 9
GOAL = 1.5
ABSOLUTE_S = 1.0


def main() -> None:
    from kafka.protocol.admin import DescribeLogDirsRequest, ListPartitionReassignmentsRequest

    sandbox, cluster_row, actor, gw, _client = setup("bench-poll")
    try:
        from console.reassignment import poll as reassign_poll

        _, r = console_submit(cluster_row, actor, plan_for(0))
        sandbox.advance(1)  # every new replica has copied a little, none is done
        rows = list(r.partitions.all())
        brokers = sorted({b for x in rows for b in (*x.original, *x.target)})
        kp = KpRaw(sandbox.bootstrap_servers)
        LT = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
        DT = DescribeLogDirsRequest.DescribableLogDirTopic

        def raw() -> None:
            by_topic = defaultdict(list)
            by_broker = defaultdict(lambda: defaultdict(list))
            for x in rows:
                by_topic[x.topic].append(x.partition)
                for b in {*x.original, *x.target}:
                    by_broker[b][x.topic].append(x.partition)
            listed = kp.send(
                ListPartitionReassignmentsRequest(
                    timeout_ms=60_000, topics=[LT(name=t, partition_indexes=ps) for t, ps in by_topic.items()]
                )
            )
            assert sum(len(t.partitions) for t in listed.topics) == len(rows)
            kp.send_many(
                [
                    (
                        DescribeLogDirsRequest(
                            topics=[DT(topic=t, partitions=ps) for t, ps in topics.items()]
                        ),
                        b,
                    )
                    for b, topics in by_broker.items()
                ]
            )

        def console() -> None:
            reassign_poll.poll_once(r)

        freeze()
        m = alternate(
            {"console poll_once": console, "raw ListPartitionReassignments + DescribeLogDirs": raw}, runs=RUNS
        )
        r.refresh_from_db()
        assert r.partitions.filter(state="moving").count() == len(rows), (
            "partitions finished during the bench"
        )
        assert 0 < r.bytes_done < r.bytes_total
        print(f"{len(rows)} moving partitions over {len(brokers)} brokers")
        m.report()
        print(m.ratios("console poll_once", "raw ListPartitionReassignments + DescribeLogDirs"))
        c = m.median("console poll_once")
        ratio = c / m.median("raw ListPartitionReassignments + DescribeLogDirs")
    finally:
        teardown(sandbox)
    gate("progress_poll", ratio, GOAL, [("console poll cycle seconds (< 1 s)", c, ABSOLUTE_S)])


if __name__ == "__main__":
    main()
