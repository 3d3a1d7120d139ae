"""The gateway's lean override read (``config_overrides``, console/kafka/config_values_read.py) gives
the overrides the reassignment area's reader finds over ``describe_configs`` (``throttles.current_values``,
its values that are not None) on the
sandbox or a real Kafka: topic throttled-replicas overrides, a broker's own rate, an unknown topic's
error, and topics and brokers without overrides."""

from __future__ import annotations

import time

import pytest

from console.kafka import ConfigChange, ConfigResource, KafkaOperationError
from console.reassignment import throttles

pytestmark = [pytest.mark.contract]

NAMES = throttles.REPLICA_CONFIGS + throttles.RATE_CONFIGS


def test_lean_overrides_equal_the_full_describe_configs_reading(gw, topics, broker_ids):
    moving, quiet = topics.create(partitions=2), topics.create()
    broker = str(broker_ids[0])
    rate = ConfigResource("BROKER", broker)
    had = throttles.current_values(gw, [rate], throttles.RATE_CONFIGS)[(rate, throttles.LEADER_RATE)]
    gw.incremental_alter_configs(
        {
            ConfigResource("TOPIC", moving): [
                ConfigChange(throttles.LEADER_REPLICAS, "SET", f"0:{broker}"),
                ConfigChange(throttles.FOLLOWER_REPLICAS, "SET", "*"),
            ],
            rate: [ConfigChange(throttles.LEADER_RATE, "SET", "123456789")],
        }
    )
    try:
        resources = [
            ConfigResource("TOPIC", moving),
            ConfigResource("TOPIC", quiet),
            ConfigResource("TOPIC", moving + ".absent"),
            *(ConfigResource("BROKER", str(b)) for b in broker_ids),
            ConfigResource("BROKER", ""),
        ]
        # Kafka answers the change once its controller committed it; each broker applies it from
        # the metadata log a little later, so the two reads compare once every broker asked has it
        deadline = time.monotonic() + 15
        while True:
            lean = gw.config_overrides(resources, NAMES)
            errors: dict = {}
            full = throttles.current_values(gw, resources, NAMES, strict=False, errors=errors)
            seen = (lean[rate].get(throttles.LEADER_RATE), full[(rate, throttles.LEADER_RATE)])
            topic = ConfigResource("TOPIC", moving)
            seen += (lean[topic].get(throttles.FOLLOWER_REPLICAS), full[(topic, throttles.FOLLOWER_REPLICAS)])
            if seen == ("123456789", "123456789", "*", "*") or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert list(lean) == resources
        for res in resources:
            if res in errors:
                assert isinstance(lean[res], KafkaOperationError) and lean[res].name == errors[res].name, res
            else:
                assert lean[res] == {n: full[(res, n)] for n in NAMES if full[(res, n)] is not None}, res
        assert lean[ConfigResource("TOPIC", moving)][throttles.LEADER_REPLICAS] == f"0:{broker}"
        assert lean[ConfigResource("TOPIC", moving)][throttles.FOLLOWER_REPLICAS] == "*"
        assert lean[rate][throttles.LEADER_RATE] == "123456789"
        assert lean[ConfigResource("TOPIC", quiet)] == {}
        assert lean[ConfigResource("TOPIC", moving + ".absent")].name == "UNKNOWN_TOPIC_OR_PARTITION"
    finally:
        undo = "DELETE" if had is None else "SET"
        gw.incremental_alter_configs({rate: [ConfigChange(throttles.LEADER_RATE, undo, had)]})
