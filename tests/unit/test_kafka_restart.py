"""The gateway notices a broker that came back, without waiting for its metadata to age out."""

from __future__ import annotations

import pytest

from console.kafka import ClusterConnection, ConfigResource, KafkaGateway, KafkaOperationError
from sandbox.testing import running_sandbox


@pytest.fixture
def own_sandbox():
    with running_sandbox(brokers=3, controllers=1, port=0) as cluster:
        yield cluster


def test_it_reaches_a_restarted_broker(own_sandbox):
    gw = KafkaGateway(ClusterConnection(bootstrap_servers=own_sandbox.bootstrap_servers, request_timeout_s=5))
    try:
        own_sandbox.stop_broker(2)
        gw.close()  # a fresh client whose first metadata has no broker 2
        res = ConfigResource("BROKER", "2")
        down = gw.describe_configs([res])[res]
        assert isinstance(down, KafkaOperationError) and down.name == "BROKER_NOT_AVAILABLE"
        own_sandbox.start_broker(2)
        back = gw.describe_configs([res])[res]
        assert not isinstance(back, KafkaOperationError), back
        assert back["broker.id"].value == "2"
        logs = gw.describe_log_dirs([2])[2]
        assert not isinstance(logs, KafkaOperationError), logs
    finally:
        gw.close()
