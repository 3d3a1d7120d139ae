"""Change control through the API: a held action is submitted with its dry run (202) instead of
running, approved through the requests endpoints by someone else (never its author), then exactly
that runs; break glass by an admin runs it at once; a dry run / validate-only is never held."""

from __future__ import annotations

import uuid

import pytest

from console.acls import core as acl_core
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestState
from console.topics import actions as topics
from console.topics.actions import TopicSpec
from tests.conftest import hold
from tests.unit.matrix_world import kafka_restored
from tests.unit.test_api_endpoints import _caller
from tests.unit.test_changes import run_queued
from tests.unit.test_changes_kinds import binding, present

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(client, personas, kafka_cluster, operator2, frozen):
    hold(kafka_cluster, personas["admin"], ["config", "acl", "topic.create"])
    with kafka_restored(frozen):
        yield _caller(client, {**personas, "operator2": operator2})


def retention(cluster, topic):
    res = configs.topic_resource(topic)
    return gateway_for(cluster).describe_configs([res])[res]["retention.ms"].value


def test_a_held_config_change_is_submitted_reviewed_and_approved_through_the_api(
    api, personas, kafka_cluster
):
    name = f"api.chg.{uuid.uuid4().hex[:8]}"
    from console.changes import gate

    with gate.passed("topic.create"):
        topics.create_topics(actor=personas["admin"], cluster=kafka_cluster, specs=[TopicSpec(name, 1, 1)])
    body = {"changes": [{"name": "retention.ms", "op": "SET", "value": "7200000"}]}
    dry = api(
        "operator", "post", "topic-configs", {**body, "validate_only": True}, name="sandbox", topic=name
    )
    assert dry.status_code == 200 and dry.json()["validate_only"]  # a dry run is never held
    held = api(
        "operator",
        "post",
        "topic-configs",
        {**body, "reason": "longer retention"},
        name="sandbox",
        topic=name,
    )
    assert held.status_code == 202, held.content
    change = held.json()
    assert change["held"] and change["state"] == "pending" and len(change["payload_sha256"]) == 64
    assert change["review"]["rows"][0][0] == "retention.ms" and change["review"]["rows"][0][3] == "7200000"
    assert retention(kafka_cluster, name) != "7200000"
    mine = api("operator", "post", "request-approve", {}, name="sandbox", request_id=change["id"])
    assert mine.status_code == 403  # four eyes: never the author
    shown = api("operator2", "get", "request", name="sandbox", request_id=change["id"]).json()
    assert shown["review"] == change["review"] and shown["approvals_required"] == 1
    approved = api(
        "operator2", "post", "request-approve", {"comment": "ok"}, name="sandbox", request_id=change["id"]
    )
    assert approved.status_code == 200 and approved.json()["state"] == RequestState.APPROVED
    req = run_queued(ChangeRequest.objects.get(pk=change["id"]))
    assert req.state == RequestState.SUCCEEDED and retention(kafka_cluster, name) == "7200000"
    assert AuditEvent.objects.filter(action="config.alter", request_id=f"change-{req.pk}").exists()
    submitted = AuditEvent.objects.get(action="change.submit", request_id=f"change-{req.pk}")
    assert submitted.actor_name.startswith("operator [token")  # the API caller's token is named


def test_break_glass_through_the_api_runs_at_once_for_admins_only(api, personas, kafka_cluster):
    b = binding("User:glass", f"api.glass.{uuid.uuid4().hex[:8]}")
    creates = {"creates": [acl_core.to_dict(b)]}
    refused = api(
        "operator", "post", "acls", {**creates, "break_glass": "incident, no time to wait"}, name="sandbox"
    )
    assert refused.status_code == 403 and not present(personas, kafka_cluster, b)
    too_short = api("admin", "post", "acls", {**creates, "break_glass": "now"}, name="sandbox")
    assert too_short.status_code == 422 and "justification" in too_short.json()["error"]["message"]
    ran = api(
        "admin",
        "post",
        "acls",
        {**creates, "break_glass": "incident 7: the consumer needs it now"},
        name="sandbox",
    )
    assert ran.status_code == 200, ran.content
    assert ran.json()["state"] == RequestState.SUCCEEDED and present(personas, kafka_cluster, b)
    refusals = AuditEvent.objects.filter(action="change.break_glass", outcome="refused").count()
    assert refusals == 2  # the operator's and the too-short justification
    flagged = AuditEvent.objects.get(action="change.break_glass", outcome="requested")
    assert flagged.params["break_glass"] is True and "incident 7" in flagged.params["justification"]


def test_a_held_topic_creation_refused_in_its_dry_run_is_not_held(api, personas, kafka_cluster):
    bad = api(
        "operator",
        "post",
        "topics",
        {"name": "bad..", "partitions": 1, "replication_factor": 9},
        name="sandbox",
    )
    assert bad.status_code in (400, 422) and not ChangeRequest.objects.exists()
