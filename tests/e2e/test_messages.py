"""E2E: from the topic page to its messages: the newest (a masked field shows *** and its value is nowhere
in the page), following live (a message produced meanwhile appears by itself), and a message produced
through the form and read back with its key and header. One browser page throughout."""

from __future__ import annotations

import json
import uuid

import pytest
from playwright.sync_api import expect

from console.clusters.actions import gateway_for
from console.models import DataGrant, MaskingRule
from console.topics import cache as metadata_cache
from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CARD = "4111111111111111"


def test_browse_follow_produce_and_read_back_with_masking(
    page, live_server, sandbox, personas, kafka_cluster
):
    metadata_cache.clear()
    topic = f"e2e-msg.{uuid.uuid4().hex[:8]}"
    sandbox.create_topic(topic, partitions=2)
    gw = gateway_for(kafka_cluster)
    for n in range(3):
        gw.produce_record(
            topic, partition=0, key=f"k{n}".encode(), value=json.dumps({"n": n, "card": CARD}).encode()
        )
    DataGrant.objects.create(
        cluster=kafka_cluster, user=personas["operator"], prefix="e2e-msg.", read=True, write=True
    )
    MaskingRule.objects.create(
        cluster=kafka_cluster, prefix="e2e-msg.", kind="json_path", expression="$.card"
    )
    base = f"{live_server.url}/c/{kafka_cluster.name}/topics/{topic}"

    login(page, live_server, "operator", "pw-operator")
    page.wait_for_load_state()
    page.goto(f"{base}/")
    page.click(".head-actions >> text=Messages")
    page.wait_for_url(f"{base}/messages/")
    page.select_option("#id_mode", "newest")
    page.fill("#id_count", "10")
    page.click("#browse-form button[type=submit]")
    expect(page.locator("#messages tr[data-offset]")).to_have_count(3)
    assert "Read 3, showing 3." in page.inner_text("#read-summary")
    assert '"***"' in page.inner_text("#messages") and "$.card" in page.inner_text("#masking")
    assert CARD not in page.content()

    page.select_option("#id_mode", "follow")
    page.click("#browse-form button[type=submit]")
    expect(page.locator("#follow-tail")).to_be_visible()
    gw.produce_record(
        topic, partition=1, key=b"live", value=json.dumps({"card": CARD, "live": True}).encode()
    )
    arrived = page.locator('#messages tr[data-partition="1"][data-offset="0"]')
    expect(arrived).to_be_visible(timeout=8000)
    assert "live" in arrived.inner_text() and CARD not in page.content()

    page.click("#produce-link")
    page.wait_for_url(f"{base}/messages/produce/")
    page.fill("#id_partition", "1")
    page.fill("#id_key", "typed-key")
    page.fill("#id_value", "hello from the form")
    page.fill("#id_headers", "trace=e2e-1")
    page.click("#produce-form button[type=submit]")
    expect(page.locator("#produced")).to_contain_text("Written to partition 1 at offset 1")
    page.click("#read-back")
    row = page.locator('#messages tr[data-partition="1"][data-offset="1"]')
    expect(row).to_contain_text("hello from the form")
    assert "typed-key" in row.inner_text() and "e2e-1" in row.inner_text()
