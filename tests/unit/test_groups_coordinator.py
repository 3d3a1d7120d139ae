"""Consumer-group offsets while the group coordinator is not ready (a new cluster's offsets topic)."""

from __future__ import annotations

import uuid

import pytest

from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, NewTopic, TopicPartition

pytestmark = pytest.mark.django_db


@pytest.fixture
def gw(kafka_cluster, sandbox):
    yield gateway_for(kafka_cluster)
    sandbox.clear_faults()


def _topic(gw) -> str:
    name = f"coord-{uuid.uuid4().hex[:8]}"
    assert not isinstance(gw.create_topics([NewTopic(name, 1, 1)])[name], KafkaOperationError)
    return name


@pytest.mark.parametrize(
    ("api", "code"),
    [
        ("FindCoordinator", 15),
        ("OffsetCommit", 14),
    ],  # COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS
)
def test_offsets_are_committed_once_the_coordinator_is_ready(gw, sandbox, api, code):
    tp = TopicPartition(_topic(gw), 0)
    group = f"coord-group-{uuid.uuid4().hex[:8]}"
    sandbox.inject_fault(api, error_code=code, count=2)
    result = gw.alter_consumer_group_offsets(group, {tp: 0})
    assert not isinstance(result[tp], KafkaOperationError), result
    assert gw.list_consumer_group_offsets([group])[group] == {tp: 0}


def test_a_coordinator_that_never_comes_is_reported_after_the_timeout(gw, sandbox, kafka_cluster):
    tp = TopicPartition(_topic(gw), 0)
    sandbox.inject_fault("FindCoordinator", error_code=15)
    with pytest.raises(KafkaOperationError) as caught:
        gw.alter_consumer_group_offsets(f"coord-group-{uuid.uuid4().hex[:8]}", {tp: 0})
    assert caught.value.name == "COORDINATOR_NOT_AVAILABLE"
