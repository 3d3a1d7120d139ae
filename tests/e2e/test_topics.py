"""E2E: create a topic with a config and see it listed; edit a config with a dry run, apply, see the audit entry."""

from __future__ import annotations

import uuid

import pytest

from console.clusters.actions import gateway_for
from console.formatting import human_bytes
from console.kafka import ConfigResource
from console.models import AuditEvent
from console.telemetry import sizes
from console.telemetry import snapshots as telemetry
from console.topics import actions as topics
from tests.e2e.conftest import login
from tests.e2e.pages import fill_new_topic, preview_config_change

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_metadata_cache"),
]


def test_it_creates_a_topic_with_a_config_and_lists_it(
    page, live_server, personas, kafka_cluster, sandbox, tmp_path, monkeypatch
):
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))
    name = f"e2e.orders-{uuid.uuid4().hex[:8]}"
    login(page, live_server, "operator", "pw-operator")
    page.wait_for_url(f"{live_server.url}/c/sandbox/")
    page.click("nav >> text=Topics")
    page.click("text=Create topic")
    fill_new_topic(page, name, 3, 2)
    page.fill("[name='cfg__retention.ms']", "86400000")
    page.click("button[value=validate]")
    page.locator("#results", has_text="valid (dry run)").wait_for()
    page.click("button[value=create]")
    page.wait_for_url(f"{live_server.url}/c/sandbox/topics/{name}/")
    assert "retention.ms" in page.inner_text("#topic-configs")
    assert page.locator("#partitions tbody tr").count() == 3
    page.goto(f"{live_server.url}/c/sandbox/topics/")
    page.fill("#id_q", name)
    row = page.locator(f"#topics tr[data-topic='{name}']")
    row.wait_for()
    cells = row.locator("td").all_inner_texts()
    assert name in cells[1] and cells[2] == "3" and cells[3] == "2"
    assert cells[8] == "1 d"  # retention.ms 86400000, as it reads
    assert cells[9] == "no snapshot yet"
    # The next telemetry snapshot gives the size, before any pipeline run.
    sandbox.produce_synthetic(name, 100_000)
    sandbox.advance(2)
    sandbox.produce_synthetic(name, 0)
    snap = telemetry.collect_snapshot(cluster=kafka_cluster)
    size = sizes.latest_sizes("sandbox").topic(name).bytes
    page.reload()
    row.wait_for()
    assert row.locator("td").all_inner_texts()[9] == human_bytes(size)
    assert f"sizes as of {snap.ts:%Y-%m-%d %H:%M} UTC" in page.inner_text("#topic-meta")
    page.click(f"text={name}")
    page.wait_for_url(f"{live_server.url}/c/sandbox/topics/{name}/")
    card = page.inner_text("#topic-size")
    assert human_bytes(size) in card and f"as of {snap.ts:%Y-%m-%d %H:%M} UTC" in card
    event = AuditEvent.objects.exclude(outcome="requested").get(action="topic.create")
    assert event.actor_name == "operator" and event.outcomes[f"topic:{name}"]["ok"] is True


def test_it_edits_a_config_with_a_dry_run_then_applies_and_shows_the_audit_entry(
    page, live_server, personas, kafka_cluster
):
    name = f"e2e.cfg-{uuid.uuid4().hex[:8]}"
    topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[topics.TopicSpec(name, 1, 1, configs={"retention.ms": "1000"})],
    )
    login(page, live_server, "operator", "pw-operator")
    page.wait_for_url(f"{live_server.url}/c/sandbox/")
    page.goto(f"{live_server.url}/c/sandbox/topics/{name}/")
    page.click("text=Edit configs")
    preview_config_change(page, "retention.ms", "7200000")
    diff = page.locator("#config-diff")
    diff.wait_for()
    assert "1000" in diff.inner_text() and "7200000" in diff.inner_text()
    page.click("button[value=validate]")
    page.locator("#config-result", has_text="Nothing was changed").wait_for()
    entry = gateway_for(kafka_cluster).describe_configs([ConfigResource("TOPIC", name)])
    assert next(iter(entry.values()))["retention.ms"].value == "1000"
    page.click("button[value=apply]")
    page.locator(".messages", has_text="applied").wait_for()
    assert "7200000" in page.inner_text("#configs tr[data-config='retention.ms']")
    page.goto(f"{live_server.url}/c/sandbox/topics/{name}/")
    events = page.inner_text("#topic-events")
    assert "config.alter.validate" in events
    # Newest first: the outcome, its "requested" event written before Kafka was called, the dry run.
    assert [line.split("\t")[3] for line in events.splitlines()[1:4]] == [
        "config.alter",
        "config.alter",
        "config.alter.validate",
    ]
    assert "requested" in events.splitlines()[2]
    applied = AuditEvent.objects.exclude(outcome="requested").get(action="config.alter")
    assert applied.before == {"retention.ms": "1000"} and applied.after == {"retention.ms": "7200000"}
