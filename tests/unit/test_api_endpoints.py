"""What the API endpoints answer, beyond who may call them (tests/unit/test_api_matrix.py): the same
per-resource results, refusals and audit events as the pages' area actions."""

from __future__ import annotations

import json
import uuid

import pytest
from django.urls import reverse

from console.clusters.actions import gateway_for
from console.identity import tokens
from console.kafka import AclBinding, ConfigResource
from console.models import AuditEvent, Cluster, Operation, OperationState, Reassignment
from console.models.requests import ChangeRequest
from tests.conftest import run_now
from tests.unit.matrix_world import kafka_restored

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(client, personas, frozen):
    """``api(role, method, route, body=None, **kwargs)`` with a write token of that persona; the shared
    sandbox is given back as it was (broker configs such as throttle rates, ACLs, new topics)."""
    with kafka_restored(frozen):
        yield _caller(client, personas)


def _caller(client, personas):
    secrets = {}

    def call(role, method, route, body=None, **kwargs):
        if role not in secrets:
            secrets[role] = tokens.create_token(actor=personas[role], name="t", scope="write", days=1).secret
        url = reverse(f"api:{route}", kwargs=kwargs)
        auth = {"HTTP_AUTHORIZATION": f"Bearer {secrets[role]}"}
        if method == "get":
            return client.get(url, body or {}, **auth)
        return client.post(url, body or {}, content_type="application/json", **auth)

    return call


def test_the_topic_list_is_paged_searched_and_sorted(api, kafka_cluster, frozen):
    for i in range(7):
        frozen.create_topic(f"paged-{i}", partitions=1 + i % 3, replication_factor=1)
    got = api(
        "viewer", "get", "topics", {"q": "paged-", "per_page": 3, "page": 2, "refresh": 1}, name="sandbox"
    ).json()
    assert (got["count"], got["page"], got["pages"], got["per_page"]) == (7, 2, 3, 3)
    assert [t["name"] for t in got["results"]] == ["paged-3", "paged-4", "paged-5"]
    by_size = api("viewer", "get", "topics", {"q": "paged-", "sort": "partitions", "desc": 1}, name="sandbox")
    assert [t["partitions"] for t in by_size.json()["results"]][:3] == [3, 3, 2]
    bad = api("viewer", "get", "topics", {"per_page": 0}, name="sandbox")
    assert bad.status_code == 400 and "per_page" in bad.json()["error"]["fields"]


def test_a_batch_gives_each_topic_its_own_result(api, kafka_cluster, frozen):
    frozen.create_topic("batch-exists", partitions=1, replication_factor=1)
    body = {
        "topics": [
            {"name": "batch-new", "partitions": 2, "replication_factor": 1},
            {"name": "batch-exists", "partitions": 1, "replication_factor": 1},
        ]
    }
    response = api("operator", "post", "topics-batch", body, name="sandbox")
    assert response.status_code == 207
    outcomes = {o["name"]: o for o in response.json()["outcomes"]}
    assert outcomes["batch-new"]["ok"] and not outcomes["batch-exists"]["ok"]
    assert outcomes["batch-exists"]["error_name"] == "TOPIC_ALREADY_EXISTS"
    assert len(frozen.state.topics["batch-new"].partitions) == 2
    text = "- name: batch-yaml\n  partitions: 1\n  replication_factor: 1\n"
    assert api("operator", "post", "topics-batch", {"text": text}, name="sandbox").status_code == 201
    assert "batch-yaml" in frozen.state.topics


def test_a_policy_violation_is_422_with_the_reasons_and_nothing_is_created(api, kafka_cluster, frozen):
    body = {"name": "too-many", "partitions": 100_000, "replication_factor": 1}
    response = api("operator", "post", "topics", body, name="sandbox")
    assert response.status_code == 422 and response.json()["error"]["code"] == "refused"
    assert response.json()["error"]["errors"] and "too-many" not in frozen.state.topics


def test_delete_shows_the_confirmation_then_deletes(api, kafka_cluster, frozen):
    frozen.create_topic("doomed", partitions=1, replication_factor=1)
    preview = api("operator", "post", "topics-delete", {"names": ["doomed"]}, name="sandbox").json()
    assert preview["confirmation"] == "doomed" and "doomed" in frozen.state.topics
    wrong = api(
        "operator", "post", "topics-delete", {"names": ["doomed"], "confirmation": "x"}, name="sandbox"
    )
    assert wrong.status_code == 422 and "doomed" in frozen.state.topics
    done = api(
        "operator", "post", "topics-delete", {"names": ["doomed"], "confirmation": "doomed"}, name="sandbox"
    )
    assert done.status_code == 200 and "doomed" not in frozen.state.topics


def test_configs_validate_only_changes_nothing_then_apply_does(api, kafka_cluster, frozen):
    frozen.create_topic("cfg", partitions=1, replication_factor=1)
    body = {"changes": [{"name": "retention.ms", "op": "SET", "value": "1234"}], "validate_only": True}
    checked = api("operator", "post", "topic-configs", body, name="sandbox", topic="cfg").json()
    assert checked["ok"] and checked["validate_only"] and checked["diffs"][0]["new_value"] == "1234"
    assert frozen.state.topics["cfg"].configs.get("retention.ms") != "1234"
    applied = api(
        "operator", "post", "topic-configs", {**body, "validate_only": False}, name="sandbox", topic="cfg"
    )
    assert applied.status_code == 200 and frozen.state.topics["cfg"].configs["retention.ms"] == "1234"
    shown = api("viewer", "get", "topic-configs", {"overrides_only": 1}, name="sandbox", topic="cfg").json()
    assert {c["name"]: c["value"] for c in shown["configs"]}["retention.ms"] == "1234"
    bad = {"changes": [{"name": "retention.ms", "op": "SET", "value": "soon"}]}
    refused = api("operator", "post", "topic-configs", bad, name="sandbox", topic="cfg")
    assert refused.status_code == 400 and refused.json()["error"]["kafka"]["name"].startswith("INVALID")


def test_acls_are_created_then_deleted_by_filter_after_a_preview(api, kafka_cluster, frozen):
    principal = f"User:api-{uuid.uuid4().hex[:8]}"  # the sandbox is shared: other tests' ACLs stay apart

    def mine() -> list:
        return [b for b in frozen.state.acls if principal in repr(b)]

    binding = {
        "resource_type": "TOPIC",
        "resource_name": "orders",
        "pattern_type": "LITERAL",
        "principal": principal,
        "host": "*",
        "operation": "READ",
        "permission": "ALLOW",
    }
    created = api("operator", "post", "acls", {"creates": [binding]}, name="sandbox").json()
    assert created["ok"] and created["results"][0]["action"] == "create"
    listed = api("operator", "get", "acls", {"principal": principal}, name="sandbox").json()
    assert listed["count"] == 1 and listed["results"][0]["resource_name"] == "orders"
    flt = {"filters": [{"principal": principal}]}
    preview = api("operator", "post", "acls-delete", flt, name="sandbox").json()
    assert preview["dry_run"] and len(preview["matched"]) == 1 and len(mine()) == 1
    deleted = api("operator", "post", "acls-delete", {**flt, "dry_run": False}, name="sandbox").json()
    assert deleted["ok"] and mine() == []
    empty = api("operator", "post", "acls-delete", {"filters": [{}]}, name="sandbox")
    assert empty.status_code == 422  # a delete filter must name something


def test_a_reassignment_by_intent_previews_then_starts_and_can_be_throttled_and_cancelled(
    api, kafka_cluster, frozen
):
    frozen.create_topic("moving", partitions=2, replication_factor=2, assignment=[[1, 2], [2, 1]])
    body = {"intent": "move_off", "topics": ["moving"], "brokers": [1], "dry_run": True}
    preview = api("operator", "post", "reassignments", body, name="sandbox").json()
    assert preview["ok"] and all(1 not in p["replicas"] for p in preview["plan"]["partitions"])
    assert not Reassignment.objects.exists()
    start = {**body, "dry_run": False, "throttle_bytes_per_s": 2048}
    refused = api("operator", "post", "reassignments", start, name="sandbox")
    assert refused.status_code == 422 and not Reassignment.objects.exists()  # Start needs the dry run
    stale = {"plan": preview["plan"], "plan_sha256": "0" * 64, "dry_run": False}
    assert api("operator", "post", "reassignments", stale, name="sandbox").status_code == 422
    assert not Reassignment.objects.exists()  # not the plan reviewed
    reviewed = {**start, "plan": preview["plan"], "plan_sha256": preview["plan_sha256"]}
    started = api("operator", "post", "reassignments", reviewed, name="sandbox")
    assert started.status_code == 201
    rid = started.json()["id"]
    run_now(Reassignment.objects.get(pk=rid).operation_id)  # the worker's first step: throttles set
    progress = api("viewer", "get", "reassignment", name="sandbox", rid=rid).json()
    assert {(p["topic"], p["partition"]) for p in progress["partitions"]} == {("moving", 0), ("moving", 1)}
    throttled = api(
        "operator", "post", "reassignment-throttle", {"throttle_bytes_per_s": 4096}, name="sandbox", rid=rid
    )
    assert throttled.status_code == 200, throttled.content
    assert Reassignment.objects.get(pk=rid).throttle_bytes_per_s == 4096
    cancelled = api("operator", "post", "reassignment-cancel", name="sandbox", rid=rid)
    assert cancelled.status_code == 202 and cancelled.json()["cancel_requested"]
    op_id = Reassignment.objects.get(pk=rid).operation_id
    run_now(op_id)  # the worker reverts and takes its throttles back (the sandbox is shared by every test)
    assert Operation.objects.get(pk=op_id).state == OperationState.CANCELLED
    rates = gateway_for(kafka_cluster).describe_configs([ConfigResource("BROKER", str(b)) for b in (1, 2, 3)])
    assert not [
        k
        for entries in rates.values()
        for k, e in entries.items()
        if "throttled" in k and e.source == "DYNAMIC_BROKER_CONFIG"
    ]
    bad = api(
        "operator", "post", "reassignments", {"plan": {"version": 1, "partitions": "x"}}, name="sandbox"
    )
    assert bad.status_code == 400


def test_requests_are_submitted_and_decided_by_someone_else(api, kafka_cluster):
    payload = {"name": "team-a.api-req", "partitions": 1, "replication_factor": 1, "configs": {}}
    submitted = api(
        "requester", "post", "requests", {"kind": "topic.create", "payload": payload}, name="sandbox"
    )
    assert submitted.status_code == 201
    rid = submitted.json()["id"]
    assert submitted.json()["requested_by"].startswith("requester [token ")
    rejected = api(
        "operator", "post", "request-reject", {"comment": "not now"}, name="sandbox", request_id=rid
    )
    assert rejected.status_code == 200 and rejected.json()["state"] == "rejected"
    again = api("operator", "post", "request-approve", {}, name="sandbox", request_id=rid)
    assert again.status_code == 422  # already decided
    assert ChangeRequest.objects.get(pk=rid).state == "rejected"


def test_audit_search_export_and_chain(api, client, kafka_cluster, frozen):
    api(
        "operator",
        "post",
        "topics",
        {"name": "audited", "partitions": 1, "replication_factor": 1},
        name="sandbox",
    )
    found = api("auditor", "get", "audit-events", {"action": "topic.create"}).json()
    assert found["results"] and all(e["action"].startswith("topic.create") for e in found["results"])
    one = api("auditor", "get", "audit-event", event_id=found["results"][0]["id"]).json()
    assert one["hash"] and one["actor_name"].startswith("operator [token ")
    export = api("auditor", "get", "audit-export", {"fmt": "jsonl", "action": "topic.create"})
    lines = b"".join(export.streaming_content).decode().splitlines()
    assert export.status_code == 200 and len(lines) >= 2
    assert AuditEvent.objects.filter(action="audit.export").exists()
    chain = api("auditor", "get", "audit-chain").json()
    assert chain["ok"] is True
    assert api("viewer", "get", "audit-events").status_code == 403


def test_clusters_are_listed_by_visibility_and_registered_by_superusers(api, kafka_cluster, personas):
    assert [c["name"] for c in api("viewer", "get", "clusters").json()["results"]] == ["sandbox"]
    assert api("outsider", "get", "clusters").json()["count"] == 0
    body = {"name": "api-registered", "bootstrap_servers": "127.0.0.1:1", "request_timeout_s": 5}
    assert api("operator", "post", "clusters", body).status_code == 403
    created = api("admin", "post", "clusters", body)
    assert created.status_code == 201 and Cluster.objects.filter(name="api-registered").exists()
    both = {"name": "api-both", "bootstrap_servers": "127.0.0.1:1", "bootstrap_controllers": "127.0.0.1:2"}
    refused = api("admin", "post", "clusters", both)
    assert refused.status_code == 400 and not Cluster.objects.filter(name="api-both").exists()


def test_a_group_reset_dry_run_changes_nothing_and_execute_needs_the_group_id(api, kafka_cluster, frozen):
    frozen.create_topic("g-topic", partitions=1, replication_factor=1)
    with frozen.state.lock:
        frozen.state.topics["g-topic"].partitions[0].end_offset = 10
    frozen.add_group("g1", offsets={("g-topic", 0): 5})
    dry = api("operator", "post", "group-reset", {"mode": "to-latest"}, name="sandbox", group="g1").json()
    assert dry["dry_run"] and frozen.state.groups["g1"].offsets[("g-topic", 0)] == 5
    body = {"mode": "to-latest", "dry_run": False, "confirmation": "nope"}
    assert api("operator", "post", "group-reset", body, name="sandbox", group="g1").status_code == 422
    done = api("operator", "post", "group-reset", {**body, "confirmation": "g1"}, name="sandbox", group="g1")
    assert done.status_code == 200 and frozen.state.groups["g1"].offsets[("g-topic", 0)] == 10
    listed = api("viewer", "get", "groups", {"q": "g1"}, name="sandbox").json()
    assert listed["count"] == 1 and listed["results"][0]["group_id"] == "g1"


def test_an_acl_binding_made_outside_is_visible(api, kafka_cluster):
    binding = AclBinding("TOPIC", "x", "LITERAL", "User:outside", "*", "WRITE", "ALLOW")
    gateway_for(kafka_cluster).create_acls([binding])
    listed = api("operator", "get", "acls", {"principal": "User:outside"}, name="sandbox").json()
    assert [b["operation"] for b in listed["results"]] == ["WRITE"]


def test_a_topic_s_secret_config_values_are_never_returned():
    from console.api.topics import config_entry
    from console.kafka import ConfigEntry

    sensitive = ConfigEntry("some.config", "v1", "DYNAMIC_TOPIC_CONFIG", False, True, False)
    looks = ConfigEntry("x.password", "v2", "DYNAMIC_TOPIC_CONFIG", False, False, False)
    plain_one = ConfigEntry("retention.ms", "1000", "DYNAMIC_TOPIC_CONFIG", False, False, False)
    shown = [config_entry(e) for e in (sensitive, looks, plain_one)]
    assert [(c["value"], c["sensitive"]) for c in shown] == [(None, True), (None, True), ("1000", False)]
    assert "synonyms" not in json.dumps(shown)
