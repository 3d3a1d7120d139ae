"""Transactions through the three doors on the sandbox: the API (list, one id, producers, hanging,
abort with its statuses, 422 and 403 changing nothing, 202 held then approved and run), the pages (list,
detail, the Hanging tab, the abort form's typed confirmation) and the CLI (kafka-transactions' sub-commands,
a holdable abort, bad input refused with its exit code)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from console import operations
from console.changes import gate, kinds
from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestState
from console.requests import actions as requests
from console.transactions import held, reads
from tests.conftest import hold
from tests.unit.kafka_cli import kafka
from tests.unit.txn_world import make_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(kafka_cluster, sandbox):
    yield from make_world(kafka_cluster, sandbox)


def client_for(person) -> Client:
    c = Client()
    c.force_login(person)
    return c


def lso(cluster, topic) -> int | None:
    return reads.last_stable_offset(cluster, topic, 1)


def test_the_api_lists_describes_and_finds_the_hanging_one(personas, kafka_cluster, world):
    c, base = client_for(personas["viewer"]), f"/api/v1/clusters/{kafka_cluster.name}/transactions/"
    listed = c.get(base, {"state": "Ongoing", "per_page": 500}).json()
    row = next(r for r in listed["results"] if r["transactional_id"] == world["tid"])
    assert row["state"] == "Ongoing" and listed["count"] >= 1
    one = c.get(base + "id/" + world["tid"] + "/").json()
    assert (one["state"], one["topic_partitions"], one["producer_id"]) == ("Ongoing", [f"{world['topic']}-0"], row["producer_id"])  # fmt: skip
    assert c.get(base + "id/" + world["tid"] + "-never/").status_code == 404
    assert c.get(base + "id/hanging/").status_code == 404  # an id named like a route is an id
    assert c.get(base, {"state": "Running"}).status_code == 422
    producers = c.get(base + "producers/", {"topic": world["topic"], "partition": 1}).json()
    (p,) = producers["partitions"]["1"]["producers"]
    assert (p["producer_id"], p["current_transaction_start_offset"]) == (world["hung"]["producer_id"], 1)
    hanging = c.get(base + "hanging/", {"topic": world["topic"]}).json()
    assert [(h["partition"], h["start_offset"]) for h in hanging["hanging"]] == [(1, 1)]
    assert c.get(base + "hanging/").status_code == 422  # neither a topic nor a broker


def test_the_api_abort_refuses_bad_input_and_a_non_admin_then_aborts(personas, kafka_cluster, world):
    topic, url = world["topic"], f"/api/v1/clusters/{kafka_cluster.name}/transactions/abort/"
    admin = client_for(personas["admin"])
    body = {"topic": topic, "partition": 1, "start_offset": 1, "confirm": f"{topic}-1"}
    assert (
        client_for(personas["operator"]).post(url, body, content_type="application/json").status_code == 403
    )
    wrong = admin.post(url, {**body, "start_offset": 3}, content_type="application/json")
    assert (
        wrong.status_code == 422
        and "Could not find any open transactions starting at offset 3" in json.dumps(wrong.json()["error"])
    )
    assert admin.post(url, {**body, "confirm": "x"}, content_type="application/json").status_code == 422
    assert admin.post(url, {**body, "partition": "one"}, content_type="application/json").status_code == 400
    assert lso(kafka_cluster, topic) == 1
    assert not AuditEvent.objects.filter(action="transaction.abort", outcome="requested").exists()
    done = admin.post(url, body, content_type="application/json")
    assert done.status_code == 200, done.content
    assert (done.json()["ok"], done.json()["last_stable_offset_after"]) == (True, 4)
    assert lso(kafka_cluster, topic) == 4


def test_change_control_holds_an_abort_runs_it_once_approved_and_converges(
    personas, kafka_cluster, world, operator2
):
    topic = world["topic"]
    hold(kafka_cluster, personas["admin"], [held.GATE])
    code, out = kafka("transactions", "abort", "--topic", topic, "--partition", "1", "--start-offset", "1",
                      "--confirm", f"{topic}-1", "--as", "admin")  # fmt: skip
    assert code == 3, out  # held: submit it for approval
    url = f"/api/v1/clusters/{kafka_cluster.name}/transactions/abort/"
    answer = client_for(personas["admin"]).post(
        url, {"topic": topic, "partition": 1, "start_offset": 1, "confirm": f"{topic}-1", "reason": "hung"},
        content_type="application/json",
    )  # fmt: skip
    assert answer.status_code == 202, answer.content
    req = ChangeRequest.objects.get(pk=answer.json()["id"])
    assert (req.kind, req.state) == ("change.txn_abort", RequestState.PENDING)
    assert (
        req.review["rows"][0][0] == str(world["hung"]["producer_id"]) and req.review["rows"][0][-1] == "yes"
    )
    assert lso(kafka_cluster, topic) == 1
    from console.models import Role, RoleBinding

    RoleBinding.objects.filter(user=operator2, cluster=kafka_cluster).update(role=Role.ADMIN)
    requests.decide(actor=operator2, request=req, approve=True, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert (req.state, req.result["ok"]) == (RequestState.SUCCEEDED, True), req.result
    assert lso(kafka_cluster, topic) == 4
    with gate.passed(held.GATE):
        again = kinds.run(
            "change.txn_abort", personas["admin"], kafka_cluster, req.payload, "again", retry=True
        )
    assert again[0] is True and "already aborted" in again[1]


def test_the_pages_list_show_find_and_abort_with_the_typed_confirmation(personas, kafka_cluster, world):
    topic, name = world["topic"], kafka_cluster.name
    viewer = client_for(personas["viewer"])
    page = viewer.get(f"/c/{name}/transactions/", {"state": "Ongoing"}).content.decode()
    assert world["tid"] in page and "Ongoing" in page
    assert viewer.get(f"/c/{name}/transactions/", {"state": "Bogus"}).status_code == 200
    detail = viewer.get(f"/c/{name}/transactions/id/{world['tid']}/").content.decode()
    assert f"{topic}-0" in detail and 'id="transaction-state">Ongoing' in detail
    assert viewer.get(f"/c/{name}/transactions/id/{world['tid']}-never/").status_code == 404
    hanging = viewer.get(f"/c/{name}/transactions/hanging/", {"topic": topic}).content.decode()
    assert f'data-partition="{topic}-1"' in hanging and "abort…" not in hanging  # viewers get no abort link
    assert "Give a topic or a broker id" in viewer.get(f"/c/{name}/transactions/hanging/", {"max_transaction_timeout": 5}).content.decode()  # fmt: skip
    assert viewer.get(f"/c/{name}/transactions/abort/").status_code == 403
    admin = client_for(personas["admin"])
    assert "abort…" in admin.get(f"/c/{name}/transactions/hanging/", {"topic": topic}).content.decode()
    form = admin.get(
        f"/c/{name}/transactions/abort/", {"topic": topic, "partition": 1, "start_offset": 1}
    ).content.decode()
    assert 'id="abort-open"' in form and f"<code>{topic}-1</code>" in form
    post = {"topic": topic, "partition": 1, "start_offset": 1, "action": "apply"}
    refused = admin.post(f"/c/{name}/transactions/abort/", {**post, "confirmation": f"{topic}-0"})
    assert refused.status_code == 200 and "Type the topic-partition" in refused.content.decode()
    assert lso(kafka_cluster, topic) == 1
    done = admin.post(f"/c/{name}/transactions/abort/", {**post, "confirmation": f"{topic}-1"})
    assert done.status_code == 200 and 'id="abort-result"' in done.content.decode()
    assert lso(kafka_cluster, topic) == 4


def test_the_cli_mirrors_kafka_transactions(personas, kafka_cluster, world):
    topic, tid = world["topic"], world["tid"]
    code, out = kafka("transactions", "list", "--state", "Ongoing", "--output", "json")
    assert code == 0 and tid in [r["transactional_id"] for r in json.loads(out)["items"]]
    code, out = kafka("transactions", "describe", "--transactional-id", tid)
    assert code == 0 and "Ongoing" in out and f"{topic}-0" in out
    assert kafka("transactions", "describe", "--transactional-id", tid + "-never")[0] == 6
    code, out = kafka(
        "transactions", "describe-producers", "--topic", topic, "--partition", "1", "--output", "json"
    )
    assert code == 0 and json.loads(out)["items"][0]["current_transaction_start_offset"] == 1
    code, out = kafka("transactions", "find-hanging", "--topic", topic, "--output", "json")
    assert code == 0 and [(h["partition"], h["start_offset"]) for h in json.loads(out)["items"]] == [(1, 1)]
    code, out = kafka("transactions", "find-hanging")
    assert code == 4, out
    code, out = kafka("transactions", "abort", "--topic", topic, "--partition", "1", "--start-offset", "2",
                      "--confirm", f"{topic}-1", "--as", "admin")  # fmt: skip
    assert code == 4 and "Could not find any open transactions starting at offset 2" in out
    code, out = kafka("transactions", "abort", "--topic", topic, "--partition", "1", "--start-offset", "1",
                      "--confirm", f"{topic}-1", "--as", "operator")  # fmt: skip
    assert code == 3 and "cluster.admin" in out
    assert lso(kafka_cluster, topic) == 1
    code, out = kafka("transactions", "abort", "--topic", topic, "--partition", "1", "--start-offset", "1",
                      "--confirm", f"{topic}-1", "--as", "admin", "--output", "json")  # fmt: skip
    assert code == 0 and json.loads(out)["last_stable_offset_after"] == 4


def test_a_held_abort_goes_back_for_review_when_the_transaction_ended_meanwhile(
    personas, kafka_cluster, world, operator2
):
    topic = world["topic"]
    hold(kafka_cluster, personas["admin"], [held.GATE])
    page = client_for(personas["admin"]).post(
        f"/c/{kafka_cluster.name}/transactions/abort/",
        {"topic": topic, "partition": 1, "start_offset": 1, "confirmation": f"{topic}-1", "action": "apply",
         "justification": "hung since the coordinator lost its log"},
    )  # fmt: skip
    assert page.status_code == 302, page.content.decode()
    req = ChangeRequest.objects.get(kind="change.txn_abort", state=RequestState.PENDING)
    from console.transactions import actions

    with gate.passed(held.GATE):  # someone else closes it first
        actions.abort_transaction(actor=personas["admin"], cluster=kafka_cluster, topic=topic, partition=1,
                                  start_offset=1, confirmation=f"{topic}-1")  # fmt: skip
    from console.models import Role, RoleBinding

    RoleBinding.objects.filter(user=operator2, cluster=kafka_cluster).update(role=Role.ADMIN)
    requests.decide(actor=operator2, request=req, approve=True, comment="ok")
    req.refresh_from_db()
    assert req.state == RequestState.PENDING  # drift: back for a fresh review
    assert AuditEvent.objects.filter(action="transaction.abort", outcome="requested").count() == 1
