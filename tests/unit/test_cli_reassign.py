"""``manage.py kafka reassign`` and ``elections``: kafka-reassign-partitions' files and flow over the
console's reassignment operation; every test gives the shared sandbox back (topics, throttles)."""

from __future__ import annotations

import json

import pytest

from console.models import AuditEvent, Operation
from console.models.operations import FINISHED_STATES
from console.models.reassignment import Reassignment
from console.reassignment import planner
from tests.conftest import run_now, throttle_configs_on
from tests.unit.kafka_cli import kafka
from tests.unit.matrix_world import kafka_restored
from tests.unit.reassign_world import make_topic as reassign_topic
from tests.unit.reassign_world import plan_file

pytestmark = pytest.mark.django_db
MB = 1024 * 1024


@pytest.fixture
def restored(frozen):
    with kafka_restored(frozen):
        yield frozen


def make_topic(sandbox, assignment) -> str:
    return reassign_topic(sandbox, assignment, mb_per_partition=2)


def write(tmp_path, name: str, doc: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_generate_writes_kafkas_format_and_it_round_trips(personas, kafka_cluster, restored, tmp_path):
    topic = make_topic(restored, [[1, 2], [2, 3]])
    topics_file = write(tmp_path, "topics.json", {"version": 1, "topics": [{"topic": topic}]})
    code, out = kafka(
        "reassign", "--generate", "--topics-to-move-json-file", topics_file, "--broker-list", "1,2",
        "--output", "json", "--as", "operator",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["current"] == {
        "version": 1,
        "partitions": [{"topic": topic, "partition": 1, "replicas": [2, 3], "log_dirs": ["any", "any"]}],
    }
    proposed = planner.parse_plan(json.dumps(data["proposed"]))  # what --execute reads back
    assert proposed == {(topic, 1): (2, 1)}
    assert json.loads(planner.export_plan(proposed)) == data["proposed"]
    code, out = kafka(
        "reassign", "--generate", "--topics-to-move-json-file", topics_file, "--broker-list", "1,2",
        "--as", "operator",
    )  # fmt: skip
    lines = out.splitlines()
    assert lines[0] == "Current partition replica assignment" and json.loads(lines[1]) == data["current"]
    assert (
        lines[3] == "Proposed partition reassignment configuration"
        and json.loads(lines[4]) == data["proposed"]
    )
    code, out = kafka(
        "reassign", "--generate", "--topics-to-move-json-file", topics_file, "--broker-list", "1,9",
        "--as", "operator",
    )  # fmt: skip
    assert code == 4 and "9" in out


def test_execute_then_verify_to_completion_with_the_throttles_taken_back(
    personas, kafka_cluster, restored, tmp_path
):
    topic = make_topic(restored, [[1, 2]])
    plan = plan_file(tmp_path, {(topic, 0): [1, 3]})
    code, out = kafka(
        "reassign", "--execute", "--reassignment-json-file", plan, "--throttle", str(MB),
        "--output", "json", "--as", "operator",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["started"] is True and data["rollback"]["partitions"][0]["replicas"] == [1, 2]
    r = Reassignment.objects.get(pk=data["reassignment"])
    assert r.operation_id == data["operation"] and r.throttle_bytes_per_s == MB
    started = AuditEvent.objects.get(action="reassignment.execute.requested", operation_id=r.operation_id)
    assert started.actor_name == "operator" and started.params["moves"] == [[topic, 0, [1, 2], [1, 3]]]
    try:
        run_now(r.operation_id)  # throttles, submit, first poll
        assert throttle_configs_on(_gw(kafka_cluster), topic)
        code, out = kafka(
            "reassign", "--verify", "--reassignment-json-file", plan, "--output", "json", "--as", "viewer"
        )
        progress = json.JSONDecoder().raw_decode(out)[0]  # stdout; the exit message follows it
        assert code == 8 and progress["stage"] == "moving"
        assert [(x["topic"], x["partition"], x["state"]) for x in progress["items"]] == [(topic, 0, "moving")]
        assert {t["state"] for t in progress["throttles"]} == {"set"}  # verify never removes them
        for _ in range(20):
            restored.advance(30)
            run_now(r.operation_id)
            if Operation.objects.get(pk=r.operation_id).state in FINISHED_STATES:
                break
        code, out = kafka("reassign", "--verify", "--reassignment-json-file", plan, "--as", "viewer")
        op = Operation.objects.get(pk=r.operation_id)
        assert code == 0, (out, op.state, op.error if hasattr(op, "error") else "")
        assert f"Reassignment of partition {topic}-0 is completed." in out and "all taken back" in out
    finally:
        _finish(r, restored)
    assert throttle_configs_on(_gw(kafka_cluster), topic) == set()


def _gw(cluster):
    from console.clusters.actions import gateway_for

    return gateway_for(cluster)


def _finish(r: Reassignment, sandbox) -> None:
    """Whatever happened, the operation ends (cancel if needed) so its throttles leave the sandbox."""
    from console import access
    from console.reassignment import actions as reassignment

    op = Operation.objects.get(pk=r.operation_id)
    if op.state not in FINISHED_STATES:
        r.refresh_from_db()
        if not r.cancel_requested:
            reassignment.cancel_reassignment(actor=access.system_actor(), reassignment=r)
        for _ in range(20):
            sandbox.advance(30)
            run_now(op.pk)
            op.refresh_from_db()
            if op.state in FINISHED_STATES:
                break


def test_cancel_through_the_console_and_refusals(personas, kafka_cluster, restored, tmp_path):
    topic = make_topic(restored, [[1, 2]])
    plan = plan_file(tmp_path, {(topic, 0): [1, 3]})
    code, out = kafka("reassign", "--execute", "--reassignment-json-file", plan, "--as", "viewer")
    assert code == 3
    refused = AuditEvent.objects.order_by("-id").first()
    assert (refused.action, refused.outcome, refused.actor_name) == (
        "reassignment.start",
        "refused",
        "viewer",
    )
    bad = plan_file(tmp_path, {(topic, 0): [1, 1]}, "bad.json")
    code, out = kafka("reassign", "--execute", "--reassignment-json-file", bad, "--as", "operator")
    assert code == 4
    code, out = kafka("reassign", "--verify", "--reassignment-json-file", plan, "--as", "operator")
    assert code == 6
    code, out = kafka(
        "reassign", "--execute", "--reassignment-json-file", plan, "--replica-alter-log-dirs-throttle", "5",
        "--as", "operator",
    )  # fmt: skip
    assert code == 2 and "log" in out
    code, out = kafka(
        "reassign", "--execute", "--reassignment-json-file", plan, "--throttle", str(MB), "--as", "operator"
    )
    assert code == 0 and "Save this to use as the --reassignment-json-file option during rollback" in out
    r = Reassignment.objects.filter(cluster=kafka_cluster).latest("pk")
    try:
        run_now(r.operation_id)
        code, out = kafka(
            "reassign", "--cancel", "--reassignment-json-file", plan, "--output", "json", "--as", "operator"
        )
        assert code == 0 and json.loads(out)["cancel_requested"] is True
        assert AuditEvent.objects.filter(action="reassignment.cancel", actor_name="operator").exists()
    finally:
        _finish(r, restored)
    r.refresh_from_db()
    assert r.outcome == "cancelled" and throttle_configs_on(_gw(kafka_cluster), topic) == set()
    code, out = kafka("reassign", "--cancel", "--reassignment-json-file", plan, "--as", "operator")
    assert code == 4 and "finished" in out


def test_preferred_election_from_a_json_file_and_unclean_needs_the_typed_confirmation(
    personas, kafka_cluster, restored, tmp_path
):
    topic = make_topic(restored, [[1, 2], [2, 3]])
    path = write(tmp_path, "elect.json", {"partitions": [{"topic": topic, "partition": 1}]})
    code, out = kafka(
        "elections", "--election-type", "preferred", "--path-to-json-file", path, "--output", "json",
        "--as", "operator",
    )  # fmt: skip
    data = json.loads(out)
    assert code == 0 and data["items"] == [{"topic": topic, "partition": 1}] and data["type"] == "PREFERRED"
    op = Operation.objects.get(pk=data["operation"])
    assert op.params["partitions"] == [[topic, 1]]
    run_now(op.pk)
    code, out = kafka(
        "elections", "--election-type", "unclean", "--topic", topic, "--partition", "0", "--as", "admin"
    )
    assert code == 4 and "unclean sandbox" in out
    assert AuditEvent.objects.filter(action="election.start", outcome="refused", actor_name="admin").exists()
    code, out = kafka("elections", "--election-type", "unclean", "--topic", topic, "--as", "operator")
    assert code == 3
    code, out = kafka(
        "elections", "--election-type", "preferred", "--topic", topic, "--output", "json", "--as", "operator"
    )
    assert code == 0 and [i["partition"] for i in json.loads(out)["items"]] == [0, 1]
    run_now(json.loads(out)["operation"])
