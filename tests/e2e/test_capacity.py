"""E2E: an admin opens Capacity, takes a snapshot, and reads the charts once reports exist."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pipeline import generate, lake, reference, reports
from pipeline.reference import JobParams
from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
START = datetime(2026, 4, 1, tzinfo=UTC)
LONG = "orders." + "very-long-segment." * 10 + "v1"

# Every <text> of every chart, measured by the browser in the chart's own units, against its viewBox.
OVERFLOWING_TEXTS = """() => [...document.querySelectorAll('svg.chart')].flatMap(svg => {
  const box = svg.viewBox.baseVal;
  return [...svg.querySelectorAll('text')].map(t => ({text: t.textContent, b: t.getBBox()}))
    .filter(({b}) => b.x < box.x - 0.5 || b.y < box.y - 0.5
      || b.x + b.width > box.x + box.width + 0.5 || b.y + b.height > box.y + box.height + 0.5)
    .map(({text, b}) => `${text}: ${b.x},${b.y} ${b.width}x${b.height} in ${box.width}x${box.height}`);
})"""


def _publish(root, hours: int, params: JobParams) -> None:
    shape = generate.Shape(snapshots=hours + 1, interval_s=3600)
    generate.write_lake(root, "sandbox", shape, START, per_file=12)
    until = START + timedelta(hours=hours, minutes=1)
    tables = {ds: lake.read_window(root, ds, "sandbox", START, until) for ds in lake.DATASETS}
    out = reference.compute(tables, params)
    for t in out["topic_growth"] + out["topic_summary"]:
        if t["topic"] == "topic-000":
            t["topic"] = LONG  # a long name in the top growing chart
    meta = {"since": START.isoformat(), "until": until.isoformat(), "generated_at": until.isoformat()}
    reports.publish(root, "sandbox", out, {**meta, "params": params.__dict__})


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

    # Three hours of snapshots: sizes and lag, but no forecast and no growth verdict yet.
    params = JobParams(idle_days=1)
    _publish(tmp_path / "short", 3, params)
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "short"))
    page.reload()
    assert "3 h of snapshots; forecasts need 24 h" in page.inner_text("#capacity-history")
    assert "full in" not in page.inner_text("#brokers") and "no forecast" in page.inner_text("#brokers")
    assert "No topic grew" not in page.inner_text("#top-growing")
    assert "Not judged: 3 h of snapshots" in page.inner_text("#idle")

    _publish(tmp_path, 36, params)
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path))
    page.reload()

    assert page.locator("#capacity-history").count() == 0
    assert page.locator("svg.chart").count() == 5
    assert page.locator("#cluster-size polyline").count() == 2  # log bytes, and bytes on disk
    assert page.locator("#brokers svg rect").count() == 3
    assert "full in" in page.inner_text("#brokers")
    assert page.evaluate(OVERFLOWING_TEXTS) == []
    assert LONG in page.locator("#top-growing svg title").all_text_contents()
    page.set_viewport_size({"width": 480, "height": 900})  # the charts scale; their texts still fit
    assert page.evaluate(OVERFLOWING_TEXTS) == []
    idle = page.locator("#idle tr", has_text="topic-006")
    assert idle.count() == 1
    idle.locator("text=Request deletion").click()
    page.wait_for_url("**/c/sandbox/requests/new/?kind=topic.delete&topic=topic-006")
