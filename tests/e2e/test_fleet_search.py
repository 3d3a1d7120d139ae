"""E2E: the header's search box finds a topic, a group and a principal across the clusters the user may
see (grouped by cluster, as of the snapshot), each linked to its page; a bad regex is the field's error."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import login
from tests.unit.fleet_search_world import B

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_header_box_finds_names_and_links_their_pages(page, live_server, search_world):
    m = search_world.marker
    login(page, live_server, "operator", "pw-operator")
    page.fill(".topbar-search input[name=q]", m)
    page.press(".topbar-search input[name=q]", "Enter")
    results = page.locator("#search-results")
    expect(results).to_contain_text("searched")
    sandbox = page.locator("#cluster-sandbox")
    expect(sandbox.locator("a.mono")).to_have_text(
        [f"{m}-orders", f"{m}-payments", f"{m}-billing", f"User:{m}-alice"]
    )
    expect(sandbox).to_contain_text("as of 2026-05-04 12:07")
    expect(page.locator(f"#cluster-{B}")).to_have_count(0)  # the operator holds no role on B

    sandbox.get_by_role("link", name=f"{m}-payments").click()
    expect(page).to_have_url(f"{live_server.url}/c/sandbox/topics/{m}-payments/")
    expect(page.locator("h1")).to_contain_text(f"{m}-payments")

    page.go_back()
    page.fill("#id_q", f"{m}-(orders")
    page.check("#id_regex")
    page.click("#fleet-search button[type=submit]")
    expect(page.locator("#fleet-search .error")).to_contain_text("missing )")
    expect(page.locator("#search-results")).to_have_count(0)
