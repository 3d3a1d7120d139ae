"""E2E: an operator opens a topic's purge page from the topic, dry-runs a purge (the table of what
goes and the group left below the new start), types a wrong name (refused, nothing purged), then the
topic's name, and sees each partition's new log start - what ListOffsets earliest then answers."""

from __future__ import annotations

import uuid

import pytest

from console.clusters.actions import gateway_for
from console.kafka import NewTopic, TopicPartition
from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def filled_topic(kafka_cluster):
    gw = gateway_for(kafka_cluster)
    name = f"e2e-purge-{uuid.uuid4().hex[:8]}"
    gw.create_topics([NewTopic(name, 2, 1, None, {})])
    for i in range(8):
        gw.produce_record(name, partition=0, key=None, value=f"r{i}".encode())
    # An earlier test (test_overview_attention) stops and restarts broker 3, which may coordinate the group:
    # the gateway reads Metadata again for a node its cached copy lacks (ci50c failed here before)
    gw.alter_consumer_group_offsets(f"{name}-g", {TopicPartition(name, 0): 2})
    yield name
    gw.delete_topics([name])


def test_an_operator_dry_runs_then_purges_after_typing_the_name(
    page, live_server, sandbox, personas, kafka_cluster, filled_topic
):
    login(page, live_server, "operator", "pw-operator")
    page.goto(f"{live_server.url}/c/sandbox/topics/{filled_topic}/")
    page.click("#topic-purge-link")
    page.fill("#id_offsets", "0:5")
    page.click("#purge-dry-run")
    row = page.locator('#purge-plan tr[data-partition="0"]')
    row.wait_for()
    cells = [c.strip() for c in row.locator("td").all_inner_texts()]
    assert cells[:5] == ["0", "0", "8", "5", "5"]
    assert f"{filled_topic}-g" in cells[6]
    page.fill("#purge-confirmation", "not the name")
    page.click("#purge-run")
    assert "Type the topic name" in page.locator("#purge-errors").inner_text()
    assert gateway_for(kafka_cluster).partition_bounds(filled_topic)[0] == (0, 8)
    page.fill("#purge-confirmation", filled_topic)
    page.click("#purge-run")
    assert "Purged 5 record(s)" in page.locator("#purge-result").inner_text()
    after = [c.strip() for c in page.locator('#purge-after tr[data-partition="0"] td').all_inner_texts()]
    assert after == ["0", "0", "5"]
    assert gateway_for(kafka_cluster).partition_bounds(filled_topic) == {0: (5, 8), 1: (0, 0)}
