"""E2E: from the cluster nav to the Brokers page, into one broker, paging its partitions, and on to its
configs filtered to overrides only with human values — all with plain links and GET forms."""

from __future__ import annotations

import uuid

import pytest

from console.topics import cache as metadata_cache
from tests.e2e.conftest import login
from tests.e2e.pages import open_from_nav

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_brokers_page_broker_partitions_and_its_configs(page, live_server, sandbox, personas, kafka_cluster):
    metadata_cache.clear()
    topic = f"e2e-brokers.{uuid.uuid4().hex[:8]}"
    sandbox.create_topic(topic, assignment=[[2, 1]] * 12, configs={"retention.ms": "604800000"})
    try:
        login(page, live_server, "viewer", "pw-viewer")
        page.wait_for_load_state()
        open_from_nav(page, f"{live_server.url}/c/{kafka_cluster.name}", "Brokers", "brokers")
        assert page.locator("#brokers tr[data-broker]").count() == len(sandbox.state.brokers)
        assert "of 1.0" in page.inner_text('#brokers tr[data-broker="2"]')  # disk used of total

        page.click('#brokers tr[data-broker="2"] td >> nth=0 >> a')
        page.wait_for_url(f"{live_server.url}/c/{kafka_cluster.name}/brokers/2/")
        page.fill("#partition-search input[name=q]", topic)
        page.select_option("select[name=only]", "leader")
        page.click("#partition-search button")
        page.wait_for_load_state()
        assert "1–12 of 12 partitions" in page.inner_text("#partition-meta")
        assert page.locator("#hosted tbody tr").count() == 12

        page.goto(page.url.split("#")[0] + "&per_page=5")
        assert page.locator("#hosted tbody tr").count() == 5
        page.click("nav.pager >> text=Next →")
        page.wait_for_load_state()
        assert "6–10 of 12 partitions" in page.inner_text("#partition-meta")

        page.click(".head-actions >> text=Configs")
        page.wait_for_url(f"{live_server.url}/c/{kafka_cluster.name}/topics/-/brokers/2/")
        everything = page.locator("#configs tr[data-config]").count()
        page.check("input[name=overrides]")
        page.click("#config-filter button")
        page.wait_for_url("**overrides=1")
        shown = page.locator("#configs tr[data-config]").count()
        assert 0 < shown < everything
        assert "default" not in {
            c.strip() for c in page.locator("#configs td:nth-child(4)").all_inner_texts()
        }

        page.goto(f"{live_server.url}/c/{kafka_cluster.name}/topics/{topic}/configs/")
        row = page.locator('#configs tr[data-config="retention.ms"]').inner_text()
        assert "604800000" in row and "7 d" in row
    finally:
        with sandbox.state.lock:
            sandbox.state.remove_topic(topic)
            sandbox.state.touch()
