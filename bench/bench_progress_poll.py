"""One progress poll cycle for 10,000 moving partitions vs the raw calls it must make.

Same sandbox as ``bench_reassign_submit`` (30 brokers, 100,000 partitions, its own process). A
10,000-partition reassignment is submitted through the console's service path, then the clock moves
so every partition is part way (and stays so: the sandbox's clock is stopped). Console side:
``reassignment.poll.poll_once`` (ListPartitionReassignments, DescribeLogDirs per involved broker,
the ISR of replicas level with their leader, KIP-179 states, totals, rate/ETA, heartbeat).

Floor: the requests a cycle cannot do without, through kafka-python's own client (confluent-kafka
has neither ListPartitionReassignments nor DescribeLogDirs): ListPartitionReassignments of the
10,000 partitions, one DescribeLogDirs per involved broker naming only the moving partitions it
hosts or will host, and one Metadata request of the moving partitions' topics, all in flight
together (as the console sends them; the listing went first, a round trip ahead, before). The Metadata is in the floor because the console must read the ISR every cycle
while a target replica is level with its leader ("In sync" only once Kafka lists it in the ISR,
tests/contract/test_progress.py), and here every partition keeps two in-sync replicas, so the
cycle needs the ISR of all 100 topics (100,000 partitions: 1.1-1.7 s of Metadata on this
machine, more than the rest of the floor). A second floor gets that Metadata from confluent-kafka
(a whole-cluster ``list_topics``, here the same 100 topics) in a thread while kafka-python reads
the listing and the log dirs. A third reads the listing and the log dirs through kafka-python (the
console decodes those the same way) while the same Metadata request's answer is read off a plain
socket, nothing decoded (``raw_clients.Wire``: the console decodes its Metadata in C, faster than
either client, so a client's decoding is no floor for it); its ListOffsets use leaders read once,
untimed. The fastest floor is used.

The leaders' offsets (the "~N messages" estimates) are read every ``OFFSETS_EVERY_S`` (10 s) at a
cycle a second: a cycle without them and a cycle with them are timed apart (the console with
``OFFSETS_EVERY_S`` set to never / always; the floors adding ListOffsets earliest and latest per
leader, all in flight together, leaders from their Metadata), and the gated time per cycle is the
steady state: plain + (with offsets - plain) x POLL_INTERVAL_S / OFFSETS_EVERY_S, for both sides.
(Before, the timed cycles fell in whatever offsets window the clock gave, and the floor had no
Metadata at all.) GC: setup frozen for both sides, and the cyclic collector paused during a cycle
on both sides (the console pauses it for its cycle); 9 alternating runs of plain cycles, 5 of cycles
with offsets, min / median / max printed. Goals, both gated: the steady-state ratio <= 1.5 and the
console's steady-state cycle under 1 s.
Prints ``RESULT progress_poll ratio=<console/floor> goal<=1.5`` last; exit 1 when either is missed.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_reassign_submit import (  # noqa: E402
    PARTITIONS_PER_TOPIC,
    SCALE_1M,
    TOPICS,
    console_submit,
    plan_for,
    setup,
)
from bench.harness import alternate, freeze, gate, gc_paused, teardown  # noqa: E402
from bench.raw_clients import KpRaw, Wire, confluent_admin, raw_list_offsets  # noqa: E402

RUNS = 9
OFFSET_RUNS = 5
GOAL = 1.5
ABSOLUTE_S = 1.0
CONSOLE = "console poll_once"
KP = "floor: LPR + DescribeLogDirs + Metadata in flight (kafka-python)"
CK = "floor: LPR + DescribeLogDirs (kafka-python) || list_topics (confluent)"
WI = "floor: LPR + DescribeLogDirs (kafka-python) || Metadata bytes (wire)"


def main(name: str = "progress_poll", absolute_s: float | None = ABSOLUTE_S) -> None:
    from kafka.protocol.admin import DescribeLogDirsRequest, ListPartitionReassignmentsRequest
    from kafka.protocol.metadata import MetadataRequest

    sandbox, cluster_row, actor, gw, _client = setup("bench-poll")
    try:
        from console.reassignment import poll as reassign_poll

        _, r = console_submit(cluster_row, actor, plan_for(0))
        # every new replica has copied a little, none is done (at 1M each broker's throttle is shared by
        # fewer moving partitions: a second would finish the smallest)
        sandbox.advance(0.1 if SCALE_1M else 1)
        rows = list(r.partitions.all())
        brokers = sorted({b for x in rows for b in (*x.original, *x.target)})
        kp = KpRaw(sandbox.bootstrap_servers)
        ck = confluent_admin(sandbox.bootstrap_servers)
        LT = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
        DT = DescribeLogDirsRequest.DescribableLogDirTopic
        MT = MetadataRequest.MetadataRequestTopic
        moving = {(x.topic, x.partition) for x in rows}

        def requests():
            by_topic = defaultdict(list)
            by_broker = defaultdict(lambda: defaultdict(list))
            for x in rows:
                by_topic[x.topic].append(x.partition)
                for b in {*x.original, *x.target}:
                    by_broker[b][x.topic].append(x.partition)
            listing = ListPartitionReassignmentsRequest(
                timeout_ms=60_000, topics=[LT(name=t, partition_indexes=ps) for t, ps in by_topic.items()]
            )
            dirs = [
                (DescribeLogDirsRequest(topics=[DT(topic=t, partitions=ps) for t, ps in topics.items()]), b)
                for b, topics in by_broker.items()
            ]
            return by_topic, [(listing, None), *dirs]

        def listed_all(listed) -> None:
            listed_n = sum(len(t.partitions) for t in listed.topics)
            assert listed_n == len(rows), (listed_n, len(rows), getattr(listed, "error_code", None))

        def offsets(leaders: dict) -> None:
            """ListOffsets earliest and latest per leader of the moving partitions, in flight together."""
            by_leader = defaultdict(lambda: defaultdict(list))
            for tp, leader in leaders.items():
                if tp in moving:
                    by_leader[leader][tp[0]].append(tp[1])
            answers = kp.send_many(
                [(raw_list_offsets(topics, ts), b) for ts in (-2, -1) for b, topics in by_leader.items()]
            )
            assert sum(len(p.partitions) for a in answers for p in a.topics) == 2 * len(rows)

        @gc_paused
        def floor_kp(with_offsets: bool) -> None:
            by_topic, sent = requests()
            answers = kp.send_many([*sent, (MetadataRequest(topics=[MT(name=t) for t in by_topic]), None)])
            listed_all(answers[0])
            md = answers[-1]
            if with_offsets:
                offsets({(t.name, p.partition_index): p.leader_id for t in md.topics for p in t.partitions})

        wire = Wire(sandbox.bootstrap_servers)
        known_leaders = {}  # the wire floor decodes nothing: its ListOffsets use leaders read once here

        @gc_paused
        def floor_wire(with_offsets: bool) -> None:
            by_topic, sent = requests()
            answers = kp.start(sent)
            wire.exchange([(0, MetadataRequest(topics=[MT(name=t) for t in by_topic]), 12)])
            got = dict(answers)
            listed_all(got[0])
            if with_offsets:
                if not known_leaders:
                    md = kp.send(MetadataRequest(topics=[MT(name=t) for t in by_topic]))
                    known_leaders.update(
                        {(t.name, p.partition_index): p.leader_id for t in md.topics for p in t.partitions}
                    )
                offsets(known_leaders)

        @gc_paused
        def floor_ck(with_offsets: bool) -> None:
            by_topic, sent = requests()
            got = {}
            thread = threading.Thread(target=lambda: got.setdefault("md", ck.list_topics(timeout=60)))
            thread.start()
            listed_all(kp.send_many(sent)[0])
            thread.join()
            md = got["md"]
            assert set(by_topic) <= set(md.topics)
            if with_offsets:
                offsets({(n, p.id): p.leader for n, t in md.topics.items() for p in t.partitions.values()})

        def console(every_s: float):
            def run() -> None:
                reassign_poll.OFFSETS_EVERY_S = every_s
                reassign_poll.poll_once(r)

            return run

        freeze()
        m = alternate(
            {
                CONSOLE: console(float("inf")),
                KP: lambda: floor_kp(False),
                CK: lambda: floor_ck(False),
                WI: lambda: floor_wire(False),
            },
            runs=RUNS,
        )
        m2 = alternate(
            {
                CONSOLE: console(0.0),
                KP: lambda: floor_kp(True),
                CK: lambda: floor_ck(True),
                WI: lambda: floor_wire(True),
            },
            runs=OFFSET_RUNS,
        )
        reassign_poll.OFFSETS_EVERY_S = 10.0
        r.refresh_from_db()
        assert r.partitions.filter(state="moving").count() == len(rows), (
            "partitions finished during the bench"
        )
        assert 0 < r.bytes_done < r.bytes_total
        assert r.offsets and len(r.offsets) > len(rows) // 2, "the offsets estimates were not read"
        print(
            f"{len(rows)} moving partitions over {len(brokers)} brokers ({TOPICS * PARTITIONS_PER_TOPIC:,} partitions in the cluster); cycles without the offsets read:"
        )
        m.report()
        print("cycles with the offsets read (ListOffsets earliest + latest per leader):")
        m2.report()
        share = reassign_poll.POLL_INTERVAL_S / 10.0
        floor = m.fastest([KP, CK, WI])
        print(f"floor: {floor}")
        print(m.ratios(CONSOLE, floor))

        def steady(name: str) -> float:
            return m.median(name) + (m2.median(name) - m.median(name)) * share

        c, f = steady(CONSOLE), steady(floor)
        print(f"steady state per cycle (plain + {share:g} x offsets extra): console {c:.4f}s  floor {f:.4f}s")
        ratio = c / f
    finally:
        teardown(sandbox)
    if absolute_s is None:
        print(
            f"console steady-state cycle {c:.3f}s (not gated at this size: the floor's own cycle is {f:.3f}s)"
        )
    absolute = [] if absolute_s is None else [("console steady-state poll cycle seconds", c, absolute_s)]
    gate(name, ratio, GOAL, absolute)


if __name__ == "__main__":
    main()
