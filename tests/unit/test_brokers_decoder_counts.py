"""The Brokers page's per-broker counts and the overview's topic counts as the Metadata decoder made
them (``DeferredTopics.broker_counts``, ``DeferredTopics.healths``) equal what the Python passes
over the same topics give, on the sandbox with offline and under-replicated partitions."""

from __future__ import annotations

import uuid

import pytest

from console.brokers import figures, overview
from console.clusters.actions import gateway_for
from console.kafka.deferred import DeferredTopics
from console.topics import cache as metadata_cache
from tests.unit.matrix_world import kafka_restored

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def test_the_decoders_counts_equal_the_python_pass_with_a_broker_down(kafka_cluster, frozen):
    with kafka_restored(frozen):
        name = f"cnt.{uuid.uuid4().hex[:10]}"
        frozen.create_topic(name, assignment=[[3, 1], [3], [1, 2, 3], [2, 3]])
        frozen.stop_broker(3)
        try:
            topics = gateway_for(kafka_cluster).list_topics_metadata().topics
            assert isinstance(topics, DeferredTopics) and topics.broker_counts
            by_decoder = figures.count_by_broker(topics)
            by_python = figures.count_by_broker(tuple(topics))  # a tuple: the Python pass
            assert by_decoder == by_python
            assert by_decoder[3].offline >= 1 and by_decoder[3].out_of_isr >= 3  # the stopped broker
            assert sum(c.replicas for c in by_decoder.values()) == sum(
                len(p.replicas) for t in topics for p in t.partitions
            )

            snap = metadata_cache.build_snapshot(gateway_for(kafka_cluster).list_topics_metadata())
            summary, unhealthy = overview._scan(snap)
            plain = metadata_cache.build_snapshot(
                type(snap.metadata)(
                    snap.metadata.cluster_id,
                    snap.metadata.controller_id,
                    snap.metadata.brokers,
                    tuple(topics),
                )
            )
            assert (summary, unhealthy) == overview._scan(plain)  # the TopicMetadata pass
            assert name in dict(unhealthy) and summary.offline >= 1 and summary.under_replicated >= 2
        finally:
            frozen.start_broker(3)


def test_without_decoder_counts_the_python_pass_is_used():
    from console.kafka import PartitionMetadata, TopicMetadata

    t = TopicMetadata("a", (PartitionMetadata(0, 1, (1, 2), (1,)),))
    got = figures.count_by_broker([t])
    assert got == {1: figures.Counts(1, 1, 1, 0, 0), 2: figures.Counts(1, 0, 1, 1, 0)}
