"""Metadata: the fast object path encodes like kafka-python's own constructor; caching follows changes."""

from __future__ import annotations

from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from sandbox.handlers.metacache import fast_partition
from tests.sandbox.conftest import call

pytestmark = []


def test_it_encodes_fast_partitions_exactly_like_the_library():
    values = dict(
        error_code=0,
        partition_index=3,
        leader_id=2,
        leader_epoch=7,
        replica_nodes=[2, 1],
        isr_nodes=[2],
        offline_replicas=[1],
    )
    slow = MetadataResponse.MetadataResponseTopic.MetadataResponsePartition(**values)
    for version in (0, 5, 9, 12, 13):
        topic = MetadataResponse.MetadataResponseTopic
        a = MetadataResponse(
            version=version, topics=[topic(name="t", partitions=[slow], error_code=0)], brokers=[]
        )
        b = MetadataResponse(
            version=version,
            topics=[topic(name="t", partitions=[fast_partition(**values)], error_code=0)],
            brokers=[],
        )
        assert a.encode(version=version) == b.encode(version=version)


def test_it_serves_fresh_metadata_after_each_change(cluster):
    hostport = cluster.bootstrap_servers.split(",")[1]

    def leaders() -> dict[str, list[int]]:
        resp = call(hostport, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)
        return {
            t.name: [p.leader_id for p in sorted(t.partitions, key=lambda p: p.partition_index)]
            for t in resp.topics
        }

    cluster.create_topic("a", 2, 2, assignment=[[1, 2], [2, 1]])
    assert leaders() == {"a": [1, 2]}
    assert leaders() == {"a": [1, 2]}  # cached
    cluster.stop_broker(1)
    assert leaders() == {"a": [2, 2]}
    cluster.create_topic("b", 1, 1, assignment=[[3]])
    assert leaders() == {"a": [2, 2], "b": [3]}
    resp = call(hostport, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)
    a = next(t for t in resp.topics if t.name == "a")
    assert [p.offline_replicas for p in a.partitions] == [[1], [1]]
    assert [b.node_id for b in resp.brokers] == [2, 3]


def test_it_answers_unknown_and_invalid_topics_per_topic(cluster):
    hostport = cluster.bootstrap_servers.split(",")[0]
    req = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=n) for n in ("nope", "bad name")],
        allow_auto_topic_creation=False,
    )
    resp = call(hostport, req, 12)
    assert [(t.name, t.error_code) for t in resp.topics] == [("nope", 3), ("bad name", 17)]


def test_it_keeps_the_metadata_cache_of_two_clusters_apart(cluster):
    from sandbox.testing import running_sandbox

    with running_sandbox(brokers=1, controllers=0, speed=0) as other:
        cluster.create_topic("only-in-first", 1, 1)
        other.create_topic("only-in-second", 1, 1)
        for _ in range(2):
            for c, name in ((cluster, "only-in-first"), (other, "only-in-second")):
                for version in (9, 12):
                    resp = call(c.bootstrap_servers.split(",")[0], MetadataRequest(topics=None), version)
                    assert [t.name for t in resp.topics] == [name]
        assert other.bootstrap_controllers == ""


def test_it_serves_fresh_named_topic_metadata_after_changes(cluster):
    hostport = cluster.bootstrap_servers.split(",")[2]
    cluster.create_topic("n", 1, 2, assignment=[[1, 2]])
    req = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name="n")], allow_auto_topic_creation=False
    )
    call(hostport, MetadataRequest(topics=None), 12)  # build the cache
    assert call(hostport, req, 12).topics[0].partitions[0].leader_id == 1
    cluster.stop_broker(1)
    assert call(hostport, req, 12).topics[0].partitions[0].leader_id == 2
    cluster.start_broker(1)
    cluster.advance(1)
    assert call(hostport, req, 12).topics[0].partitions[0].isr_nodes == [2, 1]


def test_it_encodes_fast_log_dir_entries_exactly_like_the_library():
    from kafka.protocol.admin import DescribeLogDirsResponse

    from sandbox.apis import fast_factory

    cls = DescribeLogDirsResponse.DescribeLogDirsResult.DescribeLogDirsTopic.DescribeLogDirsPartition
    values = dict(partition_index=4, partition_size=123456789, offset_lag=0, is_future_key=False)
    topic = DescribeLogDirsResponse.DescribeLogDirsResult.DescribeLogDirsTopic
    for version in (1, 2, 4):
        a, b = (
            DescribeLogDirsResponse(
                version=version,
                error_code=0,
                results=[
                    DescribeLogDirsResponse.DescribeLogDirsResult(
                        error_code=0, log_dir="/d", topics=[topic(name="t", partitions=[p])]
                    )
                ],
            ).encode(version=version)
            for p in (cls(**values), fast_factory(cls)(**values))
        )
        assert a == b


def test_it_splices_pre_encoded_topics_exactly_like_the_library(cluster):
    from sandbox.handlers.metacache import splice_works

    assert all(splice_works(v) for v in range(14))
    for i in range(5):
        cluster.create_topic(f"s{i}", 3, 2)
    hostport = cluster.bootstrap_servers.split(",")[0]
    for version in (1, 9, 12, 13):
        spliced = call(hostport, MetadataRequest(topics=None), version)
        named = call(
            hostport,
            MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=f"s{i}") for i in range(5)]),
            version,
        )
        assert [t.to_dict() for t in spliced.topics] == [t.to_dict() for t in named.topics]
    cluster.stop_broker(3)
    after = call(hostport, MetadataRequest(topics=None), 12)
    assert all(3 not in p.isr_nodes for t in after.topics for p in t.partitions)


def test_a_named_metadata_joins_cached_entries_exactly_as_kafka_python_encodes_it(cluster, monkeypatch):
    """A named Metadata is the cached topics' encoded entries (and encoded error entries) joined
    like a full one: the same bytes kafka-python's own encoding of the response gives, for known,
    unknown and invalid names, after a change to one topic, at every flexible version."""
    import socket
    import struct

    from sandbox.handlers import meta
    from tests.sandbox.conftest import addr, recv_exact

    for i in range(3):
        cluster.create_topic(f"j{i}", 4, 2)
    hostport = cluster.bootstrap_servers.split(",")[0]
    names = ["j2", "nope", "j0", "bad name", "j1"]
    # Metadata names a random broker as controller (KRaft): pinned here, so the bytes compare
    monkeypatch.setattr(meta, "metadata_controller_id", lambda st: 1)

    def wire(version: int) -> bytes:
        req = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=n) for n in names],
            allow_auto_topic_creation=False,
        )
        req.with_header(correlation_id=7, client_id="sandbox-test")
        with socket.create_connection(addr(hostport), timeout=5) as sock:
            sock.sendall(req.encode(version=version, header=True, framed=True))
            return recv_exact(sock, struct.unpack(">i", recv_exact(sock, 4))[0])

    for step in ("cached", "after a change"):
        if step == "after a change":
            cluster.stop_broker(2)
        for version in (9, 12, 13):
            joined = wire(version)
            with monkeypatch.context() as m:
                m.setattr(meta, "splice_works", lambda v: False)  # kafka-python encodes the whole response
                assert wire(version) == joined, (step, version)
    decoded = MetadataResponse.decode(joined, version=13, header=True)
    assert [(t.name, t.error_code) for t in decoded.topics] == [
        ("j2", 0), ("nope", 3), ("j0", 0), ("bad name", 17), ("j1", 0)
    ]  # fmt: skip
