"""Consumer groups through the gateway: committed offsets written and read back, unknown groups named."""

from __future__ import annotations

import uuid

import pytest

from console.kafka import KafkaOperationError, TopicPartition

pytestmark = pytest.mark.contract


def test_it_reads_back_offsets_committed_for_an_inactive_group(gw, topics):
    topic = topics.create(partitions=2)
    group = f"contract-group-{uuid.uuid4().hex[:8]}"
    tps = {TopicPartition(topic, 0): 0, TopicPartition(topic, 1): 0}  # offset 0 is valid on empty logs
    result = gw.alter_consumer_group_offsets(group, tps)
    assert all(not isinstance(r, KafkaOperationError) for r in result.values()), result
    listed = {g.group_id: g for g in gw.list_consumer_groups()}
    assert group in listed
    offsets = gw.list_consumer_group_offsets([group, "no-such-group-" + uuid.uuid4().hex[:6]])
    assert offsets[group] == tps
    missing = [v for k, v in offsets.items() if k != group]
    assert len(missing) == 1 and missing[0].name == "GROUP_ID_NOT_FOUND"
