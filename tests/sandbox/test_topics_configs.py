"""Topic creation errors and config descriptions as Kafka 4.1 reports them, through real clients."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

pytestmark = []


@pytest.fixture
def admin(cluster):
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers})


def _err(fut) -> tuple[int, str]:
    with pytest.raises(KafkaException) as info:
        fut.result(10)
    e = info.value.args[0]
    return e.code(), e.str()


@pytest.mark.parametrize(
    "topic,code,text",
    [
        (NewTopic("t", 3, 4), 38, "only 3 broker(s) are registered"),
        (NewTopic("t", 0, 1), 37, "invalid non-positive value"),
        (NewTopic("bad name", 1, 1), 17, "contains one or more characters"),
        (NewTopic("t", 1, 1, config={"retention.ms": "abc"}), 40, "Not a number of type LONG"),
        (NewTopic("t", 1, 1, config={"no.such": "1"}), 40, "Unknown topic config name: no.such"),
        (
            NewTopic("t", 1, 1, config={"cleanup.policy": "bogus"}),
            40,
            "String must be one of: compact, delete",
        ),
        (NewTopic("t", 1, replica_assignment=[[1, 1]]), 39, "includes the broker 1 more than once"),
        (NewTopic("t", 1, replica_assignment=[[1, 9]]), 39, "broker 9, but no such broker is registered"),
    ],
)
def test_it_rejects_topics_like_kafka(admin, topic, code, text):
    got_code, msg = _err(admin.create_topics([topic])[topic.topic])
    assert got_code == code and text in msg


def test_it_validates_without_creating_and_then_refuses_duplicates(cluster, admin):
    admin.create_topics([NewTopic("v", 2, 2)], validate_only=True)["v"].result(10)
    assert "v" not in cluster.state.topics
    admin.create_topics([NewTopic("v", 2, 2)])["v"].result(10)
    assert [len(p.replicas) for p in cluster.state.topics["v"].partitions] == [2, 2]
    assert _err(admin.create_topics([NewTopic("v", 1, 1)])["v"]) == (36, "Topic 'v' already exists.")
    admin.create_partitions([NewPartitions("v", 4)])["v"].result(10)
    assert len(cluster.state.topics["v"].partitions) == 4
    assert _err(admin.create_partitions([NewPartitions("v", 3)])["v"])[0] == 37


def test_it_spreads_replicas_over_racks(cluster, admin):
    admin.create_topics([NewTopic("racks", 6, 3)])["racks"].result(10)
    for p in cluster.state.topics["racks"].partitions:
        assert sorted(p.replicas) == [1, 2, 3]
    assert len({p.replicas[0] for p in cluster.state.topics["racks"].partitions}) == 3


def test_it_describes_sources_synonyms_and_hides_sensitive_values(cluster, admin):
    cluster.create_topic("cfg", 1, 1, configs={"retention.ms": "1000"})
    cluster.set_broker_config("", "min.insync.replicas", "2")
    res = ConfigResource("topic", "cfg")
    cfg = admin.describe_configs([res])[res].result(10)
    assert cfg["retention.ms"].value == "1000" and cfg["retention.ms"].source == 1
    mir = cfg["min.insync.replicas"]
    assert (mir.value, mir.source) == ("2", 3)
    assert "min.insync.replicas" in mir.synonyms
    broker = ConfigResource("broker", "1")
    bcfg = admin.describe_configs([broker])[broker].result(10)
    assert bcfg["ssl.key.password"].is_sensitive and bcfg["ssl.key.password"].value is None
    assert bcfg["log.dirs"].is_read_only and bcfg["log.dirs"].source == 4
    assert bcfg["broker.rack"].value == "r1"


def test_it_applies_a_create_topic_policy_like_kafka():
    from sandbox.testing import running_sandbox

    def policy(name: str, partitions: int, rf: int, configs: dict[str, str]) -> str | None:
        return None if rf >= 2 else f"Topic {name} must have replication factor >= 2"

    with running_sandbox(brokers=3, controllers=0, speed=0, create_topic_policy=policy) as c:
        admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
        assert _err(admin.create_topics([NewTopic("lone", 1, 1)], validate_only=True)["lone"]) == (
            44,
            "Topic lone must have replication factor >= 2",
        )
        admin.create_topics([NewTopic("safe", 1, 2)])["safe"].result(10)
        assert "safe" in c.state.topics


def _broker_value(cluster, broker: str, key: str) -> str | None:
    """The value broker 1 (or, for "", any broker) describes, over the wire (librdkafka refuses "")."""
    got = _broker_entry(cluster, broker, key)
    return "(absent)" if got is None else got[0]


def _broker_entry(cluster, broker: str, key: str) -> tuple | None:
    """(value, source, [(synonym, value, source)]) over the wire (librdkafka keys synonyms by name)."""
    from kafka.protocol.admin import DescribeConfigsRequest

    from tests.sandbox.conftest import call

    R = DescribeConfigsRequest.DescribeConfigsResource
    req = DescribeConfigsRequest(
        resources=[R(resource_type=4, resource_name=broker, configuration_keys=[key])],
        include_synonyms=True,
        include_documentation=False,
    )
    node = cluster.bootstrap_servers.split(",")[int(broker or 1) - 1]
    configs = {
        c.name: (c.value, c.config_source, [(y.name, y.value, y.source) for y in c.synonyms])
        for c in call(node, req, 4).results[0].configs
    }
    return configs.get(key)


def _alter_broker(cluster, broker: str, key: str, op: int, value: str | None = None) -> None:
    from kafka.protocol.admin import IncrementalAlterConfigsRequest

    from tests.sandbox.conftest import call

    R = IncrementalAlterConfigsRequest.AlterConfigsResource
    req = IncrementalAlterConfigsRequest(
        resources=[R(resource_type=4, resource_name=broker, configs=[R.AlterableConfig(key, op, value)])],
        validate_only=False,
    )
    node = cluster.bootstrap_servers.split(",")[int(broker or 1) - 1]
    assert call(node, req, 1).responses[0].error_code == 0


def test_it_lists_a_broker_configs_synonyms_like_kafka(cluster, admin):
    # Kafka 4.1: an unset log.retention.ms is null with no synonyms; set per broker it lists
    # log.retention.hours (default) after itself.
    res = ConfigResource(ConfigResource.Type.BROKER, "1")
    unset = admin.describe_configs([res])[res].result(10)["log.retention.ms"]
    assert (unset.value, unset.source, list(unset.synonyms)) == (None, 5, [])
    _alter_broker(cluster, "1", "log.retention.ms", 0, "-5")
    got = admin.describe_configs([res])[res].result(10)["log.retention.ms"]
    assert [(s.name, s.value, s.source) for s in got.synonyms.values()] == [
        ("log.retention.ms", "-5", 2),
        ("log.retention.hours", "168", 5),
    ]
    assert (got.value, got.source) == ("-5", 2)


def test_it_applies_broker_configs_after_the_lag_like_kafkas_metadata_log(cluster):
    import time

    cluster.set_broker_config_lag(1.0)
    start = time.monotonic()
    _alter_broker(cluster, "2", "log.cleaner.backoff.ms", 0, "16001")
    _alter_broker(cluster, "", "log.cleaner.backoff.ms", 0, "17003")
    # The controller committed both (the next change validates against them) ...
    assert cluster.state.broker_configs["2"] == {"log.cleaner.backoff.ms": "16001"}
    assert cluster.state.broker_configs[""] == {"log.cleaner.backoff.ms": "17003"}
    # ... but the brokers describe the old values until they have applied the records.
    assert _broker_value(cluster, "2", "log.cleaner.backoff.ms") == "15000"
    assert _broker_value(cluster, "", "log.cleaner.backoff.ms") == "(absent)"
    # Half-way, as Kafka's DynamicBrokerConfig: the synonyms (dynamic maps) show it, the value not yet.
    time.sleep(max(0.0, start + 0.65 - time.monotonic()))
    half = _broker_entry(cluster, "2", "log.cleaner.backoff.ms")
    assert time.monotonic() - start < 1.0, "the machine was too slow to look half-way"
    assert half == (
        "15000",
        2,
        [
            ("log.cleaner.backoff.ms", "16001", 2),
            ("log.cleaner.backoff.ms", "17003", 3),
            ("log.cleaner.backoff.ms", "15000", 5),
        ],
    )
    time.sleep(max(0.0, start + 1.1 - time.monotonic()))
    assert _broker_value(cluster, "2", "log.cleaner.backoff.ms") == "16001"
    assert _broker_value(cluster, "", "log.cleaner.backoff.ms") == "17003"
    assert _broker_value(cluster, "1", "log.cleaner.backoff.ms") == "17003"
