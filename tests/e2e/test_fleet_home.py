"""E2E: an operator of two clusters lands on the fleet home (each cluster's summary as the collector
wrote it), sorts it, and a row drills down to the cluster's overview."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from console.models import Cluster, Role, RoleBinding
from console.telemetry import snapshots
from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def two_clusters(kafka_cluster, personas, sandbox, tmp_path, monkeypatch):
    """The sandbox registered twice (the operator holds a role on both), each snapshotted by the
    collector, and a third cluster the operator cannot see."""
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))
    other = Cluster.objects.create(
        name="sandbox-b",
        description="second",
        bootstrap_servers=sandbox.bootstrap_servers,
        request_timeout_s=5,
    )
    RoleBinding.objects.create(cluster=other, user=personas["operator"], role=Role.OPERATOR)
    Cluster.objects.create(name="hidden", bootstrap_servers=sandbox.bootstrap_servers)
    for cluster in (kafka_cluster, other):
        assert not isinstance(snapshots.collect_for(cluster), str)
    return kafka_cluster, other


def test_the_fleet_home_lists_the_clusters_and_a_row_drills_down(page, live_server, two_clusters):
    login(page, live_server, "operator", "pw-operator")
    started = time.perf_counter()
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(f"{live_server.url}/fleet/")
    rows = page.locator("#fleet tbody tr")
    expect(rows).to_have_count(2)
    landed = time.perf_counter() - started
    navigation = "() => performance.getEntriesByType('navigation')[0].duration"
    fleet_ms = page.evaluate(navigation)  # the fleet page's own load, as Chromium timed it
    expect(rows.nth(0)).to_have_attribute("data-cluster", "sandbox")
    expect(rows.nth(1)).to_have_attribute("data-cluster", "sandbox-b")
    expect(rows.nth(0).locator("td.as-of")).to_contain_text("as of")
    expect(rows.nth(1)).to_contain_text("4.1-IV1")

    page.locator("#fleet thead a[data-sort=name]").click()  # sorted by name: the header turns it round
    expect(page.locator("#fleet tbody tr").nth(0)).to_have_attribute("data-cluster", "sandbox-b")

    started = time.perf_counter()
    page.locator("#fleet tbody tr[data-cluster=sandbox-b] td a").first.click()
    expect(page).to_have_url(f"{live_server.url}/c/sandbox-b/")
    expect(page.locator("h1")).to_contain_text("sandbox-b")
    drilled = time.perf_counter() - started
    print(
        f"fleet home in Chromium: landing {landed * 1000:.0f} ms (the fleet page's navigation "
        f"{fleet_ms:.0f} ms), drill-down to the overview {drilled * 1000:.0f} ms "
        f"(its navigation {page.evaluate(navigation):.0f} ms)"
    )
