"""The brokers read (console/brokers/reads.py) against the sandbox or a real Kafka: every broker with
its rack, its log dirs' sizes and partition counts matching the cluster's own answers, the partitions
a broker hosts, and the topic throttles that name it.

Other tests may create topics on a shared cluster meanwhile: a comparison of counts is retried until
one metadata fetch and one brokers read agree.
"""

from __future__ import annotations

from collections import Counter

import pytest

from console.brokers import query as broker_query
from console.brokers import reads as broker_reads
from console.kafka import ConfigChange, ConfigResource, KafkaOperationError
from console.models import Cluster
from console.reassignment import throttles
from console.topics import cache as metadata_cache
from tests.conftest import make_personas

from .conftest import eventually

pytestmark = [pytest.mark.contract, pytest.mark.django_db]


@pytest.fixture
def viewer(endpoints):
    cluster = Cluster.objects.create(
        name="contract-brokers", bootstrap_servers=endpoints.bootstrap_servers, request_timeout_s=15
    )
    people = make_personas(cluster)
    metadata_cache.clear()
    yield people["viewer"], cluster
    metadata_cache.clear()


def _expected_counts(gw) -> dict[int, tuple[int, int, int]]:
    """Per broker (replicas, leaders, under-replicated partitions hosted), from one Metadata fetch."""
    replicas, leaders, under = Counter(), Counter(), Counter()
    for t in gw.list_topics_metadata().topics:
        for p in t.partitions:
            replicas.update(p.replicas)
            if p.leader >= 0:
                leaders[p.leader] += 1
            if len(p.isr) < len(p.replicas):
                under.update(p.replicas)
    return {b: (replicas[b], leaders[b], under[b]) for b in set(replicas) | set(leaders)}


def _read_counts(actor, cluster) -> dict[int, tuple[int, int, int]]:
    listing = broker_reads.list_brokers(actor=actor, cluster=cluster, refresh=True)
    return {
        b.id: (b.counts.replicas, b.counts.leaders, b.counts.under_replicated)
        for b in listing.brokers
        if b.counts.replicas or b.counts.leaders
    }


def test_every_broker_with_its_rack_log_dirs_and_partition_counts(gw, viewer, topics, broker_ids):
    actor, cluster = viewer
    a, b, c = broker_ids[:3]
    topics.create(partitions=3, replication_factor=2, replica_assignment=((a, b), (b, c), (c, a)))

    listing = broker_reads.list_brokers(actor=actor, cluster=cluster, refresh=True)
    described = {x.id: x for x in gw.describe_cluster().brokers}
    live = {x.id: x for x in listing.brokers if x.live}
    assert set(live) == set(described)
    for bid, info in described.items():
        row = live[bid]
        assert (row.host, row.port, row.rack) == (info.host, info.port, info.rack)

    # log dirs: the same dirs and disk sizes as the cluster's own DescribeLogDirs
    dirs = gw.describe_log_dirs(sorted(described))
    for bid, row in live.items():
        assert row.log_dirs_error is None
        theirs = {d.path: d for d in dirs[bid]}
        assert {d.path for d in row.log_dirs} == set(theirs)
        for d in row.log_dirs:
            assert d.total_bytes is not None and d.total_bytes == theirs[d.path].total_bytes
            assert 0 <= d.usable_bytes <= d.total_bytes and d.used_bytes == d.total_bytes - d.usable_bytes

    # counts: equal to one Metadata fetch of the same moment (retried while others change topics)
    def agree():
        expected = _expected_counts(gw)
        return expected, _read_counts(actor, cluster)

    expected, got = eventually(agree, lambda pair: pair[0] == pair[1], timeout=30, interval=1)
    assert got == expected
    assert all(got[x][0] >= 2 for x in (a, b, c))  # the topic above puts two replicas on each


def test_a_broker_lists_the_partitions_it_hosts_with_sizes_and_throttles(gw, viewer, topics, broker_ids):
    actor, cluster = viewer
    a, b, c = broker_ids[:3]
    name = topics.create(partitions=3, replication_factor=2, replica_assignment=((a, b), (b, c), (c, a)))
    gw.incremental_alter_configs(
        {
            ConfigResource("TOPIC", name): [
                ConfigChange(throttles.LEADER_REPLICAS, "SET", f"0:{a}"),
                ConfigChange(throttles.FOLLOWER_REPLICAS, "SET", "*"),
            ]
        }
    )
    wanted = broker_query.PartitionQuery(topic=name)

    def read():
        return broker_reads.describe_broker(
            actor=actor, cluster=cluster, broker=str(a), query=wanted, refresh=True
        )

    detail = eventually(read, lambda d: len(d.rows) == 2 and d.broker.throttles.topic(name) is not None)
    assert [(r.topic, r.partition) for r in detail.rows] == [(name, 0), (name, 2)]
    leads = {r.partition: r.is_leader for r in detail.rows}
    assert leads == {0: True, 2: False}
    assert all(r.in_isr and r.size is not None and r.size >= 0 and r.log_dir for r in detail.rows)
    assert detail.broker.data_bytes is not None and detail.broker.live
    throttled = detail.broker.throttles.topic(name)
    assert throttled.leader == (0,) and throttled.follower_all
    assert detail.rows[0].leader_throttled and detail.rows[1].follower_throttled
    assert not detail.rows[1].leader_throttled

    with pytest.raises(broker_reads.UnknownBroker):
        broker_reads.describe_broker(actor=actor, cluster=cluster, broker=str(max(broker_ids) + 1000))
    assert not isinstance(gw.describe_topics([name])[name], KafkaOperationError)
