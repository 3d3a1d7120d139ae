"""The reassignment rules are the area's, so the page and the API answer them alike: the dry-run-first
rule and the stale-snapshot check (console/reassignment/dry_run.py, held.prepare_reviewed), and the audit
action names of the area (console/reassignment/audit_names.py)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from console.identity import tokens
from console.models import AuditEvent, ChangeRequest
from console.models.reassignment import Reassignment
from console.reassignment import actions, audit_names, dry_run
from tests.conftest import hold
from tests.unit.reassign_world import make_topic, start

pytestmark = pytest.mark.django_db


def _post(client, user, route: str, body: dict, **kwargs):
    secret = tokens.create_token(actor=user, name="t", scope="write", days=1).secret
    return client.post(
        reverse(f"api:{route}", kwargs=kwargs),
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )


def test_it_refuses_an_intent_s_start_without_its_dry_run_in_the_same_words_on_the_page_and_the_api(
    client, personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1, 2]])
    operator = personas["operator"]
    answer = _post(
        client,
        operator,
        "reassignments",
        {"intent": "move_off", "topics": [topic], "brokers": [2], "dry_run": False},
        name=kafka_cluster.name,
    )
    assert answer.status_code == 422
    assert answer.json()["error"]["message"] == dry_run.DRY_RUN_FIRST
    client.force_login(operator)
    page = client.post(
        reverse("reassign_new", kwargs={"name": kafka_cluster.name}),
        {"intent": "move_off", "topics": topic, "brokers": "2", "throttle_mb": "1", "action": "start"},
    )
    assert page.status_code == 200 and dry_run.DRY_RUN_FIRST in page.content.decode()
    assert not Reassignment.objects.exists()


def test_it_refuses_to_hold_a_plan_whose_digest_is_not_the_dry_run_s_in_the_same_words_on_the_page_and_the_api(
    client, personas, kafka_cluster, frozen
):
    hold(kafka_cluster, personas["admin"], ["reassignment"])
    topic = make_topic(frozen, [[1, 2]])
    operator = personas["operator"]
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [2, 3]}]}
    reviewed = _post(
        client, operator, "reassignments", {"plan": plan, "dry_run": True}, name=kafka_cluster.name
    ).json()
    assert reviewed["ok"] is True and len(reviewed["plan_sha256"]) == 64
    answer = _post(
        client,
        operator,
        "reassignments",
        {"plan": plan, "dry_run": False, "plan_sha256": "0" * 64},
        name=kafka_cluster.name,
    )
    assert answer.status_code == 422
    message = answer.json()["error"]["message"]
    assert message == actions.NOT_REVIEWED
    client.force_login(operator)
    page = client.post(
        reverse("reassign_new", kwargs={"name": kafka_cluster.name}),
        {
            "intent": "move_off",
            "topics": topic,
            "brokers": "1",
            "throttle_mb": "1",
            "action": "start",
            "plan_sha256": "0" * 64,
            "previewed_plan": json.dumps(plan),
        },
    )
    assert message in page.content.decode()
    assert not Reassignment.objects.exists() and not ChangeRequest.objects.exists()


def test_it_records_a_refused_cancel_of_outside_moves_under_the_name_its_outcomes_use(
    client, personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1, 2]])
    start(personas, kafka_cluster, {(topic, 0): (2, 3)})  # the console's own move: not "outside"
    answer = _post(
        client,
        personas["operator"],
        "reassignments-external",
        {"partitions": [{"topic": topic, "partition": 0}]},
        name=kafka_cluster.name,
    )
    assert answer.status_code == 422
    refused = AuditEvent.objects.get(outcome="refused")
    assert (refused.action, refused.targets) == (audit_names.EXTERNAL_CANCEL, [f"topic:{topic}"])
    assert audit_names.EXTERNAL_CANCEL == "reassignment.external.cancel"
    assert not AuditEvent.objects.filter(action="reassignment.cancel_external").exists()
