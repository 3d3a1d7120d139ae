"""The topic page's consumer-groups section (``groups.reads.topic_consumers``) on the sandbox, and
what it asks Kafka: the topic's own Metadata (never the whole cluster's), one ListGroups per broker,
one OffsetFetch per group coordinator carrying all its groups, and ListOffsets (latest) of the
committed partitions only. A big topic is not asked about partition by partition for every group:
each group answers what it has committed.

The requests are counted as the console's kafka-python client sends them (``Wire``), with their
answers; nothing is stubbed."""

from __future__ import annotations

from collections import defaultdict

import pytest

from console.groups import reads
from console.kafka import KafkaGateway
from console.kafka.groups import TOPIC_OFFSETS_BUDGET
from console.kafka.kp import KpClient
from console.topics import cache as metadata_cache
from tests.unit.group_world import log_topic, uniq

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


class Wire:
    """Every request the console's kafka-python client sent during the test, with its answer."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object, object, object]] = []
        self.whole_cluster_reads = 0

    def add(self, request, node, answer) -> None:
        self.sent.append((type(request).__name__.removesuffix("Request"), request, node, answer))

    def of(self, api: str) -> list[tuple[object, object, object]]:
        return [(request, node, answer) for name, request, node, answer in self.sent if name == api]


@pytest.fixture
def wire(monkeypatch) -> Wire:
    seen = Wire()
    send, start_many = KpClient.send, KpClient.start_many
    list_topics_metadata = KafkaGateway.list_topics_metadata

    def spied_send(self, request, node_id=None):
        answer = send(self, request, node_id)
        seen.add(request, node_id, answer)
        return answer

    def spied_start_many(self, requests):
        wait = start_many(self, requests)

        def answers():
            got = wait()
            for (request, node), answer in zip(requests, got, strict=True):
                seen.add(request, node, answer)
            return got

        return answers

    def spied_whole_cluster(self, *args, **kwargs):
        seen.whole_cluster_reads += 1
        return list_topics_metadata(self, *args, **kwargs)

    monkeypatch.setattr(KpClient, "send", spied_send)
    monkeypatch.setattr(KpClient, "start_many", spied_start_many)
    monkeypatch.setattr(KafkaGateway, "list_topics_metadata", spied_whole_cluster)
    return seen


def group(sandbox, offsets: dict, members: dict | None = None) -> str:
    gid = uniq("tcg")
    sandbox.add_group(gid, members=members, offsets=offsets)
    return gid


def rows(consumers) -> list[tuple]:
    return [(c.group_id, c.state, c.partitions, c.lag, c.lag_known) for c in consumers]


def asked_groups(wire: Wire) -> dict[int, list[tuple[str, object]]]:
    """Per coordinator, the groups its OffsetFetch carried: (group, {topic: partitions} or None)."""
    out: dict[int, list[tuple[str, object]]] = defaultdict(list)
    for request, node, _ in wire.of("OffsetFetch"):
        for g in request.groups:
            topics = None if g.topics is None else {t.name: list(t.partition_indexes) for t in g.topics}
            out[node].append((g.group_id, topics))
    return dict(out)


def listed_coordinators(wire: Wire) -> dict[int, list[str]]:
    """Per broker, the consumer groups its ListGroups answer named (what it coordinates)."""
    out: dict[int, list[str]] = defaultdict(list)
    for _, node, answer in wire.of("ListGroups"):
        out[node].extend(
            g.group_id
            for g in answer.groups
            if (g.protocol_type or "") in ("", "consumer")
            and (g.group_type or "").lower() in ("", "classic", "consumer")
        )
    return dict(out)


def test_it_lists_the_groups_on_a_topic_from_its_own_metadata_with_a_cold_cache(
    sandbox, personas, kafka_cluster, wire
):
    t, other = log_topic(sandbox, uniq("tc"), 3, 10, 100), log_topic(sandbox, uniq("tc"), 2, 0, 50)
    idle = group(sandbox, {(t, 0): 90, (t, 1): 99, (other, 0): 5})
    busy = group(sandbox, {(t, 2): 100}, members={"app-1": [(t, 2)]})
    group(sandbox, {(other, 1): 1})

    got = reads.topic_consumers(actor=personas["viewer"], cluster=kafka_cluster, topic=t)

    assert rows(got) == sorted([(idle, "Empty", 2, 11, True), (busy, "Stable", 1, 0, True)])
    assert wire.whole_cluster_reads == 0 and metadata_cache.peek(kafka_cluster) is None
    metadata = [[x.name for x in request.topics] for request, _, _ in wire.of("Metadata")]
    assert metadata == [[t]]
    # a small topic: each group is asked about the topic's partitions only
    assert {g: topics for gs in asked_groups(wire).values() for g, topics in gs}[idle] == {t: [0, 1, 2]}
    log_ends = sorted(
        (x.name, p.partition_index, p.timestamp)
        for request, _, _ in wire.of("ListOffsets")
        for x in request.topics
        for p in x.partitions
    )
    assert log_ends == [(t, 0, -1), (t, 1, -1), (t, 2, -1)]


def test_it_asks_each_coordinator_once_for_all_its_groups(sandbox, personas, kafka_cluster, wire):
    t = log_topic(sandbox, uniq("tc"), 2, 0, 40)
    mine = sorted(group(sandbox, {(t, i % 2): i}) for i in range(30))

    got = reads.topic_consumers(actor=personas["viewer"], cluster=kafka_cluster, topic=t)

    assert [c.group_id for c in got] == mine
    listed = listed_coordinators(wire)
    asked = asked_groups(wire)
    assert len(wire.of("OffsetFetch")) == len(asked) == len({n for n, gs in listed.items() if gs})
    assert {n: sorted(g for g, _ in gs) for n, gs in asked.items()} == {
        n: sorted(gs) for n, gs in listed.items() if gs
    }
    assert len(asked) > 1  # 30 groups hash onto more than one of the 3 brokers
    assert wire.of("FindCoordinator") == []


def test_a_big_topic_costs_what_the_groups_committed_not_groups_times_partitions(
    sandbox, personas, kafka_cluster, wire
):
    partitions = 400
    t = log_topic(sandbox, uniq("tc"), partitions, 0, 1000)
    other = log_topic(sandbox, uniq("tc"), 4, 0, 10)
    on_t = {group(sandbox, {(t, 2 * i): 500, (t, 2 * i + 1): 1000, (other, 0): 3}): 500 for i in range(40)}
    for i in range(40):
        group(sandbox, {(other, i % 4): 1})

    got = reads.topic_consumers(actor=personas["viewer"], cluster=kafka_cluster, topic=t)

    assert rows(got) == [(g, "Empty", 2, lag, True) for g, lag in sorted(on_t.items())]
    listed = [g for gs in listed_coordinators(wire).values() for g in gs]
    assert len(listed) * partitions > TOPIC_OFFSETS_BUDGET
    # every group is asked for what it committed (no topic list), and the answers hold just that
    assert all(topics is None for gs in asked_groups(wire).values() for _, topics in gs)
    answered = sum(
        len(x.partitions) for _, _, answer in wire.of("OffsetFetch") for g in answer.groups for x in g.topics
    )
    with sandbox.state.lock:
        committed = sum(len(sandbox.state.groups[g].offsets) for g in listed)
    assert answered == committed < len(listed) * partitions


def test_with_the_metadata_cached_it_asks_no_metadata(sandbox, personas, kafka_cluster, wire):
    t = log_topic(sandbox, uniq("tc"), 2, 0, 30)
    gid = group(sandbox, {(t, 1): 20})
    metadata_cache.get_snapshot(kafka_cluster)
    reads_before = wire.whole_cluster_reads

    got = reads.topic_consumers(actor=personas["viewer"], cluster=kafka_cluster, topic=t)

    assert rows(got) == [(gid, "Empty", 1, 10, True)]
    assert wire.of("Metadata") == [] and wire.whole_cluster_reads == reads_before


def test_a_topic_that_does_not_exist_has_no_groups_and_lists_none(personas, kafka_cluster, wire):
    got = reads.topic_consumers(actor=personas["viewer"], cluster=kafka_cluster, topic=uniq("no-such"))
    assert got == [] and wire.of("ListGroups") == [] and wire.whole_cluster_reads == 0
