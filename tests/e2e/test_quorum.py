"""E2E: open the quorum page of a cluster registered in controller mode (KIP-919) and watch it refresh."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import login
from tests.e2e.pages import open_from_nav
from tests.unit.quorum_helpers import register_controllers

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_it_shows_the_quorum_through_the_controllers(page, live_server, sandbox, personas):
    cluster = register_controllers(sandbox, personas)
    login(page, live_server, "viewer", "pw-viewer")
    page.wait_for_load_state()
    open_from_nav(page, f"{live_server.url}/c/{cluster.name}", "Quorum", "quorum")
    assert page.inner_text("#leader-id").strip() == str(sandbox.state.active_controller)
    voters = page.locator("#voters tbody tr")
    assert voters.count() == len(sandbox.state.controllers)
    active = page.locator("#controllers tr", has=page.locator(".badge", has_text="active"))
    assert active.count() == 1
    assert active.get_attribute("data-controller") == str(sandbox.state.active_controller)
    assert page.locator('#features tr[data-feature="metadata.version"]').count() == 1
    assert "controller mode" in page.inner_text("header")
    topics = page.locator('#capabilities tr[data-section="topics"]')
    assert "UNSUPPORTED_ENDPOINT_TYPE" in topics.inner_text()


def test_it_refreshes_and_highlights_a_stopped_controller(page, live_server, sandbox, personas, settings):
    settings.QUORUM_REFRESH_S = 1
    cluster = register_controllers(sandbox, personas)
    victim = max(c for c in sandbox.state.controllers if c != sandbox.state.active_controller)
    login(page, live_server, "viewer", "pw-viewer")
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/c/{cluster.name}/quorum/")
    row = page.locator(f'#voters tr[data-replica="{victim}"]')
    assert "lagging" not in (row.get_attribute("class") or "")
    sandbox.stop_controller(victim)
    try:
        sandbox.advance(30)
        page.locator(f'#voters tr.lagging[data-replica="{victim}"]').wait_for()
        assert int(page.locator(f'#voters tr[data-replica="{victim}"]').get_attribute("data-lag")) > 0
        assert str(victim) in page.inner_text("#lagging-voters")
        # The highlight shows: its rule is in the static stylesheet, which the CSP allows (an inline
        # <style> on the page was dropped by style-src-elem 'self').
        cell = page.locator(f'#voters tr.lagging[data-replica="{victim}"] td').first
        shown = cell.evaluate("td => [getComputedStyle(td).backgroundColor, getComputedStyle(td).fontWeight]")
        assert shown == ["rgb(253, 236, 234)", "600"], shown
    finally:
        sandbox.start_controller(victim)
        sandbox.advance(1)
