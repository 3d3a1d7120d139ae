"""KIP-919 direct-to-controller mode: the controller API subset, and nothing else."""

from __future__ import annotations

import pytest

from console.kafka import (
    AclBinding,
    AclBindingFilter,
    ConfigChange,
    ConfigResource,
    KafkaOperationError,
    NewTopic,
    Ok,
    TopicPartition,
)

from .conftest import describe, eventually, unique

pytestmark = pytest.mark.contract


def test_describe_cluster_lists_controllers(cgw, gw):
    info = cgw.describe_cluster()
    assert info.endpoint_type == "controller"
    assert info.cluster_id == gw.describe_cluster().cluster_id
    ids = {c.id for c in info.brokers}
    assert info.controller_id in ids
    assert not ids & {b.id for b in gw.describe_cluster().brokers}


def test_test_connection(cgw):
    check = cgw.test_connection()
    assert check.endpoint_type == "controller" and check.broker_count >= 1


def test_quorum_leader_is_active_controller(cgw):
    info = cgw.describe_cluster()
    q = cgw.describe_quorum()
    assert q.leader_id == info.controller_id
    assert {v.id for v in q.voters} == {c.id for c in info.brokers}


def test_features(cgw):
    assert "metadata.version" in cgw.describe_features()


def test_controller_configs(cgw):
    node = str(cgw.describe_cluster().controller_id)
    res = ConfigResource("BROKER", node)
    cfg = cgw.describe_configs([res])[res]
    assert not isinstance(cfg, KafkaOperationError), cfg
    assert cfg["node.id"].value == node
    logger = ConfigResource("BROKER_LOGGER", node)
    out = cgw.incremental_alter_configs(
        {logger: [ConfigChange("org.apache.kafka.controller", "SET", "DEBUG")]}, validate_only=True
    )
    assert out == {logger: Ok()}


def test_unknown_controller_id(cgw):
    res = ConfigResource("BROKER", "424242")
    assert isinstance(cgw.describe_configs([res])[res], KafkaOperationError)


def test_topic_configs_through_controllers(cgw, topics):
    name = topics.create()
    res = ConfigResource("TOPIC", name)
    out = cgw.incremental_alter_configs({res: [ConfigChange("retention.ms", "SET", "86400000")]})
    assert out == {res: Ok()}
    cfg = eventually(
        lambda: cgw.describe_configs([res])[res],
        lambda c: isinstance(c, dict) and c["retention.ms"].value == "86400000",
    )
    assert cfg["retention.ms"].source == "DYNAMIC_TOPIC_CONFIG"


def test_acls_through_controllers(cgw):
    name = unique("cacl")
    binding = AclBinding("TOPIC", name, "LITERAL", f"User:{name}", "*", "READ", "ALLOW")
    f = AclBindingFilter(principal=f"User:{name}")
    assert cgw.create_acls([binding]) == {binding: Ok()}
    assert eventually(lambda: cgw.describe_acls(f)) == (binding,)
    assert cgw.delete_acls([f]) == {f: (binding,)}


def test_reassignments_through_controllers(cgw, gw, topics, broker_ids):
    a, b = broker_ids[:2]
    name = topics.create(replica_assignment=((a,),))
    tp = TopicPartition(name, 0)
    assert isinstance(cgw.list_partition_reassignments(), dict)
    assert cgw.alter_partition_reassignments({tp: (b,)}) == {tp: Ok()}
    eventually(lambda: describe(gw, name).partitions[0].replicas, lambda r: r == (b,), timeout=30)
    assert cgw.elect_leaders("PREFERRED", [tp])[tp].name == "ELECTION_NOT_NEEDED"


@pytest.mark.parametrize(
    "call",
    [
        lambda g: g.list_topics_metadata(),
        lambda g: g.topic_summary(),
        lambda g: g.describe_topics(["x"]),
        lambda g: g.create_topics([NewTopic("x", 1, 1)]),
        lambda g: g.delete_topics(["x"]),
        lambda g: g.describe_log_dirs(),
        lambda g: g.list_offsets([TopicPartition("x", 0)]),
    ],
)
def test_broker_only_operations_are_unsupported(cgw, call):
    with pytest.raises(KafkaOperationError) as exc:
        call(cgw)
    assert exc.value.name == "UNSUPPORTED_ENDPOINT_TYPE"
    assert exc.value.operator_text
