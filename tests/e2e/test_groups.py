"""E2E: from the nav to the consumer groups, into a group that refreshes itself, a dry run of a reset
(only the chosen mode's fields shown), the typed confirmation and the execute; a group with a member
is refused, naming it; the topic page lists the group with its lag."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from console.models import AuditEvent
from console.topics import cache as metadata_cache
from tests.e2e.conftest import login
from tests.e2e.pages import open_from_nav

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _offsets(sandbox, group: str) -> dict:
    with sandbox.state.lock:
        return {p: o for (_, p), o in sandbox.state.groups[group].offsets.items()}


def test_list_detail_dry_run_and_execute_a_reset(
    page, live_server, sandbox, personas, kafka_cluster, settings
):
    settings.GROUPS_REFRESH_S = 1
    metadata_cache.clear()
    tag = uuid.uuid4().hex[:8]
    topic, idle, busy = f"e2e-groups.{tag}", f"e2e-idle-{tag}", f"e2e-busy-{tag}"
    sandbox.create_topic(topic, partitions=3)
    with sandbox.state.lock:
        for p in sandbox.state.topics[topic].partitions:
            p.log_start_offset, p.end_offset = 0, 100
    sandbox.add_group(idle, offsets={(topic, 0): 40, (topic, 1): 60, (topic, 2): 100})
    sandbox.add_group(busy, offsets={(topic, 0): 1}, members={"billing-worker": [(topic, 0)]})
    base = f"{live_server.url}/c/{kafka_cluster.name}"
    try:
        login(page, live_server, "operator", "pw-operator")
        page.wait_for_load_state()
        open_from_nav(page, base, "Groups", "groups")
        page.fill("#id_q", f"e2e-idle-{tag}")
        expect(page.locator("#groups tr[data-group]")).to_have_count(1)
        row = page.locator(f'#groups tr[data-group="{idle}"]')
        assert "Empty" in row.inner_text() and row.locator("td.lag").inner_text() == "100"

        row.locator("a").click()
        page.wait_for_url(f"{base}/groups/{idle}/")
        assert "No active members" in page.inner_text("#members")
        assert page.locator('#partitions tr[data-tp$="-0"] td.lag').inner_text() == "60"
        with sandbox.state.lock:  # a commit elsewhere: the live part shows it without a reload
            sandbox.state.groups[idle].offsets[(topic, 0)] = 90
        expect(page.locator('#partitions tr[data-tp$="-0"] td.lag')).to_have_text("10")
        assert page.inner_text("#total-lag") == "50"

        page.click("#reset-link")
        page.wait_for_url(f"{base}/groups/{idle}/-/reset/")
        assert not page.is_visible("#id_shift") and not page.is_visible("#id_offset")
        page.check('input[name=mode][value="shift-by"]')
        assert page.is_visible("#id_shift") and not page.is_visible("#id_offset")
        assert not page.is_visible("#id_topic")  # all topics: no topic to name
        page.fill("#id_shift", "-30")
        page.click("#dry-run")
        page.wait_for_selector("#reset-plan")
        news = page.locator("#reset-plan td.new").all_inner_texts()
        assert news == ["60", "30", "70"]
        assert "lag 50 → 140" in page.inner_text("#reset-summary")
        assert _offsets(sandbox, idle) == {0: 90, 1: 60, 2: 100}  # a dry run changes nothing

        page.click("#execute-reset")  # without the group id typed
        page.wait_for_selector("#execute .error")
        assert "Type the group id" in page.inner_text("#execute")
        assert _offsets(sandbox, idle) == {0: 90, 1: 60, 2: 100}
        page.fill("#id_confirmation", idle)
        page.click("#execute-reset")
        page.wait_for_url(f"{base}/groups/{idle}/")
        assert "Offsets of 3 partition(s) reset" in page.inner_text("ul.messages")
        assert _offsets(sandbox, idle) == {0: 60, 1: 30, 2: 70}
        assert page.locator('#partitions tr[data-tp$="-1"] td.committed').inner_text() == "30"
        event = AuditEvent.objects.filter(action="group.offsets.reset", outcome="success").latest("id")
        assert event.before == {f"{topic}-0": 90, f"{topic}-1": 60, f"{topic}-2": 100}
        assert event.after == {f"{topic}-0": 60, f"{topic}-1": 30, f"{topic}-2": 70}

        page.goto(f"{base}/groups/{busy}/-/reset/")
        page.click("#dry-run")
        page.wait_for_selector("#reset-blocked")
        assert "billing-worker" in page.inner_text("#reset-blocked")
        page.fill("#id_confirmation", busy)
        page.click("#execute-reset")
        page.wait_for_selector("#reset-error")
        assert "billing-worker (/127.0.0.1)" in page.inner_text("#reset-error")
        assert page.is_visible("#reset-plan")  # the refused execute keeps the plan in view
        assert _offsets(sandbox, busy) == {0: 1}

        page.goto(f"{base}/topics/{topic}/")
        page.wait_for_selector(f'#topic-groups tr[data-group="{idle}"]')
        assert page.locator(f'#topic-groups tr[data-group="{idle}"] td.lag').inner_text() == "140"
    finally:
        with sandbox.state.lock:
            sandbox.state.groups.pop(idle, None)
            sandbox.state.groups.pop(busy, None)
            sandbox.state.remove_topic(topic)
            sandbox.state.touch()
