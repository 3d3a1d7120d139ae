"""E2E: change control. An admin holds config changes for approval on the cluster's change-control
page; an operator's config edit is submitted with its diff instead of applied; a second operator
sees the diff on the change's page, approves, and exactly that change runs."""

from __future__ import annotations

import uuid

import pytest

from console import operations
from console.clusters.actions import gateway_for
from console.kafka import ConfigResource
from console.models import AuditEvent, Operation, Role, RoleBinding
from console.models.requests import ChangeRequest
from console.topics import actions as topics
from console.topics import cache as metadata_cache
from tests.e2e.conftest import background_worker, login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _fresh_cache():
    metadata_cache.clear()
    yield
    metadata_cache.clear()


def retention(cluster, name: str) -> str:
    res = ConfigResource("TOPIC", name)
    return gateway_for(cluster).describe_configs([res])[res]["retention.ms"].value


def test_an_operators_config_change_is_held_reviewed_with_its_diff_and_approved_by_a_second_user(
    page, browser, live_server, personas, kafka_cluster, django_user_model
):
    second = django_user_model.objects.create_user(username="operator2", password="pw-operator2")
    RoleBinding.objects.create(cluster=kafka_cluster, user=second, role=Role.OPERATOR)
    name = f"e2e.chg-{uuid.uuid4().hex[:8]}"
    topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[topics.TopicSpec(name, 1, 1, configs={"retention.ms": "1000"})],
    )
    base = f"{live_server.url}/c/{kafka_cluster.name}"

    # The admin holds config changes of operators for one approver.
    login(page, live_server, "admin", "pw-admin")
    page.goto(f"{base}/requests/")
    page.click("#change-policy-link")
    page.check("#change-policy-form input[name=enabled]")
    page.check("#change-policy-form input[name=kinds][value=config]")
    page.check("#change-policy-form input[name=roles][value=operator]")
    page.click("#change-policy-form button[type=submit]")
    page.locator(".messages", has_text="Change-control policy saved").wait_for()
    page.context.clear_cookies()

    # The operator's edit is submitted for approval, not applied.
    login(page, live_server, "operator", "pw-operator")
    page.goto(f"{base}/topics/{name}/configs/")
    page.select_option("#id_op_0", "SET")
    page.fill("#id_key_0", "retention.ms")
    page.fill("#id_value_0", "7200000")
    page.click("button[value=preview]")
    page.locator("#config-diff").wait_for()
    assert page.locator("button[value=apply]").inner_text() == "Submit for approval"
    assert page.locator("#break-glass").count() == 0  # not an admin
    page.fill("#id_justification", "longer retention for the replay")
    page.click("button[value=apply]")
    page.wait_for_url(f"{base}/requests/*/")
    page.locator(".messages", has_text="held for approval").wait_for()
    assert page.locator("#four-eyes").is_visible() and page.locator("#approve").count() == 0
    assert retention(kafka_cluster, name) == "1000"
    req = ChangeRequest.objects.get(gated=True)
    assert page.inner_text("#change-digest") == req.payload_sha256

    # A second operator reviews the diff and approves; the worker runs exactly that change.
    other = browser.new_context()
    try:
        tab = other.new_page()
        tab.set_default_timeout(15000)
        login(tab, live_server, "operator2", "pw-operator2")
        tab.goto(f"{base}/requests/")
        tab.locator("#request-queue", has_text=name).wait_for()
        tab.goto(f"{base}/requests/{req.pk}/")
        cells = [
            c.strip() for c in tab.locator("#change-review tbody tr").first.locator("td").all_inner_texts()
        ]
        assert cells == ["retention.ms", "SET", "1000", "7200000"]
        assert "valid" in tab.inner_text("#change-kafka")
        assert "0 of 1" in tab.inner_text("#change-approvals")

        def step():
            for op_id in Operation.objects.filter(state="pending").values_list("pk", flat=True):
                operations.run(op_id, worker="e2e")

        with background_worker(step):
            tab.fill("#request-decision textarea", "checked the diff")
            tab.click("#approve")
            tab.locator(".messages", has_text="approved").wait_for()
            tab.locator("#request-status, .status", has_text="Done").first.wait_for(timeout=30000)
        assert retention(kafka_cluster, name) == "7200000"
    finally:
        other.close()
    applied = AuditEvent.objects.get(action="config.alter", outcome="success")
    assert applied.actor_name == "operator" and applied.request_id == f"change-{req.pk}"
    assert AuditEvent.objects.filter(action="change.approve", actor_name="operator2").exists()
