"""The lean overrides reader (``gateway.config_overrides``) and the reassignment area's reader built on
it (``throttles.current_values``) take any iterable of resources, a generator too: the throttle step
passes one, and a reader that walked it twice answered nothing (the previous rates then looked unset
and were deleted instead of restored)."""

from __future__ import annotations

import pytest

from console.clusters.actions import gateway_for
from console.kafka import ConfigResource
from console.reassignment import throttles

pytestmark = pytest.mark.django_db

RATE = throttles.LEADER_RATE


def test_a_generator_of_resources_is_read_once_and_answered(sandbox, kafka_cluster):
    gw = gateway_for(kafka_cluster)
    sandbox.set_broker_config("2", RATE, "777777")
    try:
        names = [("BROKER", "2"), ("BROKER", "1")]
        got = gw.config_overrides((ConfigResource(t, n) for t, n in names), [RATE])
        assert got == {ConfigResource("BROKER", "2"): {RATE: "777777"}, ConfigResource("BROKER", "1"): {}}
        values = throttles.current_values(gw, (ConfigResource(t, n) for t, n in names), [RATE])
        assert values == {
            (ConfigResource("BROKER", "2"), RATE): "777777",
            (ConfigResource("BROKER", "1"), RATE): None,
        }
    finally:
        sandbox.set_broker_config("2", RATE, None)
