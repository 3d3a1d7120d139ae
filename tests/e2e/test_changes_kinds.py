"""E2E: the other held kinds in Chromium — topic creation, partition increase, broker config, topic
deletion, leader election, offset reset and a running move's throttle change. Each: the operator
submits from its own page, a second operator checks the review on the change's page and approves,
and exactly that runs."""

from __future__ import annotations

import uuid

import pytest

from console import operations
from console.changes import actions as changes
from console.changes import gate
from console.configs import actions as configs
from console.kafka import ConfigChange
from console.models import Operation, Role
from console.models.reassignment import Reassignment
from console.models.requests import ChangeRequest, RequestState
from console.reassignment import actions as reassignment
from tests.conftest import run_now
from tests.e2e.conftest import login
from tests.e2e.pages import approve_in_browser, fill_new_topic, preview_config_change, review_row

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
MB = 1024 * 1024


@pytest.fixture
def held(personas, kafka_cluster, operator2, fresh_metadata_cache):
    """Every kind held for operators, one approver; operator2 is the second pair of eyes."""
    changes.set_policy(
        actor=personas["admin"], cluster=kafka_cluster, enabled=True, kinds=list(gate.KINDS),
        roles=[Role.OPERATOR], approvers=1,
    )  # fmt: skip
    return f"/c/{kafka_cluster.name}"


def shows(expected: list[str], columns=None):
    """The approver's check: the review's first row (or the given columns of it) reads ``expected``."""

    def check(tab):
        got = review_row(tab)
        got = [got[i] for i in columns] if columns else got
        assert got == expected, got

    return check


def submitted(page, base, kind) -> ChangeRequest:
    page.wait_for_url(f"{base}/requests/*/")
    page.locator(".messages", has_text="held for approval").wait_for()
    return ChangeRequest.objects.filter(gated=True, kind=kind).latest("id")


def test_topic_creation_partitions_broker_config_and_deletion_held_in_the_browser(
    page, browser, live_server, personas, kafka_cluster, sandbox, held
):
    base = live_server.url + held
    name = f"e2e.kinds-{uuid.uuid4().hex[:8]}"
    login(page, live_server, "operator", "pw-operator")

    page.goto(f"{base}/topics/-/new/")
    fill_new_topic(page, name, 1, 1)
    assert page.locator("button", has_text="Create").count() == 0  # no plain Create on a held cluster
    page.click("#submit-for-review")
    req = submitted(page, base, "change.topic.create")
    assert name not in sandbox.state.topics
    approve_in_browser(
        browser,
        live_server,
        base,
        req.pk,
        shows([name, "does not exist", "1 partitions, RF 1; defaults", "valid (dry run)"]),
    )
    assert len(sandbox.state.topics[name].partitions) == 1

    page.goto(f"{base}/topics/{name}/partitions/")
    page.fill("#id_total_count", "3")
    page.click("#submit-for-review")
    req = submitted(page, base, "change.topic.partitions")
    assert len(sandbox.state.topics[name].partitions) == 1
    approve_in_browser(
        browser,
        live_server,
        base,
        req.pk,
        shows([name, "1 partitions", "3 partitions"]),
    )
    assert len(sandbox.state.topics[name].partitions) == 3

    page.goto(f"{base}/topics/-/brokers/1/")
    preview_config_change(page, "log.cleaner.threads", "2")
    page.locator("#submit-for-review").wait_for()
    page.click("#submit-for-review")
    req = submitted(page, base, "change.config")
    approve_in_browser(
        browser,
        live_server,
        base,
        req.pk,
        shows(["log.cleaner.threads", "2"], columns=(0, 3)),
    )
    broker = configs.broker_resource("1")
    with gate.passed("broker.config"):
        done = configs.alter_configs(  # read back, and give the shared sandbox its default again
            actor=personas["admin"], cluster=kafka_cluster, resource=broker,
            changes=[ConfigChange("log.cleaner.threads", "DELETE", None)],
        )  # fmt: skip
    assert [(d.name, d.old_value) for d in done.diffs] == [("log.cleaner.threads", "2")]

    page.goto(f"{base}/topics/?q={name}")
    page.check(f"input[name=names][value='{name}']")
    page.wait_for_timeout(500)  # a selected row stays selected (it once re-ran the search, clearing it)
    assert page.is_checked(f"input[name=names][value='{name}']")
    page.click("text=Delete selected…")
    page.fill("input[name=confirmation]", name)
    page.click("#submit-for-review")
    req = submitted(page, base, "change.topic.delete")
    assert name in sandbox.state.topics
    approve_in_browser(
        browser,
        live_server,
        base,
        req.pk,
        shows([name, "3 partitions", "deleted"]),
    )
    assert name not in sandbox.state.topics


def test_election_offset_reset_and_throttle_change_held_in_the_browser(
    page, browser, live_server, personas, kafka_cluster, sandbox, held
):
    base = live_server.url + held
    tag = uuid.uuid4().hex[:8]
    topic, group = f"e2e.kinds2-{tag}", f"e2e-kinds-{tag}"
    sandbox.create_topic(topic, partitions=1, replication_factor=2, assignment=[[1, 2]])
    # the sandbox, as Kafka, gives leadership back to the preferred replica on its own unless told not to
    sandbox.set_broker_config("", "auto.leader.rebalance.enable", "false")
    with sandbox.state.lock:
        p = sandbox.state.topics[topic].partitions[0]
        p.leader, p.log_start_offset, p.end_offset = 2, 0, 100  # led by its second replica
        p.leader_epoch += 1
        sandbox.state.touch(topic)
    sandbox.add_group(group, offsets={(topic, 0): 80})
    login(page, live_server, "operator", "pw-operator")

    page.goto(f"{base}/reassignments/elections/")
    page.check("input[name=scope][value=selected]")
    page.fill("#id_partitions", f"{topic}-0")
    page.click("#submit-for-review")
    req = submitted(page, base, "change.election")
    approve_in_browser(
        browser,
        live_server,
        base,
        req.pk,
        shows([topic, "0", "2", "1 (preferred)"], columns=(0, 1, 2, 4)),
    )
    election = Operation.objects.filter(kind=reassignment.ELECT_KIND).latest("id")
    operations.run(election.pk, worker="e2e")
    assert sandbox.state.topics[topic].partitions[0].leader == 1
    sandbox.set_broker_config("", "auto.leader.rebalance.enable", None)

    page.goto(f"{base}/groups/{group}/-/reset/")
    page.check('input[name=mode][value="shift-by"]')
    page.fill("#id_shift", "-30")
    page.click("#dry-run")
    page.wait_for_selector("#reset-plan")
    page.fill("#id_confirmation", group)
    page.click("#execute-reset")
    req = submitted(page, base, "change.group.reset")
    assert sandbox.state.groups[group].offsets[(topic, 0)] == 80
    approve_in_browser(
        browser,
        live_server,
        base,
        req.pk,
        shows([topic, "0", "80", "50"], columns=(0, 1, 2, 3)),
    )
    assert sandbox.state.groups[group].offsets[(topic, 0)] == 50

    sandbox.produce_synthetic(topic, 20 * MB)
    sandbox.advance(1)
    sandbox.produce_synthetic(topic, 0)
    speed, sandbox.speed = sandbox.speed, 0  # the move stays under way while the change waits
    try:
        with gate.passed("reassignment"):
            op = reassignment.start_reassignment(
                actor=personas["operator"], cluster=kafka_cluster, proposed={(topic, 0): (1, 3)}, throttle=MB
            )
        run_now(op.pk)  # throttles set, moving
        r = Reassignment.objects.get(operation=op)
        page.goto(f"{base}/reassignments/{r.pk}/")
        page.fill("#id_throttle_mb", "3")
        page.fill("#throttle-justification", "catch up before the window")
        page.click("#submit-for-review")
        req = submitted(page, base, "change.throttle")
        approve_in_browser(
            browser,
            live_server,
            base,
            req.pk,
            shows([f"reassignment #{r.pk}", "1.0 MiB/s per broker", "3.0 MiB/s per broker"]),
        )
        r.refresh_from_db()
        assert (
            r.throttle_bytes_per_s == 3 * MB
            and ChangeRequest.objects.get(pk=req.pk).state == RequestState.SUCCEEDED
        )
    finally:
        with gate.passed():
            reassignment.cancel_reassignment(
                actor=personas["operator"], reassignment=Reassignment.objects.get(operation=op)
            )
        for _ in range(20):
            run_now(op.pk)
            sandbox.advance(1)
            if Operation.objects.get(pk=op.pk).finished:
                break
        sandbox.speed = speed
    assert Operation.objects.get(pk=op.pk).finished
