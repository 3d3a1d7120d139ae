"""The topic pages' fast paths give the answers of the plain ones (issue 19).

* the regex search's one RE2 scan over the joined names = a per-name ``search``;
* a deferred ``TopicMetadata`` (librdkafka's answer kept, partitions built when first read) = the
  eager one, and the default list page builds no partitions of topics it does not show;
* the detail page's recent events, read from the audit target index = the events naming the
  topic on this cluster and the events of their operations, newest first.
"""

from __future__ import annotations

import pickle
import uuid
from dataclasses import FrozenInstanceError
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from kafka.protocol.metadata import MetadataResponse

from console import patterns
from console.audit import store as audit
from console.kafka import BrokerInfo, ClusterMetadata, PartitionMetadata, TopicMetadata, metadata_read
from console.kafka.cluster import _PackedPartitions
from console.kafka.deferred import DeferredTopics, hosted_by, placement
from console.models import Cluster
from console.topics import cache as metadata_cache
from console.topics import reads as topic_reads
from console.topics.list_configs import LIST_CONFIG_KEYS
from console.topics.search import NameIndex

NAMES = sorted(
    {
        *(f"bench.topic-{i:05d}" for i in range(0, 3000, 7)),
        *("a", "_x", "A.b-c", "__consumer_offsets", "x" * 249, "1", "Orders", "orders.v2", "-", "."),
    }
)
PATTERNS = [
    r"topic-1\d{3}7$", r"^a", r"$", r"^", r"", r"x*", r"\b", r"\B", r"^\.", r"[^a]b", r"\s", r"(?i)orders",
    r"(?i)ORDERS$", r"s.v", r"\d+$", r"^[a-z]+$", r"c$|^_", r"(?s).", r"a\nb", r"\Aa", r"a\z", r"(?-m)^b",
    r"(o)(r)", r"[[:alpha:]]{3}", r"\W", r"^$", r"topic-0{2}", r"-$", r"^-", r"(?m)s$", r"^(?:b|_)",
]  # fmt: skip


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_joined_regex_scan_finds_what_a_per_name_search_finds(pattern):
    compiled = patterns.compile_pattern(pattern)
    assert NameIndex(NAMES).regex(pattern) == [n for n in NAMES if compiled.search(n) is not None]


def test_substring_search_ignores_case_and_an_invalid_regex_is_refused():
    index = NameIndex(NAMES)
    assert index.substring("ORDERS") == ["Orders", "orders.v2"]
    assert NameIndex([]).regex("x*") == [] and NameIndex(["a"]).regex("$") == ["a"]
    with pytest.raises(patterns.PatternError):
        index.regex("(a")


def _raw_topic(parts):
    """A topic of the whole-cluster answer as the gateway keeps it (``metadata_read.WholeTopic``): a
    Metadata answer carrying ``parts`` ((id, leader, replicas, isr), in that order), encoded by
    kafka-python and read by the console's decoder."""
    topic = MetadataResponse[12].MetadataResponseTopic(
        error_code=0,
        name="t",
        topic_id=uuid.UUID(int=1),
        is_internal=False,
        partitions=[
            MetadataResponse[12].MetadataResponseTopic.MetadataResponsePartition(
                error_code=0,
                partition_index=pid,
                leader_id=leader,
                leader_epoch=0,
                replica_nodes=list(replicas),
                isr_nodes=list(isr),
                offline_replicas=[],
            )
            for pid, leader, replicas, isr in parts
        ],
    )
    answer = MetadataResponse[12](
        throttle_time_ms=0, brokers=[], cluster_id="c", controller_id=1, topics=[topic]
    ).encode()
    return metadata_read.decode(12, answer).topics["t"]


RAW = [(2, 3, (3, 1), (3,)), (0, 1, (1, 2), (1, 2)), (1, -1, (2, 9), ())]  # broker 9 is not live
EAGER_PARTS = (
    PartitionMetadata(0, 1, (1, 2), (1, 2)),
    PartitionMetadata(1, -1, (2, 9), (), (9,)),
    PartitionMetadata(2, 3, (3, 1), (3,)),
)


def test_a_deferred_topic_equals_the_eager_one():
    reader = _PackedPartitions(frozenset({1, 2, 3}))
    lazy = TopicMetadata.deferred("t", _raw_topic(RAW), reader)
    eager = TopicMetadata("t", EAGER_PARTS)
    health = lazy.health()  # counted from the raw answer
    assert lazy._partitions is None
    assert health == eager.health() == (3, 2, 2, 1, (2, 0, 1))
    assert lazy == eager and hash(lazy) == hash(eager) and lazy.replication_factor == 2
    assert lazy.partitions == eager.partitions and lazy._source is None
    assert pickle.loads(pickle.dumps(lazy)) == eager
    assert repr(lazy) == repr(eager)
    with pytest.raises(FrozenInstanceError):
        lazy.name = "u"


def test_placement_reads_the_asked_partitions_without_building_the_others():
    reader = _PackedPartitions(frozenset({1, 2, 3}))
    lazy = TopicMetadata.deferred("t", _raw_topic(RAW), reader)
    eager = TopicMetadata("t", EAGER_PARTS)
    want = {0: (1, (1, 2)), 2: (3, (3, 1))}
    assert placement(lazy, [2, 0, 7]) == placement(eager, (0, 2, 7)) == want  # 7: no such partition
    assert lazy._partitions is None  # nothing built
    assert placement(lazy, []) == {} and placement(lazy, [1]) == {1: (-1, (2, 9))}
    assert all(isinstance(replicas, tuple) for _, replicas in placement(lazy, [0, 1, 2]).values())


def test_the_partitions_a_broker_hosts_are_read_without_building_the_others():
    reader = _PackedPartitions(frozenset({1, 2, 3}))
    lazy = TopicMetadata.deferred("t", _raw_topic(RAW), reader)
    eager = TopicMetadata("t", EAGER_PARTS)
    for broker in (1, 2, 3, 9, 4):
        assert hosted_by(lazy, broker) == hosted_by(eager, broker)
        assert hosted_by(eager, broker) == tuple(p for p in EAGER_PARTS if broker in p.replicas)
    assert [p.id for p in hosted_by(lazy, 1)] == [0, 2] and hosted_by(lazy, 4) == ()
    assert lazy._partitions is None  # nothing built


def test_packed_partitions_read_back_every_value_and_count_each_health_figure():
    """The packing (marshal format 2) keeps every id, leader and broker list exactly, large broker ids
    and empty lists too, and ``health`` counts each figure from them: a partition without a leader
    is offline, one whose ISR is shorter than its replicas under-replicated, the replication factor
    is the lowest-numbered partition's replica count, and the ISR sizes come only when some
    partition is unhealthy."""
    big = 2**31 - 1
    raw = [
        (4, big, (big, 7, 1), (big, 7, 1)),
        (0, 7, (7, 1, big), (7, 1)),  # under-replicated
        (3, -1, (1, 7, big), ()),  # offline (and under-replicated)
        (1, 1, (1, big, 7), (1, big, 7)),
        (2, -1, (7, big, 1), (7,)),  # offline with an ISR left
    ]
    reader = _PackedPartitions(frozenset({1, 7}))  # broker ``big`` is not live
    packed = _raw_topic(raw)
    assert isinstance(packed.packed, bytes) and packed.partitions == 5
    parts = reader.partitions(packed)
    assert [(p.id, p.leader, p.replicas, p.isr) for p in parts] == sorted(
        (pid, leader, tuple(replicas), tuple(isr)) for pid, leader, replicas, isr in raw
    )
    assert all(p.offline_replicas == (big,) for p in parts)
    assert reader.health(packed) == (5, 3, 3, 2, (2, 3, 1, 0, 3))
    healthy = _raw_topic([(1, 7, (7,), (7,)), (0, 1, (1,), (1,))])
    assert reader.health(healthy) == (2, 1, 0, 0, ())
    assert reader.health(_raw_topic([])) == (0, 0, 0, 0, ()) and reader.partitions(_raw_topic([])) == ()
    # the health figures are those of the partitions read back
    eager = TopicMetadata("t", parts)
    assert TopicMetadata.deferred("t", packed, reader).health() == eager.health()


def test_deferred_topics_read_like_a_tuple_and_make_only_what_is_read():
    reader = _PackedPartitions(frozenset({1, 2, 3}))
    sources = {n: _raw_topic(RAW) for n in ("b", "a", "__consumer_offsets")}
    topics = DeferredTopics(sorted(sources), sources, reader, frozenset({"__consumer_offsets"}))
    assert len(topics) == 3 and topics[1].name == "a" and set(topics._made) == {"a"}
    assert topics.by_name["b"] is topics.get("b") and "a" in topics.by_name and "c" not in topics.by_name
    assert topics.by_name.get("c") is None and list(topics.by_name) == ["__consumer_offsets", "a", "b"]
    with pytest.raises(KeyError):
        topics.by_name["c"]
    eager = (
        TopicMetadata("__consumer_offsets", EAGER_PARTS, internal=True),
        TopicMetadata("a", EAGER_PARTS),
        TopicMetadata("b", EAGER_PARTS),
    )
    assert topics == eager and hash(topics) == hash(eager) and topics[:2] == eager[:2]
    assert pickle.loads(pickle.dumps(ClusterMetadata("c", 1, (), topics))) == ClusterMetadata(
        "c", 1, (), eager
    )


@pytest.mark.django_db
def test_the_default_list_page_builds_only_its_own_topics(monkeypatch, offline_cluster, django_user_model):
    reader = _PackedPartitions(frozenset({1, 2, 3}))
    names = [f"t{i:03d}" for i in range(120)]
    sources = {n: _raw_topic(RAW) for n in [*reversed(names), "__consumer_offsets"]}
    topics = DeferredTopics(sorted(sources), sources, reader, frozenset({"__consumer_offsets"}))
    md = ClusterMetadata("c", 1, (BrokerInfo(1, "h", 1),), topics)
    fake = SimpleNamespace(list_topics_metadata=lambda: md, describe_configs=lambda *a, **k: {})
    monkeypatch.setattr(metadata_cache, "gateway_for", lambda cluster: fake)
    monkeypatch.setattr(topic_reads, "gateway_for", lambda cluster: fake)
    admin = django_user_model.objects.create_superuser("root", password="x")
    metadata_cache.clear()
    try:
        page = topic_reads.list_topics(actor=admin, cluster=offline_cluster, page=2)
        assert [i.row.name for i in page.items] == names[50:100] and page.total == 120 and page.pages == 3
        assert [i.row.under_replicated for i in page.items] == [2] * 50
        assert sorted(topics._made) == names[50:100]  # only the page's topics were made
        assert all(t._partitions is None for t in topics._made.values())  # counted from the raw answer
        assert topic_reads.list_topics(actor=admin, cluster=offline_cluster, query="consumer").total == 0
        shown = topic_reads.list_topics(
            actor=admin, cluster=offline_cluster, query="consumer", include_internal=True
        )
        assert [(i.row.name, i.row.internal) for i in shown.items] == [("__consumer_offsets", True)]
        unhealthy = topic_reads.list_topics(
            actor=admin, cluster=offline_cluster, unhealthy_only=True, sort="offline"
        )
        assert unhealthy.total == 120 and all(t._partitions is None for t in topics)
        found = topic_reads.list_topics(actor=admin, cluster=offline_cluster, query=r"^t11\d$", regex=True)
        assert [i.row.name for i in found.items] == names[110:120]
    finally:
        metadata_cache.clear()


@pytest.mark.django_db
@pytest.mark.parametrize("batch", [2000, 2, 1])  # batches of the target index: the same answer
def test_recent_events_name_the_topic_on_this_cluster_with_their_operations(
    offline_cluster, batch, monkeypatch
):
    monkeypatch.setattr(topic_reads, "_NAMING_BATCH", batch)
    other_cluster = Cluster.objects.create(name="other", bootstrap_servers="127.0.0.1:1")

    def rec(cluster, targets, operation=None):
        with transaction.atomic():
            return audit.record(
                actor=None, action="test.event", cluster=cluster, targets=targets, operation=operation
            )

    wanted = [
        rec(offline_cluster, ["topic:orders"]),
        rec(offline_cluster, ["topic:orders", "topic:other"], operation=7),
    ]
    rec(other_cluster, ["topic:orders"])  # another cluster
    rec(offline_cluster, ["topic:orders.v2"])  # another topic whose name starts the same
    rec(offline_cluster, ["orders"])  # not a topic target
    wanted.append(rec(offline_cluster, ["throttle:broker-1"], operation=7))  # a later step of the operation
    rec(offline_cluster, ["throttle:broker-2"], operation=8)  # another operation
    wanted.append(rec(offline_cluster, ["topic:orders"]))
    got = topic_reads.recent_events(offline_cluster, "orders")
    assert [e.pk for e in got] == [e.pk for e in reversed(wanted)]
    assert [e.pk for e in topic_reads.recent_events(offline_cluster, "orders", limit=2)] == [
        wanted[3].pk,
        wanted[2].pk,
    ]
    assert topic_reads.recent_events(offline_cluster, "nothing") == []


@pytest.mark.django_db
def test_recent_events_read_only_the_topics_newest_events_however_long_its_history(
    offline_cluster, monkeypatch
):
    """A topic named by many events (config churn) costs one batch per view, not its whole history:
    the operations listed are those named among its newest ``_SCANNED`` events."""
    monkeypatch.setattr(topic_reads, "_SCANNED", 3)
    monkeypatch.setattr(topic_reads, "_NAMING_BATCH", 4)

    def rec(targets, operation=None):
        with transaction.atomic():
            return audit.record(
                actor=None, action="test.event", cluster=offline_cluster, targets=targets, operation=operation
            )

    old_op = rec(["topic:orders"], operation=9)  # named long ago by operation 9
    for _ in range(12):  # a long history of changes without an operation
        rec(["topic:orders"])
    rec(["throttle:broker-1"], operation=9)  # operation 9 still writing, but out of the window
    recent_op = rec(["topic:orders"], operation=10)
    later = rec(["throttle:broker-2"], operation=10)
    with CaptureQueriesContext(connection) as queries:
        got = [e.pk for e in topic_reads.recent_events(offline_cluster, "orders", limit=2)]
    assert got == [later.pk, recent_op.pk]
    assert old_op.pk not in got
    reads = [q["sql"] for q in queries.captured_queries if "console_audittarget" in q["sql"]]
    assert len(reads) == 1, reads  # 3 of the 14 naming events: one batch of 4


@pytest.mark.django_db
def test_a_cold_first_page_reads_its_configs_while_the_metadata_is_packed(
    monkeypatch, offline_cluster, django_user_model
):
    from console.kafka import ConfigResource

    names = [f"t{i:03d}" for i in range(120)]
    topics = DeferredTopics(
        names, {n: _raw_topic(RAW) for n in names}, _PackedPartitions(frozenset({1, 2, 3})), frozenset()
    )
    md = ClusterMetadata("c", 1, (), topics)
    calls = []

    def list_topics_metadata(on_names=None):
        if on_names is not None:
            on_names(names)
            calls.append("names given")
        return md

    def describe_configs(resources, include_documentation=True, keys=None):
        assert keys == list(LIST_CONFIG_KEYS)  # only the list's columns are asked
        calls.append([r.name for r in resources])
        return {
            ConfigResource("TOPIC", r.name): {"cleanup.policy": SimpleNamespace(value="compact")}
            for r in resources
        }

    fake = SimpleNamespace(list_topics_metadata=list_topics_metadata, describe_configs=describe_configs)
    monkeypatch.setattr(metadata_cache, "gateway_for", lambda cluster: fake)
    monkeypatch.setattr(topic_reads, "gateway_for", lambda cluster: fake)
    monkeypatch.setattr("console.topics.list_configs.gateway_for", lambda cluster: fake)
    admin = django_user_model.objects.create_superuser("root", password="x")
    metadata_cache.clear()
    try:
        page = topic_reads.list_topics(actor=admin, cluster=offline_cluster)
        # one DescribeConfigs, of the first names (the page and the internal topics it could hide)
        assert sorted(calls, key=str) == sorted(["names given", names[:53]], key=str)
        assert [i.cleanup_policy for i in page.items] == ["compact"] * 50
        calls.clear()
        topic_reads.list_topics(actor=admin, cluster=offline_cluster, page=2)  # cached snapshot: no prefetch
        assert calls == [names[53:100]]  # the three read ahead are cached
    finally:
        metadata_cache.clear()
