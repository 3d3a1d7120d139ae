"""E2E: change control. An admin holds config changes for approval on the cluster's change-control
page; an operator's config edit is submitted with its diff instead of applied; a second operator
sees the diff on the change's page, approves, and exactly that change runs."""

from __future__ import annotations

import uuid

import pytest

from console.clusters.actions import gateway_for
from console.kafka import ConfigResource
from console.models import AuditEvent
from console.models.requests import ChangeRequest
from console.topics import actions as topics
from tests.e2e.conftest import login, operations_worker, signed_in_tab
from tests.e2e.pages import (
    approve,
    approve_in_browser,
    preview_config_change,
    review_acl_binding,
    review_row,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_metadata_cache"),
]


def retention(cluster, name: str) -> str:
    res = ConfigResource("TOPIC", name)
    return gateway_for(cluster).describe_configs([res])[res]["retention.ms"].value


def test_an_operators_config_change_is_held_reviewed_with_its_diff_and_approved_by_a_second_user(
    page, browser, live_server, personas, kafka_cluster, operator2
):
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
    preview_config_change(page, "retention.ms", "7200000")
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
    with signed_in_tab(browser, live_server, "operator2", "pw-operator2") as tab:
        tab.goto(f"{base}/requests/")
        tab.locator("#request-queue", has_text=name).wait_for()
        tab.goto(f"{base}/requests/{req.pk}/")
        assert review_row(tab) == ["retention.ms", "SET", "1000", "7200000"]
        assert "valid" in tab.inner_text("#change-kafka")
        assert "0 of 1" in tab.inner_text("#change-approvals")
        with operations_worker():
            approve(tab, "checked the diff")
        assert retention(kafka_cluster, name) == "7200000"
    applied = AuditEvent.objects.get(action="config.alter", outcome="success")
    assert applied.actor_name == "operator" and applied.request_id == f"change-{req.pk}"
    assert AuditEvent.objects.filter(action="change.approve", actor_name="operator2").exists()


def test_held_acl_change_and_reassignment_go_submit_review_approve_run_in_the_browser(
    page, browser, live_server, personas, kafka_cluster, sandbox, operator2
):
    import json

    from console.acls import actions as acls
    from console.acls import core as acl_core
    from console.changes import actions as changes
    from console.changes import gate
    from console.models.reassignment import Reassignment

    changes.set_policy(
        actor=personas["admin"], cluster=kafka_cluster, enabled=True,
        kinds=["acl", "reassignment"], roles=[], approvers=1,
    )  # fmt: skip
    base = f"{live_server.url}/c/{kafka_cluster.name}"
    topic = f"e2e.held-{uuid.uuid4().hex[:8]}"
    sandbox.create_topic(topic, partitions=1, replication_factor=2, assignment=[[1, 2]])
    sandbox.produce_synthetic(topic, 2 * 1024 * 1024)
    sandbox.advance(1)
    sandbox.produce_synthetic(topic, 0)
    login(page, live_server, "operator", "pw-operator")

    # ACL: the review page submits the binding for approval instead of creating it.
    page.goto(f"{base}/acls/new/")
    review_acl_binding(page, topic, "User:held-reader", "READ", pattern_type="LITERAL", permission="ALLOW")
    assert page.locator("#acl-apply").count() == 0 and page.locator("#break-glass").count() == 0
    page.click("#submit-for-review")
    page.wait_for_url(f"{base}/requests/*/")
    acl_req = ChangeRequest.objects.get(gated=True, kind="change.acl")
    wanted = acl_core.exact_filter(acl_core.bindings_from_json([json.dumps(acl_req.payload["create"][0])])[0])
    assert not acls.preview_delete(actor=personas["admin"], cluster=kafka_cluster, filters=[wanted])

    def acl_shown(tab):
        assert review_row(tab) == [
            "create",
            "User:held-reader",
            "ALLOW",
            "READ",
            f"TOPIC:LITERAL:{topic}",
            "*",
            "absent",
            "created",
        ]

    approve_in_browser(browser, live_server, base, acl_req.pk, acl_shown)
    assert acls.preview_delete(actor=personas["admin"], cluster=kafka_cluster, filters=[wanted])

    # Reassignment: the dry run's plan is submitted with bytes per broker and the ETA at its throttle.
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 3]}]}
    page.goto(f"{base}/reassignments/new/")
    page.check("input[name=intent][value=json]")
    page.fill("#id_plan_json", json.dumps(plan))
    page.fill("#id_throttle_mb", "1")
    page.click("button[value=preview]")
    page.locator("#submit-for-review").wait_for()
    page.fill("#id_justification", "drain broker 2")
    page.click("#submit-for-review")
    page.wait_for_url(f"{base}/requests/*/")
    move = ChangeRequest.objects.get(gated=True, kind="change.reassignment")
    assert not Reassignment.objects.exists()

    def plan_shown(tab):
        facts = dict(
            (r.locator("th").text_content().strip(), r.locator("td").text_content().strip())
            for r in tab.locator("#change-summary tr").all()
        )
        assert facts["Bytes to copy"] == "2.0 MiB" and facts["Broker 3"] == "in 2.0 MiB, out 0 B"
        assert facts["Estimated time at the throttle"] == "2 s"
        assert "1.0 MiB/s per broker" in facts["Throttle"]
        assert review_row(tab)[:4] == [topic, "0", "[1, 2]", "[1, 3]"]

    approve_in_browser(browser, live_server, base, move.pk, plan_shown)
    r = Reassignment.objects.get()
    assert list(r.partitions.values_list("topic", "partition", "original", "target")) == [
        (topic, 0, [1, 2], [1, 3])
    ]
    started = AuditEvent.objects.get(action="reassignment.execute.requested")
    assert started.params["plan_sha256"] == move.payload["plan_sha256"] and started.actor_name == "operator"
    with gate.passed("acl"):  # leave the shared sandbox as found (the move itself never ran)
        acls.change_acls(
            actor=personas["admin"],
            cluster=kafka_cluster,
            deletes=acls.preview_delete(actor=personas["admin"], cluster=kafka_cluster, filters=[wanted]),
        )
