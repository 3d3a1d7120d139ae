"""E2E: an admin opens the cluster's change windows from the nav, adds a freeze with the form and sees it
in force; an operator's config page then names the window and offers no way to submit the change (only
an admin's break glass runs now); the admin ends the freeze and the same change applies."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.models import AuditEvent
from console.models.windows import ChangeWindow
from console.topics import actions as topics
from console.topics.batch import TopicSpec
from tests.e2e.conftest import login
from tests.e2e.pages import open_from_nav, preview_config_change

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_admin_freezes_the_cluster_and_a_change_is_refused_until_the_freeze_ends(
    page, browser, live_server, kafka_cluster, personas
):
    topic = f"win-e2e-{uuid.uuid4().hex[:8]}"
    topics.create_topics(
        actor=personas["admin"],
        cluster=kafka_cluster,
        specs=[TopicSpec(topic, 1, 1, configs={"retention.ms": "1000"})],
    )
    base = f"{live_server.url}/c/{kafka_cluster.name}"
    login(page, live_server, "admin", "pw-admin")
    open_from_nav(page, base, "Windows", "windows")
    now = datetime.now(UTC)
    form = page.locator("#window-form")
    form.locator("select[name=kind]").select_option("freeze")
    form.locator("input[name=reason]").fill("release week")
    form.locator("input[name=starts_at]").fill(f"{now - timedelta(minutes=2):%Y-%m-%dT%H:%M}")
    form.locator("input[name=ends_at]").fill(f"{now + timedelta(hours=2):%Y-%m-%dT%H:%M}")
    form.get_by_role("button", name="Add window").click()
    freeze = ChangeWindow.objects.get()
    expect(page.locator("#window-frozen")).to_contain_text(f"Frozen by window #{freeze.pk} (release week)")

    operator = browser.new_context().new_page()
    login(operator, live_server, "operator", "pw-operator")
    operator.goto(f"{base}/topics/{topic}/configs/")
    preview_config_change(operator, "retention.ms", "5000")
    expect(operator.locator("#change-control-freeze")).to_contain_text(
        f"is frozen by window #{freeze.pk} (release week)"
    )
    expect(operator.locator("#change-control-freeze")).to_contain_text("only break glass (admins) runs")
    expect(operator.locator("#submit-for-review")).to_have_count(0)  # no policy: nothing would approve it
    res = configs.topic_resource(topic)
    assert gateway_for(kafka_cluster).describe_configs([res])[res]["retention.ms"].value == "1000"

    page.locator(f"#window-end-{freeze.pk}").click()
    expect(page.locator("#window-open")).to_contain_text("No freeze in force")
    operator.goto(f"{base}/topics/{topic}/configs/")
    preview_config_change(operator, "retention.ms", "5000")
    operator.locator("button[value=apply]").click()
    expect(operator.locator(".messages")).to_contain_text("1 config change(s) applied")
    assert gateway_for(kafka_cluster).describe_configs([res])[res]["retention.ms"].value == "5000"
    assert [e.action for e in AuditEvent.objects.filter(action__startswith="window.").order_by("id")] == [
        "window.create",
        "window.end",
    ]
    assert not AuditEvent.objects.filter(action="change.submit").exists()
