"""E2E: an operator starts a throttled reassignment and watches the bar advance to done."""

from __future__ import annotations

import json
import time

import pytest

from tests.e2e.conftest import background_worker, login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
MB = 1024 * 1024


@pytest.fixture
def worker():
    """A stand-in for the Celery worker and beat: runs queued operations and the due polls."""
    from console import operations
    from console.models import Operation

    def step():
        for op_id in Operation.objects.filter(state="pending").values_list("pk", flat=True):
            operations.run(op_id, worker="e2e")
        operations.run_due(worker="e2e")

    with background_worker(step):
        yield


def test_a_throttled_reassignment_advances_to_done(page, live_server, sandbox, personas, worker):
    topic = "e2e-reassign"
    sandbox.create_topic(topic, partitions=1, replication_factor=2, assignment=[[1, 2]])
    sandbox.produce_synthetic(topic, 30 * MB)
    sandbox.advance(1)
    sandbox.produce_synthetic(topic, 0)
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 3]}]}

    login(page, live_server, "operator", "pw-operator")
    page.goto(f"{live_server.url}/c/sandbox/reassignments/new/")
    page.fill("#id_plan_json", json.dumps(plan))
    page.fill("#id_throttle_mb", "1")
    page.click("button[value=preview]")
    page.locator("#diff").wait_for()
    assert "1,2 → 1,3" in page.inner_text("#diff")
    page.click("button[value=start]")
    page.wait_for_url(f"{live_server.url}/c/sandbox/reassignments/*/")

    seen = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        seen.add(int(page.get_attribute("#overall-bar", "aria-valuenow") or 0))
        if "Succeeded" in page.inner_text("#reassign-progress"):
            break
        time.sleep(0.2)
    assert "Succeeded" in page.inner_text("#reassign-progress")
    assert any(0 < v < 100 for v in seen), f"the bar never showed progress in between: {sorted(seen)}"
    assert page.get_attribute("#overall-bar", "aria-valuenow") == "100"
    assert "In sync" in page.inner_text("#partitions")
    assert page.locator("#reassign-progress[hx-trigger]").count() == 0  # polling stopped
