"""The overview's health figures (counted straight from Metadata) equal the full metadata's summary,
with under-replicated and offline partitions present, and the page shows them."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from console.clusters.actions import gateway_for
from console.kafka.cluster import summarize
from tests.unit.matrix_world import kafka_restored
from tests.unit.overview_cards import card

# the page keeps its figures with the metadata snapshot: another test's snapshot must not answer here
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


@pytest.fixture
def restored(frozen):
    with kafka_restored(frozen):
        yield frozen


def test_counts_equal_the_full_metadata_summary_with_a_broker_down(client, personas, kafka_cluster, restored):
    gw = gateway_for(kafka_cluster)
    restored.create_topic(f"ovh.{uuid.uuid4().hex[:10]}", assignment=[[3, 1], [3], [1, 2]])
    restored.stop_broker(3)
    try:
        health = gw.topic_health()
        full = summarize(gw.list_topics_metadata().topics)
        assert health == full
        assert health.offline >= 1 and health.under_replicated >= 1  # the new topic's p1 and p0
        client.force_login(personas["viewer"])
        response = client.get(reverse("cluster_overview", kwargs={"name": kafka_cluster.name}))
        assert response.context["overview"].summary == full
        body = response.content.decode()
        assert card(body, "Offline partitions") == str(full.offline)
        assert card(body, "Under-replicated") == str(full.under_replicated)
        assert card(body, "Partitions") == str(full.partition_count)
    finally:
        restored.start_broker(3)
