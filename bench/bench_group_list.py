"""The groups list page for 10,000 groups over 100,000 committed partitions vs the raw calls it needs.

Estate (``group_setup.build_list_estate``, the sandbox in a process of its own, clock stopped):
10 brokers, 100 topics x 1,000 partitions, 10,000 groups each committed on 10 partitions of one
topic (100,000 committed partitions, each committed by one group, every one lagging): 7,000 empty
classic groups, 2,000 stable classic groups with 2 members, 1,000 KIP-848 consumer groups with 2
members.

Console side: ``GET /c/<cluster>/groups/`` through Django's test client (middleware, auth, the view,
``reads.list_groups``, the gateway, the template; first page of 50 by group id, which still needs
every group's lag for the totals, filters and sorts). Raw side: the calls that page makes -
ListGroups per broker; DescribeGroups (classic) + ConsumerGroupDescribe (KIP-848) + OffsetFetch
v8+ per coordinator; ListOffsets (latest) per leader of the 100,000 committed partitions - decoded
into kafka-python response objects and nothing more. Both sides know the partition leaders (the
console's cached topic snapshot, kept from expiring with TOPIC_METADATA_CACHE_S, as a long-lived
client holds its metadata).

The fastest client: three raw variants run in the same alternating loop and the floor is the one
with the lowest median - kafka-python 3's protocol classes through kafka-python's own client
(``raw_clients.KpRaw.send_many``) with describe and OffsetFetch in flight together, the same in the
console's order (describe, then OffsetFetch), and blocking sockets with kafka-python's codecs
(``group_setup.SocketClient``). They land within ~5 % of each other (2.1-2.4 s medians). confluent-kafka
is not a candidate: its AdminClient describes and fetches offsets one group per request and its
ListOffsets grows super-linearly (2,500 / 5,000 / 10,000 partitions: 0.05 / 0.13 / 0.41 s); the
whole sequence took 184 s in a trial run (``BENCH_GROUP_LIST_CONFLUENT_FULL=1``), so the bench
times a 1,000-group sample only: 1.3-1.8 s for 10 % of the work, against 2.1-2.3 s for the
floor's 100 %.

GC: setup (Django, the 100,000-partition snapshot) is frozen with ``gc.freeze()`` before the runs;
both sides run in this process under the same collector settings. 7 alternating runs, min /
median / max and per-run ratios printed; RESULT is median(console) / median(fastest floor); the
script exits 1 when it is above 1.5.

Where the console's time went before the log-end fix below (6 runs on 2 shared cores: console
median 3.50-4.41 s, floor 2.10-2.43 s, RESULT 1.65-1.81; one page timed call by call, vs the
same raw steps):

=================================  ============  ==========================================
gateway call                       console       raw
=================================  ============  ==========================================
list_consumer_groups               0.18-0.23 s   ListGroups 0.17-0.23 s
describe_consumer_groups           0.43-0.57 s   DescribeGroups + CGD 0.28-0.41 s
list_consumer_group_offsets        0.84-1.00 s   OffsetFetch 0.60-0.84 s (+0.11-0.20 collect)
list_offsets                       1.68-1.90 s   ListOffsets 0.90-1.03 s
reads.py, view, template           0.54-0.57 s   -
=================================  ============  ==========================================

The first version missed the goal in the console's own work, mostly in the log-end read
(``KafkaGateway.list_offsets`` walked the 100,000 partitions several times, built a
``TopicPartition``, a ``PartitionOffsets`` and an error check per answer, then rebuilt the dict;
``reads.log_offsets`` added a leader map of every partition and two more scans). Now
``groups.offsets.log_offsets`` groups the snapshot's leaders straight into per-leader requests and
``KafkaGateway.offsets_by_leader`` returns plain ``{(topic, partition): offset}`` with errors only
for the partitions that failed: RESULT 1.65-1.81 -> 1.29-1.34. What is left above the floor:
``group_wire.classic`` decodes the consumer-protocol assignment of every member (~0.25 s under
the profiler; the topic filter needs it) and ``reads._row`` runs for all 10,000 groups (~0.2 s).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.group_setup import (  # noqa: E402
    GROUPS,
    PER_GROUP,
    Phases,
    RemoteGroupSandbox,
    SocketClient,
    profile_top,
)
from bench.harness import alternate, freeze, gate, get_ok, setup_console, teardown  # noqa: E402
from bench.raw_clients import KpRaw, raw_list_offsets  # noqa: E402

RUNS = 7
GOAL = 1.5
CONFLUENT_SAMPLE = 1000  # groups: 10 % of the work


# -- the raw calls, through three clients ----------------------------------------------------------


def _requests():
    from kafka.protocol.admin.groups import DescribeGroupsRequest, ListGroupsRequest
    from kafka.protocol.consumer.group import OffsetFetchRequest

    from console.kafka.group_wire import cgd_request

    group_cls = OffsetFetchRequest.OffsetFetchRequestGroup

    def list_groups():
        return ListGroupsRequest()

    def describe(groups):
        return DescribeGroupsRequest(groups=groups, include_authorized_operations=False)

    def offset_fetch(groups):
        return OffsetFetchRequest(
            groups=[group_cls(group_id=g, topics=None) for g in groups],
            require_stable=False,
            min_version=8,
            max_version=9,
        )

    def list_offsets(by_topic):
        return raw_list_offsets(by_topic, -1)

    return list_groups, describe, cgd_request, offset_fetch, list_offsets


def raw_sequence(send_many, brokers, leaders, pipelined: bool = True, phases: dict | None = None):
    """ListGroups on every broker; then DescribeGroups / ConsumerGroupDescribe and OffsetFetch per
    coordinator (``pipelined``: all in flight together, else describe first as the console does);
    then ListOffsets (latest) per leader of the committed partitions. ``send_many([(request,
    node)])`` -> responses in order. Returns (groups, committed offsets, log ends) for the checks;
    ``phases`` gets each step's seconds."""
    list_groups, describe, cgd, offset_fetch, list_offsets = _requests()
    clock = [time.perf_counter()]

    def lap(name: str) -> None:
        now = time.perf_counter()
        if phases is not None:
            phases.setdefault(name, []).append(now - clock[0])
        clock[0] = now

    listed = send_many([(list_groups(), b) for b in brokers])
    classic, consumer, every = defaultdict(list), defaultdict(list), defaultdict(list)
    for b, response in zip(brokers, listed, strict=True):
        for g in response.groups:
            (consumer if g.group_type == "consumer" else classic)[b].append(g.group_id)
            every[b].append(g.group_id)
    lap("ListGroups")
    describes = [(describe(gs), b) for b, gs in classic.items()]
    describes += [(cgd(gs), b) for b, gs in consumer.items()]
    fetches = [(offset_fetch(gs), b) for b, gs in every.items()]
    if pipelined:
        fetched = send_many(describes + fetches)[len(describes) :]
        lap("DescribeGroups + ConsumerGroupDescribe + OffsetFetch")
    else:
        send_many(describes)
        lap("DescribeGroups + ConsumerGroupDescribe")
        fetched = send_many(fetches)
        lap("OffsetFetch")
    committed = set()
    offsets = 0
    for response in fetched:
        for group in response.groups:
            for topic in group.topics:
                for p in topic.partitions:
                    if p.committed_offset >= 0:
                        committed.add((topic.name, p.partition_index))
                        offsets += 1
    by_leader = defaultdict(lambda: defaultdict(list))
    for t, p in committed:
        by_leader[leaders[(t, p)]][t].append(p)
    lap("(collect the committed partitions)")
    ends = send_many([(list_offsets(by_topic), b) for b, by_topic in by_leader.items()])
    n_ends = sum(len(t.partitions) for r in ends for t in r.topics)
    lap("ListOffsets")
    return sum(len(gs) for gs in every.values()), offsets, n_ends


def confluent_sequence(admin, groups: int) -> tuple[float, int, int]:
    """The same reads through confluent-kafka's AdminClient (librdkafka) for the first ``groups``
    groups of the listing: it lists groups per broker, but describes and fetches offsets one group
    per request (``list_consumer_group_offsets`` takes a single group), then ListOffsets (latest)
    for their committed partitions. Returns (seconds, committed offsets, log ends)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    started = time.perf_counter()
    listed = admin.list_consumer_groups(request_timeout=600).result()
    ids = sorted(g.group_id for g in listed.valid)[:groups]
    described = admin.describe_consumer_groups(ids, request_timeout=600)
    fetched = [
        admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)], request_timeout=600)[g]
        for g in ids
    ]
    for f in described.values():
        f.result()
    committed = [
        (tp.topic, tp.partition) for f in fetched for tp in f.result().topic_partitions if tp.offset >= 0
    ]
    latest = OffsetSpec.latest()
    ends = admin.list_offsets({TopicPartition(t, p): latest for t, p in committed}, request_timeout=600)
    n_ends = sum(1 for f in ends.values() if f.result().offset >= 0)
    return time.perf_counter() - started, len(committed), n_ends


# -- the bench -------------------------------------------------------------------------------------


def main() -> None:
    # Both sides hold the partition leaders (a long-lived client's metadata): the console's cached
    # topic snapshot must not expire in the middle of the runs and refetch 100,000 partitions.
    os.environ["TOPIC_METADATA_CACHE_S"] = "86400"
    started = time.perf_counter()
    sandbox = RemoteGroupSandbox("list")
    sock = admin = None
    try:
        client, cluster = setup_console(sandbox.bootstrap_servers)
        logging.getLogger("kafka").setLevel(logging.ERROR)  # "task ran for 0.2s": big decodes
        print(f"sandbox (own process) + console set up in {time.perf_counter() - started:.1f}s", flush=True)
        from confluent_kafka.admin import AdminClient
        from django.contrib.auth import get_user_model

        from console.clusters.actions import gateway_for
        from console.groups import reads
        from console.topics import cache as metadata_cache

        actor = get_user_model().objects.get(username="bench")
        gw = gateway_for(cluster)
        url = f"/c/{cluster.name}/groups/"
        get_ok(client, url)  # connections, the metadata snapshot, templates
        page = reads.list_groups(actor=actor, cluster=cluster)
        assert page.cluster_groups == GROUPS, page.cluster_groups
        assert page.lag_error is None and all(r.lag_known and r.lag and not r.error for r in page.items)
        assert sum(r.partitions for r in page.items) == page.per_page * PER_GROUP
        snap = metadata_cache.get_snapshot(cluster)
        leaders = {(t.name, p.id): p.leader for t in snap.by_name.values() for p in t.partitions}

        kp = KpRaw(sandbox.bootstrap_servers)  # kafka-python's own client, not the console's transport
        brokers = kp.brokers()
        addresses = {b.node_id: (b.host, b.port) for b in kp.manager.cluster.brokers()}
        sock = SocketClient(addresses, kp.manager.broker_version_data)
        admin = AdminClient({"bootstrap.servers": sandbox.bootstrap_servers})
        admin.list_topics(timeout=60)
        # confluent-kafka is not a candidate: 10 % of the work already costs about half the floor of
        # all of it (the whole 10,000 groups: 184 s in a trial run; BENCH_GROUP_LIST_CONFLUENT_FULL=1).
        sample = GROUPS if os.environ.get("BENCH_GROUP_LIST_CONFLUENT_FULL") else CONFLUENT_SAMPLE
        seconds, offsets, ends = confluent_sequence(admin, sample)
        assert offsets == ends == sample * PER_GROUP, (offsets, ends)
        print(
            f"confluent-kafka AdminClient (one describe + one OffsetFetch request per group), {sample:,} groups "
            f"and their {ends:,} partitions: {seconds:.2f}s",
            flush=True,
        )

        floors = {
            "raw kafka-python, describe+fetch in flight together": lambda ph=None: raw_sequence(
                kp.send_many, brokers, leaders, True, ph
            ),
            "raw kafka-python, in the console's order": lambda ph=None: raw_sequence(
                kp.send_many, brokers, leaders, False, ph
            ),
            "raw sockets + kafka-python codecs, together": lambda ph=None: raw_sequence(
                sock.send_many, brokers, leaders, True, ph
            ),
        }
        want = (GROUPS, GROUPS * PER_GROUP, GROUPS * PER_GROUP)
        for name, fn in floors.items():
            got = fn()  # warm-up, and the same answer as the console's
            assert got == want, (name, got)

        def console() -> None:
            get_ok(client, url)

        freeze()  # setup (Django, the 100,000-partition snapshot) out of the collector, both sides
        m = alternate({"console": console, **floors}, runs=RUNS, warmup=False)  # both warmed above

        # Where the time goes: one more console page with its gateway calls timed, the raw steps,
        # and a profile (console code only).
        calls = (
            "list_consumer_groups",
            "describe_consumer_groups",
            "list_consumer_group_offsets",
            "list_offsets",
        )
        with Phases([(gw, name) for name in calls]) as ph:
            t = time.perf_counter()
            console()
            page_s = time.perf_counter() - t
        raw_phases: dict[str, list[float]] = {}
        floors["raw kafka-python, in the console's order"](raw_phases)
        print(f"\none console page {page_s:.3f}s; its gateway calls:")
        for name, ts in ph.times.items():
            print(f"  {name:<44} {sum(ts):.3f}s")
        print(
            f"  {'(the rest: reads.py (leaders, rows, lag, sort), view, template)':<44} "
            f"{page_s - sum(sum(ts) for ts in ph.times.values()):.3f}s"
        )
        print("the same steps as raw calls:")
        for name, ts in raw_phases.items():
            print(f"  {name:<44} {sum(ts):.3f}s")
        print("\nprofile of one console page (console code, by cumulative time):")
        print(profile_top(console, 22, "console/"))

        fastest = min(floors, key=m.median)
        for name in m.times:
            print(m.line(name, name))
        print(m.ratios("console", fastest))
        print(f"floor: {fastest}")
        print(
            f"(confluent-kafka: {sample:,} groups in {seconds:.2f}s vs the floor's {GROUPS:,} in "
            f"{m.median(fastest):.2f}s)"
        )
        ratio = m.median("console") / m.median(fastest)
    finally:
        admin = None  # librdkafka's client goes before the sandbox, without reconnect noise
        if sock is not None:
            sock.close()
        teardown(sandbox)
    gate("group_list", ratio, GOAL)


if __name__ == "__main__":
    main()
