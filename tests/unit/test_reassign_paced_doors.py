"""Paced reassignments through the three doors: the page's form and Pause / Resume beside Cancel,
the API's fields, queue and pause / resume endpoints, the CLI's options and --pause / --resume;
bad input refused clearly with nothing changed, a viewer refused."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from console.identity import tokens
from console.models import AuditEvent
from console.models.reassignment import Reassignment
from console.reassignment import queue
from console.reassignment.pacing import Pacing
from tests.conftest import run_now
from tests.unit.kafka_cli import kafka
from tests.unit.reassign_world import MB, clear_throttles, kafka_plan, make_topic, plan_file, start

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_throttles_left(sandbox):
    yield
    clear_throttles(sandbox)


def three(frozen) -> str:
    return make_topic(frozen, [[1, 2]] * 3, mb_per_partition=2)


def plan_of(topic) -> dict:
    return kafka_plan({(topic, p): [1, 3] for p in range(3)})


def api(client, user, method: str, route: str, body: dict | None = None, **kwargs):
    secret = tokens.create_token(actor=user, name="t", scope="write", days=1).secret
    call = getattr(client, method)
    return call(
        reverse(f"api:{route}", kwargs=kwargs),
        *(() if body is None else (json.dumps(body),)),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )


def page(name, cluster, **kw):
    return reverse(name, kwargs={"name": cluster.name, **kw})


# ---- the page ------------------------------------------------------------------------------------


def test_the_page_starts_a_paced_move_and_shows_its_queue_with_pause_and_resume(
    client, personas, kafka_cluster, frozen
):
    topic = three(frozen)
    client.force_login(personas["operator"])
    form = {
        "intent": "json",
        "plan_json": json.dumps(plan_of(topic)),
        "leader_throttle_mb": "2",
        "follower_throttle_mb": "1",
        "max_moves_per_broker": "1",
        "action": "start",
    }
    response = client.post(page("reassign_new", kafka_cluster), form)
    r = Reassignment.objects.get()
    assert response.status_code == 302
    assert (r.max_moves_per_broker, r.leader_throttle_bytes_per_s, r.follower_throttle_bytes_per_s) == (
        1,
        2 * MB,
        MB,
    )
    run_now(r.operation_id)
    detail = client.get(page("reassign_detail", kafka_cluster, rid=r.pk)).content.decode()
    assert "Paced: 2 queued" in detail and f"{topic}-1, {topic}-2" in detail
    assert "broker 2: 1/1, broker 3: 1/1" in detail
    assert detail.count('class="state-pending">Queued') == 2
    assert 'id="pause"' in detail and "Cancel reassignment" in detail

    paused = client.post(page("reassign_pause", kafka_cluster, rid=r.pk), follow=True).content.decode()
    assert "Paused (2 queued)" in paused and 'id="resume"' in paused and 'id="pause"' not in paused
    r.refresh_from_db()
    assert r.paused
    again = client.post(page("reassign_pause", kafka_cluster, rid=r.pk), follow=True).content.decode()
    assert "is already paused" in again
    client.post(page("reassign_resume", kafka_cluster, rid=r.pk))
    r.refresh_from_db()
    assert not r.paused


@pytest.mark.parametrize(
    "field,value,error",
    [
        ("max_moves_per_broker", "0", "at least 1"),
        ("max_moves_per_broker", "-3", "at least 1"),
        ("leader_throttle_mb", "-1", "positive rate"),
        ("follower_throttle_mb", "0", "positive rate"),
        ("broker_throttles", "3=abc", "not a number"),
        ("broker_throttles", "9=5", "does not involve"),
    ],
)
def test_bad_pacing_on_the_page_is_an_error_and_changes_nothing(
    client, personas, kafka_cluster, frozen, field, value, error
):
    topic = three(frozen)
    client.force_login(personas["operator"])
    form = {"intent": "json", "plan_json": json.dumps(plan_of(topic)), "throttle_mb": "1", field: value}
    for action in ("preview", "start"):
        response = client.post(page("reassign_new", kafka_cluster), {**form, "action": action})
        assert response.status_code == 200 and error in response.content.decode()
    assert not Reassignment.objects.exists()


def test_a_viewer_can_neither_pause_nor_resume(client, personas, kafka_cluster, frozen):
    op, r = start(personas, kafka_cluster, {(three(frozen), 0): (1, 3)}, pacing=Pacing(max_moves=1))
    client.force_login(personas["viewer"])
    assert client.post(page("reassign_pause", kafka_cluster, rid=r.pk)).status_code == 403
    detail = client.get(page("reassign_detail", kafka_cluster, rid=r.pk)).content.decode()
    assert 'id="pause"' not in detail and "Paced:" in detail
    r.refresh_from_db()
    assert not r.paused


# ---- the API -------------------------------------------------------------------------------------


def test_the_api_starts_a_paced_move_shows_its_queue_and_pauses_it(client, personas, kafka_cluster, frozen):
    topic = three(frozen)
    body = {
        "plan": plan_of(topic),
        "dry_run": False,
        "throttle_bytes_per_s": MB,
        "broker_throttles": {"3": 2 * MB},
        "max_moves_per_broker": 1,
    }
    started = api(client, personas["operator"], "post", "reassignments", body, name=kafka_cluster.name)
    assert started.status_code == 201, started.content
    rid = started.json()["id"]
    assert started.json()["max_moves_per_broker"] == 1 and started.json()["broker_throttles"] == {"3": 2 * MB}
    r = Reassignment.objects.get(pk=rid)
    run_now(r.operation_id)
    detail = api(client, personas["viewer"], "get", "reassignment", name=kafka_cluster.name, rid=rid).json()
    assert detail["queue"]["queued"] == 2 and detail["queue"]["in_flight_per_broker"] == {"2": 1, "3": 1}
    assert detail["queue"]["next"] == [f"{topic}-1", f"{topic}-2"]

    refused = api(client, personas["viewer"], "post", "reassignment-pause", name=kafka_cluster.name, rid=rid)
    assert refused.status_code == 403
    paused = api(client, personas["operator"], "post", "reassignment-pause", name=kafka_cluster.name, rid=rid)
    assert paused.status_code == 200 and paused.json()["paused"] is True
    assert paused.json()["queue"]["text"] == "paused (2 queued)"
    twice = api(client, personas["operator"], "post", "reassignment-pause", name=kafka_cluster.name, rid=rid)
    assert twice.status_code == 422 and "already paused" in twice.json()["error"]["message"]
    resumed = api(
        client, personas["operator"], "post", "reassignment-resume", name=kafka_cluster.name, rid=rid
    )
    assert resumed.status_code == 200 and resumed.json()["paused"] is False
    assert AuditEvent.objects.filter(action="reassignment.resume", outcome="success").count() == 1


@pytest.mark.parametrize(
    "more,status",
    [
        ({"max_moves_per_broker": 0}, 400),
        ({"max_moves_per_broker": -1}, 400),
        ({"max_moves_per_broker": "x"}, 400),
        ({"leader_throttle_bytes_per_s": 0}, 400),
        ({"follower_throttle_bytes_per_s": 1.5}, 400),
        ({"broker_throttles": {"x": MB}}, 400),
        ({"broker_throttles": {"9": MB}}, 422),
    ],
)
def test_bad_pacing_on_the_api_is_refused_and_changes_nothing(
    client, personas, kafka_cluster, frozen, more, status
):
    topic = three(frozen)
    for dry in (True, False):
        body = {"plan": plan_of(topic), "dry_run": dry, "throttle_bytes_per_s": MB, **more}
        answer = api(client, personas["operator"], "post", "reassignments", body, name=kafka_cluster.name)
        assert answer.status_code == status, answer.content
        assert answer.json()["error"]["message"]
    assert not Reassignment.objects.exists()


def test_pausing_a_finished_or_unpaced_move_is_refused_on_the_api(client, personas, kafka_cluster, frozen):
    op, r = start(personas, kafka_cluster, {(three(frozen), 0): (1, 3)})
    answer = api(
        client, personas["operator"], "post", "reassignment-pause", name=kafka_cluster.name, rid=r.pk
    )
    assert answer.status_code == 422 and "not paced" in answer.json()["error"]["message"]
    r.refresh_from_db()
    assert not r.paused


# ---- the CLI -------------------------------------------------------------------------------------


def test_the_cli_starts_a_paced_move_and_pauses_and_resumes_it(personas, kafka_cluster, frozen, tmp_path):
    topic = three(frozen)
    path = plan_file(tmp_path, {(topic, p): [1, 3] for p in range(3)})
    code, out = kafka(
        "reassign", "--execute", "--reassignment-json-file", path, "--leader-throttle", str(2 * MB),
        "--follower-throttle", str(MB), "--max-moves-per-broker", "1", "--as", "operator",
    )  # fmt: skip
    assert code == 0, out
    r = Reassignment.objects.get()
    assert (r.max_moves_per_broker, r.leader_throttle_bytes_per_s) == (1, 2 * MB)
    run_now(r.operation_id)
    code, out = kafka("reassign", "--pause", "--id", str(r.pk), "--as", "operator")
    assert code == 0 and f"Reassignment #{r.pk} paused (2 queued)" in out
    code, out = kafka("reassign", "--verify", "--reassignment-json-file", path, "--as", "operator")
    assert "Paced: paused (2 queued), 1 in flight, at most 1 per broker." in out
    code, out = kafka("reassign", "--pause", "--reassignment-json-file", path, "--as", "operator")
    assert code == 4 and "already paused" in out
    code, out = kafka("reassign", "--resume", "--id", str(r.pk), "--as", "viewer")
    assert code == 3
    code, out = kafka("reassign", "--resume", "--id", str(r.pk), "--output", "json", "--as", "operator")
    assert code == 0 and json.loads(out)["queue"]["paused"] is False


@pytest.mark.parametrize(
    "args,code,error",
    [
        (["--max-moves-per-broker", "0"], 4, "at least 1"),
        (["--leader-throttle", "-5"], 4, "positive whole number"),
        (["--broker-throttle", "9=1048576"], 4, "does not involve"),
        (["--broker-throttle", "3"], 2, "BROKER=BYTES/S"),
    ],
)
def test_bad_pacing_on_the_cli_is_refused_and_changes_nothing(
    personas, kafka_cluster, frozen, tmp_path, args, code, error
):
    topic = three(frozen)
    path = plan_file(tmp_path, {(topic, p): [1, 3] for p in range(3)})
    got, out = kafka("reassign", "--execute", "--reassignment-json-file", path, *args, "--as", "operator")
    assert got == code and error in out
    assert not Reassignment.objects.exists()


def test_queue_state_is_none_for_a_move_without_n(personas, kafka_cluster, frozen):
    op, r = start(personas, kafka_cluster, {(three(frozen), 0): (1, 3)})
    assert queue.queue_state(r) is None


# ---- change control ------------------------------------------------------------------------------


def test_a_held_paced_move_shows_its_pacing_and_runs_with_it_once_approved(
    personas, kafka_cluster, frozen, operator2
):
    from console.changes import gate
    from console.models.requests import RequestState
    from console.reassignment import actions
    from console.reassignment import held as reassignment_held
    from tests.conftest import hold
    from tests.unit.test_changes_kinds import approve_and_run, submit

    hold(kafka_cluster, personas["admin"], ["reassignment"])
    topic = three(frozen)
    proposed = {(topic, p): (1, 3) for p in range(3)}
    pacing = Pacing(max_moves=1, follower=MB, brokers={3: 2 * MB})
    with pytest.raises(gate.ApprovalRequired):
        actions.start_reassignment(
            actor=personas["operator"], cluster=kafka_cluster, proposed=proposed, throttle=MB, pacing=pacing
        )
    prepared = reassignment_held.prepare_reviewed(
        personas["operator"], kafka_cluster, proposed, throttle=MB, elect_preferred=False, rf_change=False,
        expected=None, pacing=pacing,
    )  # fmt: skip
    req = submit(personas, kafka_cluster, prepared)
    facts = dict(req.review["facts"])
    assert facts["max moves per broker"] == "1 (the rest queued)"
    assert facts["follower throttle"].startswith("1.0 MiB/s") and "broker 3 throttle" in facts
    req = approve_and_run(req, operator2)
    assert req.state == RequestState.SUCCEEDED, req.result
    r = Reassignment.objects.get(cluster=kafka_cluster)
    assert (r.max_moves_per_broker, r.follower_throttle_bytes_per_s, r.broker_throttles) == (
        1,
        MB,
        {"3": 2 * MB},
    )
    with pytest.raises(actions.PlanRejected, match="does not involve"):
        reassignment_held.prepare_reviewed(
            personas["operator"], kafka_cluster, proposed, throttle=MB, elect_preferred=False,
            rf_change=False, expected=None, pacing=Pacing(brokers={9: MB}),
        )  # fmt: skip
