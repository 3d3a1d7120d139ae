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


def test_progress_tells_estimates_staleness_and_the_audit_keeps_every_step(
    page, live_server, sandbox, personas
):
    """Throttled move at 1 MB/s (sandbox clock at real time): '~N messages', a smoothed rate,
    the throttle per broker; the worker stops -> the stale warning; throttle change and a
    confirmed cancel; then the audit events of start, change, cancel and end with their details."""
    import threading

    from console import operations
    from console.models import AuditEvent, Operation

    running = threading.Event()
    running.set()

    def step():
        if not running.is_set():
            return
        for op_id in Operation.objects.filter(state="pending").values_list("pk", flat=True):
            operations.run(op_id, worker="e2e")
        operations.run_due(worker="e2e")

    topic = "e2e-progress"
    sandbox.create_topic(topic, partitions=1, replication_factor=2, assignment=[[1, 2]])
    sandbox.produce_synthetic(topic, 40 * MB)
    sandbox.advance(1)
    sandbox.produce_synthetic(topic, 0)
    speed, sandbox.speed = sandbox.speed, 1.0
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 3]}]}
    try:
        with background_worker(step):
            login(page, live_server, "operator", "pw-operator")
            page.goto(f"{live_server.url}/c/sandbox/reassignments/new/")
            assert page.locator("#id_topics").is_hidden()  # only the JSON intent's fields
            radio = page.locator("input[name=intent][value=json]").bounding_box()
            label = page.locator("label:has(> input[name=intent][value=json])").bounding_box()
            assert label["height"] < 2 * radio["height"] + 8, (
                radio,
                label,
            )  # one line: radio beside its text
            assert radio["x"] <= label["x"] + 1
            page.check("input[name=intent][value=move_off]")
            assert page.locator("#id_topics").is_visible() and page.locator("#id_plan_json").is_hidden()
            page.check("input[name=intent][value=json]")
            page.fill("#id_plan_json", json.dumps(plan))
            page.fill("#id_throttle_mb", "1")
            page.click("button[value=start]")
            page.wait_for_url(f"{live_server.url}/c/sandbox/reassignments/*/")

            # estimates, a rate once the window has samples, the throttle per broker
            page.locator("#progress-text", has_text="MiB/s (30 s average)").wait_for(timeout=30000)
            text = page.inner_text("#progress-text")
            assert "per broker" in text and "ETA" in text and "measuring" not in text, text
            assert "messages / " in page.inner_text("#partitions")  # "Behind: ~N messages / X MB"
            assert "Progress read from Kafka" in page.inner_text("#progress-updated")

            running.clear()  # the worker stops: the page says its figures are old
            page.locator("#progress-stale").wait_for(timeout=20000)
            assert "Nothing from the console's worker" in page.inner_text("#progress-stale")
            running.set()
            page.locator("#progress-stale").wait_for(state="detached", timeout=20000)

            # the console itself unreachable: after three failed polls the page says so
            page.route("**/progress/", lambda route: route.abort())
            page.locator("#connection-lost").wait_for(state="visible", timeout=15000)
            assert "progress updates failed" in page.inner_text("#connection-lost")
            page.unroute("**/progress/")
            page.locator("#connection-lost").wait_for(state="hidden", timeout=15000)

            page.fill("#id_throttle_mb", "2")
            page.click("#throttle-form button")
            page.locator("#progress-text", has_text="throttle 2.0 MiB/s per broker").wait_for()
            page.once("dialog", lambda dialog: dialog.accept())
            page.click("#reassign-controls button.danger")
            # the cancel is an operation step: a retry after a transient error (the shared-cache test
            # database's "table is locked") waits out its backoff first
            page.locator("#reassign-progress .state", has_text="Cancelled").wait_for(timeout=60000)
            assert page.locator("#reassign-controls").count() == 0  # no Cancel / Change throttle once ended

            page.goto(f"{live_server.url}/c/sandbox/topics/{topic}/")
            recent = page.inner_text("#topic-events")
    finally:
        sandbox.speed = speed

    op = Operation.objects.get(kind="reassignment.execute", params__topics=[topic])
    events = {e.action: e for e in AuditEvent.objects.filter(operation_id=op.pk)}
    assert events["reassignment.execute.requested"].params["moves"] == [[topic, 0, [1, 2], [1, 3]]]
    assert events["reassignment.execute.requested"].params["plan_sha256"]
    changed = events["reassignment.throttle.changed"]
    assert (changed.before, changed.after) == ({"rate": MB}, {"rate": 2 * MB})
    assert events["reassignment.cancel"].outcome == "requested"
    assert events["reassignment.execute.cancelled"].outcome == "cancelled"
    for action in ("reassignment.execute.requested", "reassignment.throttle.changed", "reassignment.cancel"):
        assert action in recent, recent
