"""E2E: a new user answers "what needs attention on this cluster?" from the overview alone - on the
sandbox with a broker stopped, a lagging group and a running move, each is on the page with its link."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from django.utils import timezone

from tests.e2e.conftest import login
from tests.unit.matrix_world import kafka_restored
from tests.unit.reassign_world import clear_throttles, make_topic, start

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


@pytest.fixture
def troubled(frozen, kafka_cluster, personas, telemetry_lake):
    """Broker 3 stopped under a topic it led, a group far behind (seen by a telemetry snapshot), a
    move running (throttled, the clock stopped: it stays running)."""
    from console import operations
    from console.telemetry import snapshots as telemetry
    from sandbox.state import Group

    with kafka_restored(frozen):
        tag = uuid.uuid4().hex[:8]
        broken = f"e2e-ova.broken.{tag}"
        frozen.create_topic(broken, assignment=[[3, 1], [3], [1, 2]])
        busy = make_topic(frozen, [[1, 3]], mb_per_partition=40, name=f"e2e-ova.busy.{tag}")
        group = f"e2e-ova.group.{tag}"
        with frozen.state.lock:
            frozen.state.groups[group] = Group(group, offsets={(busy, 0): 0})
        op, _ = start(personas, kafka_cluster, {(busy, 0): [1, 2]})
        operations.run(op.pk, worker="e2e")  # throttle, submit; the move then waits for Kafka
        telemetry.collect_snapshot(cluster=kafka_cluster, now=timezone.now())
        frozen.stop_broker(3)
        try:
            yield {"broken": broken, "group": group, "op": op.pk}
        finally:
            frozen.start_broker(3)
            clear_throttles(frozen)


def test_the_overview_names_the_stopped_broker_the_lagging_group_and_the_running_move(
    page, live_server, kafka_cluster, troubled, fresh_metadata_cache
):
    page.set_viewport_size({"width": 1440, "height": 900})
    login(page, live_server, "admin", "pw-admin")
    page.goto(f"{live_server.url}/c/{kafka_cluster.name}/")
    page.locator("#overview-alerts h2").wait_for()  # the htmx boxes have loaded
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "overview-attention.png"), full_page=True)

    verdict = page.inner_text("#overview-verdict")
    assert verdict.startswith("Needs attention:") and "1 broker down or fenced" in verdict, verdict
    assert "3 (" in page.inner_text("#brokers-down")

    topic = page.locator(f'#attention-topics tr[data-topic="{troubled["broken"]}"]')
    assert topic.inner_text().split("\t") == [troubled["broken"], "3", "1", "unknown", "1"]
    assert topic.locator("a").get_attribute("href") == f"/c/sandbox/topics/{troubled['broken']}/"

    group = page.locator(f'#attention-groups tr[data-group="{troubled["group"]}"]')
    assert group.locator("td.lag-over").count() == 1  # over the group_lag rule's threshold
    assert group.locator("a").get_attribute("href") == f"/c/sandbox/groups/{troubled['group']}/"

    move = page.locator(f'#attention-work li[data-operation="{troubled["op"]}"]')
    assert f"reassignment.execute #{troubled['op']}" in move.inner_text() and "Running" in move.inner_text()
    assert move.locator("a").get_attribute("href") == f"/operations/{troubled['op']}/"

    move.locator("a").click()  # the item leads to the move's own page
    page.wait_for_url(f"{live_server.url}/operations/{troubled['op']}/")
