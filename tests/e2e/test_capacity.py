"""E2E: an admin opens Capacity, takes a snapshot, and reads the charts once reports exist."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pipeline import generate, lake, reference, reports
from pipeline.reference import JobParams
from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
START = datetime(2026, 4, 1, tzinfo=UTC)


def test_it_goes_from_the_empty_state_to_charts(page, live_server, personas, tmp_path, monkeypatch):
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path))
    login(page, live_server, "admin", "pw-admin")
    page.wait_for_url(f"{live_server.url}/c/sandbox/")
    page.click("nav >> text=Capacity")
    page.wait_for_url(f"{live_server.url}/c/sandbox/capacity/")
    assert "No reports yet" in page.inner_text("#capacity-empty")

    page.click("text=Take a snapshot now")
    page.wait_for_url(f"{live_server.url}/c/sandbox/capacity/")
    assert "Snapshot taken" in page.inner_text(".messages")

    shape = generate.Shape(snapshots=36, interval_s=3600)
    generate.write_lake(tmp_path, "sandbox", shape, START, per_file=12)
    until = START + timedelta(days=2)
    tables = {ds: lake.read_window(tmp_path, ds, "sandbox", START, until) for ds in lake.DATASETS}
    reports.publish(
        tmp_path,
        "sandbox",
        reference.compute(tables, JobParams(idle_days=1)),
        {"since": START.isoformat(), "until": until.isoformat(), "generated_at": until.isoformat()},
    )
    page.reload()

    assert page.locator("svg.chart").count() == 5
    assert page.locator("#cluster-size polyline").count() == 1
    assert page.locator("#brokers svg rect").count() == 3
    idle = page.locator("#idle tr", has_text="topic-006")
    assert idle.count() == 1
    idle.locator("text=Request deletion").click()
    page.wait_for_url("**/c/sandbox/requests/new/?kind=topic.delete&topic=topic-006")
