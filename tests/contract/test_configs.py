"""DescribeConfigs / IncrementalAlterConfigs contract (KIP-133, KIP-339)."""

from __future__ import annotations

import pytest

from console.kafka import ConfigChange, ConfigResource, KafkaOperationError, Ok

from .conftest import eventually, unique

pytestmark = pytest.mark.contract


def _configs(gw, res):
    out = eventually(
        lambda: gw.describe_configs([res])[res], lambda r: not isinstance(r, KafkaOperationError)
    )
    assert not isinstance(out, KafkaOperationError), out
    return out


def test_topic_configs_sources(gw, topics):
    name = topics.create(configs={"retention.ms": "123456"})
    res = ConfigResource("TOPIC", name)
    cfg = _configs(gw, res)
    r = cfg["retention.ms"]
    assert r.value == "123456" and r.source == "DYNAMIC_TOPIC_CONFIG" and not r.default
    assert not r.read_only and not r.sensitive
    assert any(s.source == "DYNAMIC_TOPIC_CONFIG" for s in r.synonyms)
    seg = cfg["segment.bytes"]
    assert seg.source in ("DEFAULT_CONFIG", "STATIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    assert seg.value and int(seg.value) > 0
    assert cfg["cleanup.policy"].documentation
    assert cfg["cleanup.policy"].type == "LIST"


def test_the_topic_lists_keyed_read_equals_the_full_read(gw, topics):
    """The topic list asks DescribeConfigs for its three columns only (``keys``): Kafka answers
    exactly those entries, with the values, sources and defaults of the full read."""
    from console.topics.list_configs import LIST_CONFIG_KEYS, list_configs

    set_name = topics.create(configs={"cleanup.policy": "compact", "min.insync.replicas": "1"})
    default_name = topics.create()
    resources = [ConfigResource("TOPIC", set_name), ConfigResource("TOPIC", default_name)]
    full = {r: _configs(gw, r) for r in resources}
    keyed = eventually(
        lambda: gw.describe_configs(resources, include_documentation=False, keys=list(LIST_CONFIG_KEYS)),
        lambda got: not any(isinstance(v, KafkaOperationError) for v in got.values()),
    )
    for res in resources:
        assert set(keyed[res]) == set(LIST_CONFIG_KEYS)
        for key in LIST_CONFIG_KEYS:
            a, b = keyed[res][key], full[res][key]
            assert (a.value, a.source, a.default, a.read_only) == (b.value, b.source, b.default, b.read_only)
    assert list_configs(keyed) == list_configs(full)
    assert list_configs(keyed)[set_name]["cleanup.policy"] == "compact"


def test_broker_configs_read_only_and_sensitive(gw, broker_ids):
    res = ConfigResource("BROKER", str(broker_ids[0]))
    cfg = _configs(gw, res)
    assert cfg["node.id"].value == str(broker_ids[0])
    assert cfg["node.id"].read_only
    assert cfg["node.id"].source == "STATIC_BROKER_CONFIG"
    sensitive = [e for e in cfg.values() if e.sensitive]
    assert sensitive, "a broker always has password-type configs"
    assert all(e.value is None for e in sensitive)
    assert not cfg["num.io.threads"].read_only
    assert cfg["log.retention.hours"].read_only  # not dynamically updatable


def test_broker_default_and_unknown_resources(gw):
    missing = ConfigResource("TOPIC", unique("missing"))
    default = ConfigResource("BROKER", "")
    out = gw.describe_configs([default, missing, ConfigResource("BROKER", "999999")])
    assert isinstance(out[default], dict)
    assert all(e.source == "DYNAMIC_DEFAULT_BROKER_CONFIG" for e in out[default].values())
    assert out[missing].name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert isinstance(out[ConfigResource("BROKER", "999999")], KafkaOperationError)


def test_broker_logger_levels(gw, broker_ids):
    res = ConfigResource("BROKER_LOGGER", str(broker_ids[0]))
    cfg = _configs(gw, res)
    assert cfg and all(
        e.value in ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF") for e in cfg.values()
    )


def test_incremental_set_and_delete(gw, topics):
    name = topics.create()
    res = ConfigResource("TOPIC", name)
    assert gw.incremental_alter_configs(
        {
            res: [
                ConfigChange("retention.ms", "SET", "7200000"),
                ConfigChange("max.message.bytes", "SET", "2000000"),
            ]
        }
    ) == {res: Ok()}
    cfg = eventually(lambda: _configs(gw, res), lambda c: c["retention.ms"].value == "7200000")
    assert cfg["retention.ms"].source == "DYNAMIC_TOPIC_CONFIG"
    assert cfg["max.message.bytes"].value == "2000000"
    assert gw.incremental_alter_configs({res: [ConfigChange("retention.ms", "DELETE")]}) == {res: Ok()}
    cfg = eventually(lambda: _configs(gw, res), lambda c: c["retention.ms"].source != "DYNAMIC_TOPIC_CONFIG")
    assert cfg["retention.ms"].source != "DYNAMIC_TOPIC_CONFIG"
    assert cfg["max.message.bytes"].value == "2000000"


def test_append_and_subtract_list_values(gw, topics):
    name = topics.create()
    res = ConfigResource("TOPIC", name)
    assert gw.incremental_alter_configs({res: [ConfigChange("cleanup.policy", "APPEND", "compact")]}) == {
        res: Ok()
    }
    cfg = eventually(lambda: _configs(gw, res), lambda c: "compact" in c["cleanup.policy"].value)
    assert set(cfg["cleanup.policy"].value.split(",")) == {"delete", "compact"}
    assert gw.incremental_alter_configs({res: [ConfigChange("cleanup.policy", "SUBTRACT", "delete")]}) == {
        res: Ok()
    }
    cfg = eventually(lambda: _configs(gw, res), lambda c: c["cleanup.policy"].value == "compact")
    assert cfg["cleanup.policy"].value == "compact"


def test_validate_only_changes_nothing(gw, topics):
    name = topics.create()
    res = ConfigResource("TOPIC", name)
    before = _configs(gw, res)["retention.ms"]
    assert gw.incremental_alter_configs(
        {res: [ConfigChange("retention.ms", "SET", "1000")]}, validate_only=True
    ) == {res: Ok()}
    assert _configs(gw, res)["retention.ms"] == before


def test_rejections_are_per_resource(gw, topics):
    good = ConfigResource("TOPIC", topics.create())
    unknown_key = ConfigResource("TOPIC", topics.create())
    bad_value = ConfigResource("TOPIC", topics.create())
    missing = ConfigResource("TOPIC", unique("missing"))
    out = gw.incremental_alter_configs(
        {
            good: [ConfigChange("retention.ms", "SET", "60000")],
            unknown_key: [ConfigChange("no.such.config", "SET", "1")],
            bad_value: [ConfigChange("retention.ms", "SET", "soon")],
            missing: [ConfigChange("retention.ms", "SET", "60000")],
        }
    )
    assert out[good] == Ok()
    assert out[unknown_key].name == "INVALID_CONFIG"
    assert out[bad_value].name == "INVALID_CONFIG"
    assert out[missing].name == "UNKNOWN_TOPIC_OR_PARTITION"


def test_read_only_broker_config_rejected(gw, broker_ids):
    res = ConfigResource("BROKER", str(broker_ids[0]))
    out = gw.incremental_alter_configs({res: [ConfigChange("node.id", "SET", "77")]}, validate_only=True)
    assert out[res].name == "INVALID_REQUEST" or out[res].name == "INVALID_CONFIG"


def test_dynamic_broker_config_roundtrip(gw, broker_ids):
    res = ConfigResource("BROKER", str(broker_ids[0]))
    change = ConfigChange("leader.replication.throttled.rate", "SET", "10485760")
    assert gw.incremental_alter_configs({res: [change]}) == {res: Ok()}
    try:
        cfg = eventually(
            lambda: _configs(gw, res),
            lambda c: (
                c.get("leader.replication.throttled.rate") is not None
                and c["leader.replication.throttled.rate"].value == "10485760"
            ),
        )
        assert cfg["leader.replication.throttled.rate"].source == "DYNAMIC_BROKER_CONFIG"
    finally:
        gw.incremental_alter_configs({res: [ConfigChange("leader.replication.throttled.rate", "DELETE")]})


def test_a_broker_key_lists_synonyms_of_other_names_only_after_its_own(gw, broker_ids):
    """Kafka's ConfigHelper: log.retention.ms set per broker lists log.retention.hours (default) after
    itself; unset it is null with no synonyms, so the hours value is not the key's (console/configs/plan)."""
    res = ConfigResource("BROKER", str(broker_ids[-1]))
    key = "log.retention.ms"
    assert (_configs(gw, res)[key].value, _configs(gw, res)[key].synonyms) == (None, ())
    assert gw.incremental_alter_configs({res: [ConfigChange(key, "SET", "-5")]})[res] == Ok()
    try:
        got = eventually(lambda: _configs(gw, res)[key], lambda e: e.value == "-5")
        assert got.source == "DYNAMIC_BROKER_CONFIG"
        assert [(s.name, s.value, s.source) for s in got.synonyms] == [
            (key, "-5", "DYNAMIC_BROKER_CONFIG"),
            ("log.retention.hours", "168", "DEFAULT_CONFIG"),
        ]
    finally:
        gw.incremental_alter_configs({res: [ConfigChange(key, "DELETE", None)]})
    gone = eventually(lambda: _configs(gw, res)[key], lambda e: e.value is None)
    assert (gone.source, gone.synonyms) == ("DEFAULT_CONFIG", ())
