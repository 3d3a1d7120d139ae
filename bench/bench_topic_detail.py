"""The topic page and its consumer-groups section, metadata cache cold, vs the least raw work for
the same answers.

Estate (the sandbox in its own process, clock stopped): ``group_setup.build_list_estate`` - 10
brokers, 100 topics x 1,000 partitions (100,000 partitions), 10,000 groups each committed on 10
partitions of one topic (7,000 empty classic, 2,000 stable classic, 1,000 KIP-848 groups) - and
every 50th group also committed on 10 partitions of the topic under test, ``groups-050`` (1,000
partitions x RF 3): 298 groups commit on it, 100,200 offsets in all. The console's database holds
``BENCH_AUDIT_EVENTS`` (default 1,000,000) hash-chained audit events (``bench_audit_search.fill``,
other clusters' topics) and then 200 events recorded on this cluster through ``audit.record`` (100
naming the topic), as a long-lived console's trail would (untimed setup; issue 19).

Console side, what a browser gets (Django test client): the topic page (Metadata of the topic,
earliest and latest offsets of its 1,000 partitions, configs, recent audit events, the 1,000-row
table), then the section its htmx loads (``group_topic_consumers``: the groups with offsets on the
topic and their lag), with the topic-metadata cache emptied before each run (untimed). The section
alone (cold) is timed beside it, not gated.

Floors, on warmed clients, the least Kafka work for the same page and section: Metadata of the
topic, DescribeConfigs of it and ListGroups on every broker; then ListOffsets (earliest, latest)
per leader and OffsetFetch (v8, every group of a coordinator in one request, each asked for what
it committed) per coordinator; the lag from the same latest offsets (no second ListOffsets). No
FindCoordinator: each broker's ListGroups names the groups it coordinates.
Candidates, the fastest of this run is the floor:

* kafka-python's own client (``raw_clients.KpRaw``), the two rounds each all in flight together;
* the same in the console's order (the page's requests, then the section's, one step at a time,
  the section's ListOffsets (latest) of the committed partitions included);
* blocking sockets with kafka-python's codecs (``group_setup.SocketClient``), two rounds.

Not candidates: an OffsetFetch naming the topic's 1,000 partitions for each of 10,000 groups
(Kafka answers every partition named: 10M entries; the console's section asked that way before and
timed out at 60 s on this estate), and confluent-kafka (its AdminClient fetches offsets one group
per request: 10,000 requests).

GC: setup frozen for both sides; 9 alternating runs, min / median / max and per-run ratios.
Prints ``RESULT topic_detail ratio=<console/floor> goal<=1.5`` last; exit 1 above.

Measured on this 2-core machine while other work ran (load 4-6), 1,000,000 audit events: page +
section 1.81 s median, the section alone 1.77 s, floor 1.63 s, RESULT 1.12 (2,000 events: 1.33,
1.38). Before the section read only its topic (issue 35) it asked every group for the topic's
1,000 partitions: on this estate its OffsetFetch answers (10M entries) did not come within the
60 s request timeout (the issue measured 44.9-49.1 s); the sandbox then also built and encoded
every OffsetFetch answer through kafka-python's objects (1.6 s for the 100,000 committed offsets,
now written straight to bytes), which had hidden the clients' own work on both sides.
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
    LIST_PARTITIONS,
    SocketClient,
    build_list_estate,
    committed_at,
    list_group_id,
)
from bench.harness import cold, compare, console_on, gate, get_ok  # noqa: E402
from bench.raw_clients import KpRaw, raw_list_offsets  # noqa: E402

TOPIC, TOPIC_INDEX = "groups-050", 50
EXTRA_EVERY = 50  # every 50th group (from the 8th: empty classic groups) also commits on TOPIC
GOAL = 1.5
RUNS = 9
EVENTS = int(os.environ.get("BENCH_AUDIT_EVENTS", "1000000"))


def build_estate():
    """The groups list estate, plus 10 partitions of TOPIC committed by every 50th group."""
    cluster = build_list_estate()
    with cluster.state.lock:
        for i in range(7, GROUPS, EXTRA_EVERY):
            first = (i * 7) % (LIST_PARTITIONS - 10)
            offsets = cluster.state.groups[list_group_id(i)].offsets
            for p in range(first, first + 10):
                offsets[(TOPIC, p)] = committed_at(TOPIC_INDEX, p)
    return cluster


# -- the raw calls ---------------------------------------------------------------------------------


def _metadata():
    from kafka.protocol.metadata import MetadataRequest

    return MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False
    )


def _configs():
    from kafka.protocol.admin import DescribeConfigsRequest

    R = DescribeConfigsRequest.DescribeConfigsResource
    return DescribeConfigsRequest(
        resources=[R(resource_type=2, resource_name=TOPIC, configuration_keys=None)],
        include_synonyms=True,
        include_documentation=True,
    )


def _list_groups():
    from kafka.protocol.admin.groups import ListGroupsRequest

    return ListGroupsRequest()


def _offset_fetch(groups):
    from kafka.protocol.consumer.group import OffsetFetchRequest

    group_cls = OffsetFetchRequest.OffsetFetchRequestGroup
    return OffsetFetchRequest(
        groups=[group_cls(group_id=g, topics=None) for g in groups],
        require_stable=False,
        min_version=8,
        max_version=9,
    )


def _by_leader(md) -> dict[int, list[int]]:
    by_leader = defaultdict(list)
    for p in md.topics[0].partitions:
        by_leader[p.leader_id].append(p.partition_index)
    return by_leader


def _coordinated(brokers, listed) -> dict[int, list[str]]:
    return {b: [g.group_id for g in r.groups] for b, r in zip(brokers, listed, strict=True) if r.groups}


def _rows(fetched, ends: dict[int, int]) -> list[tuple[str, int, int]]:
    """(group, partitions committed on TOPIC, lag on it) of each group with offsets there."""
    rows = []
    for response in fetched:
        for group in response.groups:
            mine = [
                (p.partition_index, p.committed_offset)
                for t in group.topics
                if t.name == TOPIC
                for p in t.partitions
                if p.committed_offset >= 0
            ]
            if mine:
                rows.append((group.group_id, len(mine), sum(max(0, ends[p] - o) for p, o in mine)))
    return sorted(rows)


def raw_together(send_many, brokers):
    """Two rounds, each all in flight: (Metadata, DescribeConfigs, ListGroups per broker), then
    (ListOffsets earliest + latest per leader, OffsetFetch per coordinator)."""
    first = send_many(
        [(_metadata(), brokers[0]), (_configs(), brokers[0])] + [(_list_groups(), b) for b in brokers]
    )
    md, listed = first[0], first[2:]
    by_leader = _by_leader(md)
    offsets = [(raw_list_offsets({TOPIC: ps}, ts), b) for ts in (-2, -1) for b, ps in by_leader.items()]
    coordinated = _coordinated(brokers, listed)
    second = send_many(offsets + [(_offset_fetch(gs), b) for b, gs in coordinated.items()])
    latest = second[len(by_leader) : len(offsets)]
    ends = {p.partition_index: p.offset for r in latest for t in r.topics for p in t.partitions}
    assert len(ends) == LIST_PARTITIONS
    return _rows(second[len(offsets) :], ends)


def raw_in_order(send, send_many, brokers):
    """The page's requests, then the section's, a step at a time: Metadata; ListOffsets earliest +
    latest per leader; DescribeConfigs; ListGroups per broker; OffsetFetch per coordinator;
    ListOffsets (latest) per leader of the committed partitions."""
    md = send(_metadata())
    by_leader = _by_leader(md)
    leader_of = {p: b for b, ps in by_leader.items() for p in ps}
    send_many([(raw_list_offsets({TOPIC: ps}, ts), b) for ts in (-2, -1) for b, ps in by_leader.items()])
    send(_configs())
    coordinated = _coordinated(brokers, send_many([(_list_groups(), b) for b in brokers]))
    fetched = send_many([(_offset_fetch(gs), b) for b, gs in coordinated.items()])
    committed = defaultdict(set)
    for response in fetched:
        for group in response.groups:
            for t in group.topics:
                if t.name == TOPIC:
                    for p in t.partitions:
                        if p.committed_offset >= 0:
                            committed[leader_of[p.partition_index]].add(p.partition_index)
    latest = send_many([(raw_list_offsets({TOPIC: sorted(ps)}, -1), b) for b, ps in committed.items()])
    return _rows(
        fetched, {p.partition_index: p.offset for r in latest for t in r.topics for p in t.partitions}
    )


# -- the bench -------------------------------------------------------------------------------------


def fill_audit(cluster) -> int:
    """EVENTS chained events (other clusters) + 200 recorded on this cluster; the newest naming the topic."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from bench.bench_audit_search import fill
    from console.audit.store import record

    with connection.cursor() as cur:  # the few setup events make way for a chain of EVENTS from id 1
        cur.execute("DELETE FROM console_audittarget")
        cur.execute("DELETE FROM console_auditevent")
    started = time.perf_counter()
    fill(EVENTS)
    user = get_user_model().objects.get(username="bench")
    for i in range(100):
        with transaction.atomic():
            record(actor=user, action="topic.create", cluster=cluster, targets=[f"topic:bench.other-{i:04d}"])
        with transaction.atomic():
            newest = record(
                actor=user,
                action="config.alter",
                cluster=cluster,
                targets=[f"topic:{TOPIC}"],
                params={"note": f"bench.note.{i:04d}"},
                outcome="success",
            )
    print(f"filled {EVENTS:,} + 200 audit events in {time.perf_counter() - started:.0f}s", flush=True)
    return newest.pk


def main() -> None:
    started = time.perf_counter()
    with console_on(build_estate) as (sandbox, client, cluster):
        logging.getLogger("kafka").setLevel(logging.ERROR)  # "task ran for 0.2s": big decodes
        print(f"sandbox (own process) + console set up in {time.perf_counter() - started:.1f}s", flush=True)
        newest = fill_audit(cluster)
        from django.contrib.auth import get_user_model

        from console.groups import reads
        from console.topics import cache as metadata_cache

        page_url = f"/c/{cluster.name}/topics/{TOPIC}/"
        section_url = f"/c/{cluster.name}/groups/-/topic/{TOPIC}/"
        body = get_ok(client, page_url).content.decode()
        assert f"<td>{newest}</td>" in body.split('id="topic-events"', 1)[-1], (
            "the topic's newest event is missing"
        )
        assert section_url in body, "the page does not load its groups section"
        actor = get_user_model().objects.get(username="bench")
        metadata_cache.clear()
        want = [
            (c.group_id, c.partitions, c.lag)
            for c in reads.topic_consumers(actor=actor, cluster=cluster, topic=TOPIC)
        ]
        assert metadata_cache.peek(cluster) is None, "the section read the whole cluster's metadata"
        section = get_ok(client, section_url, HTTP_HX_REQUEST="true").content.decode()
        assert section.count("<tr data-group=") == len(want) and 250 < len(want) < 350, len(want)

        kp = KpRaw(sandbox.bootstrap_servers)
        brokers = kp.brokers()
        addresses = {b.node_id: (b.host, b.port) for b in kp.manager.cluster.brokers()}
        sock = SocketClient(addresses, kp.manager.broker_version_data)
        floors = {
            "raw kafka-python, two rounds in flight": lambda: raw_together(kp.send_many, brokers),
            "raw kafka-python, the console's order": lambda: raw_in_order(kp.send, kp.send_many, brokers),
            "raw sockets + kafka-python codecs, two rounds": lambda: raw_together(sock.send_many, brokers),
        }
        for name, fn in floors.items():
            assert fn() == want, f"{name} does not answer what the console shows"

        def page_and_section():
            get_ok(client, page_url)
            get_ok(client, section_url, HTTP_HX_REQUEST="true")

        ratio = compare(
            {"console topic page + groups section (cache cold)": cold(page_and_section)},
            floors,
            runs=RUNS,
            shown={
                "console groups section alone (cache cold)": cold(
                    lambda: get_ok(client, section_url, HTTP_HX_REQUEST="true")
                )
            },
            note=f"{LIST_PARTITIONS} partitions of 100,000, {len(want)} of {GROUPS:,} groups on the topic",
        )
        sock.close()
        kp.close()
    gate("topic_detail", ratio, GOAL)


if __name__ == "__main__":
    main()
