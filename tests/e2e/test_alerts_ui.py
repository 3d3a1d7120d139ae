"""E2E: an operator sees the cluster's open alerts on its overview (htmx loads the box), opens the
alerts page, acknowledges an alert with a note and silences a rule; both reach the database and the
audit trail as the area's actions write them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from console.models.alerts import Alert, AlertSilence
from tests.e2e.conftest import login
from tests.unit.alert_world import alert_events, make_alert

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_operator_acknowledges_an_alert_and_adds_a_silence(page, live_server, kafka_cluster, personas):
    alert = make_alert(
        kafka_cluster, "broker_down", "broker 2", severity="critical", summary="broker 2 is gone"
    )
    make_alert(kafka_cluster, "group_lag", "group billing", summary="billing 20000 behind")
    login(page, live_server, "operator", "pw-operator")

    page.goto(f"{live_server.url}/c/{kafka_cluster.name}/")
    box = page.locator("#overview-alerts")
    expect(box.locator("#open-alerts-count")).to_have_text("2 open")
    expect(box.locator("li").first).to_contain_text("broker 2 is gone")
    box.get_by_role("link", name="All alerts, silences and rules").click()
    expect(page).to_have_url(f"{live_server.url}/c/{kafka_cluster.name}/alerts/")

    row = page.locator(f"#open-alerts tr[data-alert='{alert.pk}']")
    row.locator("input[name=note]").fill("replacing the disk")
    row.get_by_role("button", name="Acknowledge").click()
    expect(page.locator(".messages")).to_contain_text(f"Alert #{alert.pk} acknowledged.")
    row = page.locator(f"#open-alerts tr[data-alert='{alert.pk}']")
    expect(row).to_have_attribute("data-state", "acknowledged")
    expect(row.locator(".ack-note")).to_have_text("replacing the disk")

    form = page.locator("#alert-silence-form")
    form.locator("select[name=rule]").select_option("group_lag")
    form.locator("input[name=subject]").fill("group billing")
    form.locator("input[name=duration]").fill("3h")
    form.locator("input[name=reason]").fill("backfill tonight")
    form.get_by_role("button", name="Silence").click()
    silences = page.locator("#alert-silences tbody tr[data-silence]")
    expect(silences).to_have_count(1)
    expect(silences.first).to_contain_text("backfill tonight")

    acked = Alert.objects.get(pk=alert.pk)
    assert (acked.state, acked.ack_note, acked.acknowledged_by_name) == (
        "acknowledged",
        "replacing the disk",
        "operator",
    )
    silence = AlertSilence.objects.get()
    assert (silence.rule, silence.subject, silence.reason) == (
        "group_lag",
        "group billing",
        "backfill tonight",
    )
    assert [e[:3] for e in alert_events()] == [
        ("alert.acknowledge", "success", "operator"),
        ("alert.silence.create", "success", "operator"),
    ]
