"""E2E: a requester submits a topic request, an approver approves it, the topic exists, the audit shows both."""

from __future__ import annotations

import uuid

import pytest

from console.clusters.actions import gateway_for
from tests.e2e.conftest import login, operations_worker

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker():
    """A stand-in for the Celery worker: runs queued request executions."""
    with operations_worker(kind="request.execute"):
        yield


def test_a_requested_topic_is_approved_created_and_audited(page, live_server, sandbox, personas, worker):
    topic = f"team-a.e2e-{uuid.uuid4().hex[:8]}"
    login(page, live_server, "requester", "pw-requester")
    page.goto(f"{live_server.url}/c/sandbox/requests/new/")
    page.select_option("#id_kind", "topic.create")
    page.fill("#id_topic", topic)
    page.fill("#id_partitions", "2")
    page.fill("#id_replication_factor", "2")
    page.fill("#id_configs", "retention.ms=3600000")
    page.fill("#id_reason", "orders service <b>needs</b> it")
    page.click("#request-form button[type=submit]")
    page.locator("#request-timeline").wait_for()
    assert "Waiting for approval" in page.inner_text("#request-state")
    assert page.locator("#approve").count() == 0  # four eyes: no approve button for the requester
    request_url = page.url

    page.context.clear_cookies()
    login(page, live_server, "operator", "pw-operator")
    page.goto(f"{live_server.url}/c/sandbox/requests/")
    page.locator("#request-queue", has_text=topic).wait_for()
    page.goto(request_url)
    page.fill("#id_comment", "approved for the e2e test")
    page.click("#approve")
    # No reload: the status fragment polls (htmx) until the worker has finished.
    page.locator("#request-state", has_text="Done").wait_for(timeout=30000)
    timeline = page.inner_text("#request-timeline")
    for step in ("submitted", "approved", "queued", "running", "succeeded"):
        assert step in timeline

    from console.models import Cluster

    meta = gateway_for(Cluster.objects.get(name="sandbox")).describe_topics([topic])[topic]
    assert len(meta.partitions) == 2

    page.context.clear_cookies()
    login(page, live_server, "auditor", "pw-auditor")
    page.goto(f"{live_server.url}/audit/?resource={topic}")
    events = page.inner_text("#audit-events")
    assert "request.submit" in events and "requester" in events
    assert "request.approve" in events and "operator" in events
    assert "topic.create" in events


def test_the_request_form_shows_only_the_chosen_kinds_fields(page, live_server, personas):
    login(page, live_server, "requester", "pw-requester")
    page.goto(f"{live_server.url}/c/sandbox/requests/new/")
    page.select_option("#id_kind", "topic.create")
    assert page.locator("#id_topic").is_visible() and page.locator("#id_partitions").is_visible()
    assert page.locator("#id_acl_principal").is_hidden() and page.locator("#id_group").is_hidden()
    page.select_option("#id_kind", "topic.delete")
    assert page.locator("#id_topic").is_visible() and page.locator("#id_partitions").is_hidden()
    page.select_option("#id_kind", "acl.create")
    assert page.locator("#id_acl_principal").is_visible() and page.locator("#id_topic").is_hidden()
    page.select_option("#id_kind", "group.offsets.reset")
    assert page.locator("#id_group").is_visible() and page.locator("#id_topic").is_hidden()
    page.check("input[name=reset-mode][value=shift-by]")
    assert page.locator("#id_reset-shift").is_visible() and page.locator("#id_reset-offset").is_hidden()
    page.check("input[name=reset-scope][value=partitions]")
    assert page.locator("#id_reset-partitions").is_visible()
    assert page.locator("#id_reason").is_visible()  # every kind has a reason
