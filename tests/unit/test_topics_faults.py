"""Faults: a broker down, a timeout mid-batch, an injected error — clear outcomes, nothing silently lost."""

from __future__ import annotations

import time
import uuid

import pytest

from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.models import AuditEvent
from console.topics import actions as topics
from console.topics import cache as metadata_cache
from console.topics import reads as topic_reads
from console.topics.batch import TopicSpec

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clean(sandbox):
    metadata_cache.clear()
    yield
    sandbox.clear_faults()
    metadata_cache.clear()


def uniq(prefix="f") -> str:
    return f"{prefix}.{uuid.uuid4().hex[:10]}"


def test_a_timed_out_create_is_re_read_and_reported_as_unknown(personas, kafka_cluster, sandbox):
    kafka_cluster.request_timeout_s = 1
    kafka_cluster.save()
    name = uniq("slow")
    sandbox.inject_fault("CreateTopics", delay_s=2.5, count=1)
    result = topics.create_topics(
        actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 1, 1)]
    )
    (outcome,) = result.outcomes
    assert (outcome.ok, outcome.status, outcome.error_name) == (False, "unknown", "REQUEST_TIMED_OUT")
    assert "may still appear" in outcome.message
    event = AuditEvent.objects.get(pk=result.event_id)
    assert event.outcomes[f"topic:{name}"]["status"] == "unknown"
    time.sleep(2)  # the broker finishes the request after the client gave up
    assert not isinstance(gateway_for(kafka_cluster).describe_topics([name])[name], KafkaOperationError)


def test_an_injected_error_fails_every_topic_with_its_name(personas, kafka_cluster, sandbox):
    sandbox.inject_fault("CreateTopics", error_code=38, count=1)  # INVALID_REPLICATION_FACTOR
    result = topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[TopicSpec(uniq(), 1, 1), TopicSpec(uniq(), 1, 1)],
    )
    assert [(o.status, o.error_name) for o in result.outcomes] == [
        ("invalid", "INVALID_REPLICATION_FACTOR")
    ] * 2
    assert AuditEvent.objects.get(pk=result.event_id).outcome == "failure"


def test_with_a_broker_down_rf_is_checked_and_unhealthy_topics_are_listed(personas, kafka_cluster, sandbox):
    name = uniq("ha")
    topics.create_topics(actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 3, 3)])
    sandbox.stop_broker(3)
    try:
        # Metadata names the stopped broker until the cluster notices (as Kafka does until the broker's
        # session times out): wait for that, or the console's own RF check counts 3 live brokers.
        deadline = time.monotonic() + 10
        while len(metadata_cache.get_snapshot(kafka_cluster, refresh=True).broker_ids) != 2:
            assert time.monotonic() < deadline, "the metadata still names 3 brokers"
            time.sleep(0.1)
        result = topics.create_topics(
            actor=personas["operator"],
            cluster=kafka_cluster,
            specs=[TopicSpec(uniq(), 1, 3)],
            validate_only=True,
        )
        assert not result.outcomes[0].ok
        assert "larger than the 2 live brokers" in result.outcomes[0].message
        page = topic_reads.list_topics(
            actor=personas["viewer"], cluster=kafka_cluster, query=name, unhealthy_only=True, refresh=True
        )
        assert [i.row.name for i in page.items] == [name]
        assert page.items[0].row.under_replicated == 3
        detail = topic_reads.describe_topic(actor=personas["viewer"], cluster=kafka_cluster, name=name)
        assert all(3 not in p.isr for p in detail.partitions)
    finally:
        sandbox.start_broker(3)
