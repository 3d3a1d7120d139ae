"""topic_health: the overview's counts from one Metadata answer, equal to the full metadata's summary."""

from __future__ import annotations

import pytest

from console.kafka import KafkaOperationError
from console.kafka.cluster import summarize

from .conftest import eventually

pytestmark = pytest.mark.contract


def test_topic_health_equals_the_summary_of_the_full_metadata(gw, topics):
    name = topics.create(partitions=3)
    eventually(gw.list_topics_metadata, lambda m: any(t.name == name for t in m.topics))

    def both():  # topics other tests create and delete come and go between the two reads
        return gw.topic_health(), summarize(gw.list_topics_metadata().topics)

    health, full = eventually(both, lambda pair: pair[0] == pair[1])
    assert health.topic_count >= 1 and health.partition_count >= 3


def test_topic_health_is_broker_only(cgw):
    with pytest.raises(KafkaOperationError) as exc:
        cgw.topic_health()
    assert exc.value.name == "UNSUPPORTED_ENDPOINT_TYPE"
