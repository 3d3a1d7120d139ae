"""Moves between log dirs through the three doors on a sandbox with two dirs per broker: the broker's
log-dirs page (dirs, replicas with search, the move form's dry run and Move, the progress page), the
plan-file page, the API (the dirs, the dry run, 202 with the operation, its progress, 422/403 changing
nothing, 202 held) and the CLI (describe, move --dry-run/--execute, status, bad input's exit code)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from console.models import ChangeRequest, Operation, OperationState
from tests.conftest import hold, run_now
from tests.unit.kafka_cli import kafka
from tests.unit.test_logdirs import _other, _topic, _where, jbod, jcluster, people  # noqa: F401

pytestmark = pytest.mark.django_db


def client_for(person) -> Client:
    c = Client()
    c.force_login(person)
    return c


def test_page_shows_dirs_and_moves_a_replica(jbod, jcluster, people):  # noqa: F811
    topic = _topic(jbod)
    target = _other(jbod, topic)
    c = client_for(people["operator"])
    url = f"/c/{jcluster.name}/brokers/1/log-dirs/"
    page = c.get(url, {"q": topic}).content.decode()
    assert target in page and topic in page and 'id="log-dir-move-form"' in page
    form = {"topic": topic, "partitions": "0", "target": target, "throttle_mib": "20"}
    dry = c.post(url, {**form, "action": "dry_run"}).content.decode()
    assert 'id="log-dir-plan"' in dry and _where(jbod, topic, 0, 1) in dry and "40.0 MiB" in dry
    assert not jbod.state.partition(topic, 0).futures  # a dry run sends nothing
    answer = c.post(url, {**form, "action": "apply"})
    assert answer.status_code == 302
    op = Operation.objects.get(kind="logdir.move", cluster=jcluster)
    assert answer["Location"] == f"/c/{jcluster.name}/log-dir-moves/{op.pk}/"
    for _ in range(10):
        run_now(op.pk)
        op.refresh_from_db()
        if op.finished:
            break
        jbod.advance(1)
    assert op.state == OperationState.SUCCEEDED and _where(jbod, topic, 0, 1) == target
    progress = c.get(f"/c/{jcluster.name}/log-dir-moves/{op.pk}/progress/", HTTP_HX_REQUEST="true")
    assert progress.status_code == 286 and "Succeeded" in progress.content.decode()
    broker_page = c.get(f"/c/{jcluster.name}/brokers/1/").content.decode()
    assert 'id="log-dirs-link"' in broker_page


def test_page_bad_input_and_viewer(jbod, jcluster, people):  # noqa: F811
    topic = _topic(jbod)
    url = f"/c/{jcluster.name}/brokers/1/log-dirs/"
    op_c = client_for(people["operator"])
    bad = op_c.post(
        url, {"topic": topic, "partitions": "0, x", "target": _other(jbod, topic), "action": "apply"}
    )
    assert bad.status_code == 200 and "Partitions are numbers" in bad.content.decode()
    here = op_c.post(
        url, {"topic": topic, "partitions": "0", "target": _where(jbod, topic, 0, 1), "action": "apply"}
    )
    assert "is already in" in here.content.decode()
    viewer = client_for(people["viewer"])
    assert (
        viewer.get(url).status_code == 200
        and 'id="log-dir-move-form"' not in viewer.get(url).content.decode()
    )
    assert (
        viewer.post(url, {"topic": topic, "partitions": "0", "target": "/x", "action": "apply"}).status_code
        == 403
    )
    assert not Operation.objects.filter(kind="logdir.move").exists()


def test_plan_page_refuses_a_broker_change(jbod, jcluster, people):  # noqa: F811
    topic = _topic(jbod)
    c = client_for(people["operator"])
    plan = {
        "version": 1,
        "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 3], "log_dirs": ["any", "any"]}],
    }
    page = c.post(f"/c/{jcluster.name}/log-dir-moves/plan/", {"plan": json.dumps(plan), "action": "dry_run"})
    assert "Reassignments page" in page.content.decode()
    plan["partitions"][0] |= {"replicas": [1, 2], "log_dirs": [_other(jbod, topic), "any"]}
    page = c.post(f"/c/{jcluster.name}/log-dir-moves/plan/", {"plan": json.dumps(plan), "action": "dry_run"})
    assert 'id="log-dir-plan"' in page.content.decode() and 'id="log-dir-move-run"' in page.content.decode()


def test_api_dirs_dry_run_move_and_refusals(jbod, jcluster, people):  # noqa: F811
    topic = _topic(jbod)
    target = _other(jbod, topic)
    base = f"/api/v1/clusters/{jcluster.name}/"
    viewer, op_c = client_for(people["viewer"]), client_for(people["operator"])
    dirs = viewer.get(base + "brokers/1/log-dirs/", {"search": topic}).json()
    assert sorted(d["path"] for d in dirs["log_dirs"]) == sorted(jbod.state.brokers[1].log_dirs)
    assert any(r["topic"] == topic for d in dirs["log_dirs"] for r in d["replica_list"])
    move = {"moves": [{"topic": topic, "partition": 0, "broker": 1, "dir": target}]}
    assert viewer.post(base + "log-dir-moves/", move, content_type="application/json").status_code == 403
    bad = op_c.post(
        base + "log-dir-moves/",
        {"moves": [{"topic": topic, "partition": 0, "broker": 1, "dir": "/nope"}]},
        content_type="application/json",
    )
    assert bad.status_code == 422 and "LOG_DIR_NOT_FOUND" in bad.content.decode()
    bad = op_c.post(base + "log-dir-moves/", {"moves": "x"}, content_type="application/json")
    assert bad.status_code == 422
    dry = op_c.post(
        base + "log-dir-moves/", {**move, "dry_run": True}, content_type="application/json"
    ).json()
    assert dry["moves"][0]["current_dir"] == _where(jbod, topic, 0, 1) and dry["bytes_to_copy"] == 40 << 20
    assert not Operation.objects.filter(kind="logdir.move").exists()
    started = op_c.post(
        base + "log-dir-moves/", {**move, "throttle": 16 << 20}, content_type="application/json"
    )
    assert started.status_code == 202
    op_id = started.json()["id"]
    run_now(op_id)
    run_now(op_id)
    jbod.advance(1)
    run_now(op_id)
    got = viewer.get(base + f"log-dir-moves/{op_id}/").json()
    assert got["moves"][0]["state"] == "copying" and 0 < got["moves"][0]["copied_bytes"] < 40 << 20
    assert got["throttles"]["1"]["state"] == "set"


def test_api_held_by_policy_then_approved_and_run(jbod, jcluster, people, django_user_model):  # noqa: F811
    from console import operations
    from console.models import Role, RoleBinding
    from console.models.requests import RequestState
    from console.requests import actions as requests

    topic = _topic(jbod)
    target = _other(jbod, topic)
    hold(jcluster, people["admin"], ["logdir.move"])
    move = {"moves": [{"topic": topic, "partition": 0, "broker": 1, "dir": target}], "reason": "disk 0 fills"}
    url = f"/api/v1/clusters/{jcluster.name}/log-dir-moves/"
    answer = client_for(people["operator"]).post(url, move, content_type="application/json")
    assert answer.status_code == 202, answer.content
    req = ChangeRequest.objects.get(pk=answer.json()["id"])
    assert (req.kind, req.state) == ("change.logdir_move", RequestState.PENDING)
    assert req.review["rows"][0][2] == _where(jbod, topic, 0, 1) and req.review["rows"][0][3] == target
    assert not Operation.objects.filter(kind="logdir.move").exists()
    approver = django_user_model.objects.create_user(username="ld-approver", password="pw")
    RoleBinding.objects.create(cluster=jcluster, user=approver, role=Role.ADMIN)
    requests.decide(actor=approver, request=req, approve=True, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert req.state == RequestState.SUCCEEDED, req.result
    op = Operation.objects.get(kind="logdir.move", cluster=jcluster)
    for _ in range(10):
        run_now(op.pk)
        op.refresh_from_db()
        if op.finished:
            break
        jbod.advance(1)
    assert op.state == OperationState.SUCCEEDED and _where(jbod, topic, 0, 1) == target


def test_cli_describe_dry_run_execute_status(jbod, jcluster, people):  # noqa: F811
    topic = _topic(jbod)
    target = _other(jbod, topic)
    code, out = kafka("log-dirs", "describe", "--cluster", jcluster.name, "--as", "viewer", "--broker", "1")
    assert code == 0 and all(d in out for d in jbod.state.brokers[1].log_dirs)
    args = [
        "log-dirs",
        "move",
        "--cluster",
        jcluster.name,
        "--as",
        "operator",
        "--broker",
        "1",
        "--topic",
        topic,
        "--partition",
        "0",
        "--dir",
        target,
    ]
    code, out = kafka(*args, "--dry-run")
    assert code == 0 and "41943040 bytes to copy" in out
    code, out = kafka(
        "log-dirs", "move", "--cluster", jcluster.name, "--as", "operator", "--broker", "1", "--topic", topic
    )
    assert code == 2 and "Give --plan FILE" in out
    code, out = kafka(*args[:-1], "/nope", "--execute")
    assert code == 4 and "LOG_DIR_NOT_FOUND" in out
    code, out = kafka(*args, "--execute", "--as", "viewer")
    assert code == 3
    code, out = kafka(*args, "--execute", "--throttle", str(20 << 20))
    assert code == 0 and "started" in out
    op = Operation.objects.get(kind="logdir.move", cluster=jcluster)
    for _ in range(10):
        run_now(op.pk)
        op.refresh_from_db()
        if op.finished:
            break
        jbod.advance(1)
    code, out = kafka("log-dirs", "status", "--cluster", jcluster.name, "--as", "viewer", str(op.pk))
    assert code == 0 and "succeeded" in out and _where(jbod, topic, 0, 1) == target


def test_bad_input_on_each_door_changes_nothing(jbod, jcluster, people):  # noqa: F811
    topic = _topic(jbod)
    target = _other(jbod, topic)
    c = client_for(people["operator"])
    page = c.post(f"/c/{jcluster.name}/log-dir-moves/plan/", {"plan": "{not json", "action": "apply"})
    assert page.status_code == 200 and "The plan is not JSON" in page.content.decode()
    page = c.post(f"/c/{jcluster.name}/log-dir-moves/plan/", {"plan": "", "action": "apply"})
    assert "Paste the plan" in page.content.decode()
    url = f"/api/v1/clusters/{jcluster.name}/log-dir-moves/"
    one = {"topic": topic, "partition": 0, "broker": 1, "dir": target}
    for body, expect in (
        ({"moves": [one], "throttle": 5}, "at least 1024"),
        ({"moves": [one], "plan": {"version": 1, "partitions": []}}, "either"),
        (
            {
                "plan": {
                    "version": 1,
                    "partitions": [
                        {"topic": topic, "partition": 0, "replicas": [2, 3], "log_dirs": [target, "any"]}
                    ],
                }
            },
            "Reassignments page",
        ),
        ({"moves": [{**one, "partition": -1}]}, "Partitions are numbers"),
        ({"moves": [{**one, "dir": "data-1"}]}, "absolute path"),
    ):
        answer = c.post(url, body, content_type="application/json")
        assert answer.status_code == 422 and expect in answer.content.decode(), answer.content
    code, out = kafka(
        "log-dirs",
        "move",
        "--cluster",
        jcluster.name,
        "--as",
        "operator",
        "--plan",
        "/nonexistent.json",
        "--execute",
    )
    assert code == 2 and "Cannot read" in out
    code, out = kafka(
        "log-dirs",
        "move",
        "--cluster",
        jcluster.name,
        "--as",
        "operator",
        "--broker",
        "1",
        "--topic",
        topic,
        "--partition",
        "0",
        "--dir",
        target,
        "--execute",
        "--throttle",
        "10",
    )
    assert code == 4 and "at least 1024" in out
    assert (
        not Operation.objects.filter(kind="logdir.move").exists()
        and not jbod.state.partition(topic, 0).futures
    )


def test_held_run_again_converges(jbod, jcluster, people):  # noqa: F811
    from console.changes import gate, kinds

    topic = _topic(jbod, size=1 << 20)
    target = _other(jbod, topic)
    payload = {"moves": [{"topic": topic, "partition": 0, "broker": 1, "dir": target}], "throttle": None}
    with gate.passed("logdir.move"):
        first = kinds.run("change.logdir_move", people["operator"], jcluster, payload, "r1")
        assert first[0] is True, first
        again = kinds.run("change.logdir_move", people["operator"], jcluster, payload, "r1", retry=True)
        assert again[0] is True and "already" in again[1], again
        other = kinds.run("change.logdir_move", people["operator"], jcluster, payload, "r2")
        assert other[0] is False  # not a retry: refused, nothing sent twice
