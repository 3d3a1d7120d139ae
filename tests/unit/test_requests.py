"""Self-service requests: namespaces, policy and Kafka validation on submit, four eyes, execution, audit."""

from __future__ import annotations

import uuid

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import reverse

from console import access, operations
from console.changes import notify as requests_notify
from console.clusters.actions import gateway_for
from console.kafka.types import AclBindingFilter
from console.models import AuditEvent, Operation, OperationState, Role, RoleBinding, TopicPolicy
from console.models.requests import AutoApproveRule, ChangeRequest, Notification, RequestState
from console.requests import actions as requests
from console.requests import checks as request_checks

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(_no_queue):
    return _no_queue


@pytest.fixture
def topic():
    return "team-a." + uuid.uuid4().hex[:10]


def _submit(personas, cluster, topic, **overrides):
    payload = {
        "name": topic,
        "partitions": 3,
        "replication_factor": 2,
        "configs": {"retention.ms": "3600000"},
    }
    return requests.submit_request(
        actor=personas["requester"],
        cluster=cluster,
        kind="topic.create",
        payload={**payload, **overrides},
        reason="for orders",
    )


def test_it_stores_a_valid_request_with_its_timeline_and_audit(personas, kafka_cluster, topic):
    req = _submit(personas, kafka_cluster, topic)
    assert (req.state, req.resource, req.requested_by_name) == ("pending", topic, "requester")
    assert [s.step for s in req.events.all()] == ["submitted"]
    event = AuditEvent.objects.get(action="request.submit")
    assert event.params["payload"]["name"] == topic and event.actor_name == "requester"
    assert event.targets == [f"request:{req.pk}", topic]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"name": "team-b.orders"}, "outside your namespaces"),
        ({"name": "team-a.bad name!"}, "topic"),
        ({"replication_factor": 7}, "Kafka: INVALID_REPLICATION_FACTOR"),
        ({"partitions": "many"}, "whole number"),
    ],
)
def test_it_refuses_invalid_requests_and_stores_nothing(personas, kafka_cluster, topic, overrides, message):
    with pytest.raises(request_checks.RequestInvalid) as err:
        _submit(personas, kafka_cluster, topic, **overrides)
    assert message.lower() in str(err.value).lower()
    assert not ChangeRequest.objects.exists()
    # nothing stored; the attempt is in the audit trail as refused, with the reason
    assert not AuditEvent.objects.filter(action="request.submit").exclude(outcome="refused").exists()
    assert AuditEvent.objects.filter(action="request.submit", outcome="refused").count() == 1


def test_it_applies_the_cluster_policy_on_submit(personas, kafka_cluster, topic):
    TopicPolicy.objects.create(
        cluster=kafka_cluster, max_partitions=2, allowed_config_keys=["cleanup.policy"]
    )
    with pytest.raises(request_checks.RequestInvalid) as err:
        _submit(personas, kafka_cluster, topic)
    assert "max_partitions" in str(err.value) and "allowed_config_keys" in str(err.value)


def test_approvers_are_notified_of_a_waiting_request(personas, kafka_cluster, topic):
    req = _submit(personas, kafka_cluster, topic)
    notified = set(Notification.objects.filter(request=req).values_list("user__username", flat=True))
    assert notified == {"admin", "operator"}
    assert requests_notify.unread_notifications(actor=personas["operator"])[0].text.startswith(
        f"Request #{req.pk} by requester"
    )


def test_four_eyes_the_requester_can_never_decide_their_own_request(personas, kafka_cluster, topic):
    requester = personas["requester"]
    RoleBinding.objects.create(cluster=kafka_cluster, user=requester, role=Role.OPERATOR)
    req = _submit(personas, kafka_cluster, topic)
    assert not requests.can_decide(requester, req)
    with pytest.raises(PermissionDenied, match="Four eyes"):
        requests.approve_request(actor=requester, request=req)
    with pytest.raises(PermissionDenied, match="Four eyes"):
        requests.reject_request(actor=requester, request=req, comment="no")
    req.refresh_from_db()
    assert req.state == "pending"


def test_four_eyes_holds_for_superusers_too(personas, kafka_cluster):
    admin = personas["admin"]
    name = "admin-" + uuid.uuid4().hex[:8]
    req = requests.submit_request(
        actor=admin,
        cluster=kafka_cluster,
        kind="topic.create",
        payload={"name": name, "partitions": 1, "replication_factor": 1},
    )
    with pytest.raises(PermissionDenied):
        requests.approve_request(actor=admin, request=req)


@pytest.mark.parametrize("role", ["viewer", "auditor", "outsider"])
def test_only_approvers_decide(personas, kafka_cluster, topic, role):
    req = _submit(personas, kafka_cluster, topic)
    with pytest.raises(PermissionDenied):
        requests.approve_request(actor=personas[role], request=req)


def test_approval_runs_the_change_on_a_worker_and_notifies(
    personas, kafka_cluster, topic, queued, django_capture_on_commit_callbacks
):
    req = _submit(personas, kafka_cluster, topic)
    with django_capture_on_commit_callbacks(execute=True):
        req = requests.approve_request(actor=personas["operator"], request=req, comment="looks fine")
    assert req.state == "approved" and req.decided_by_name == "operator" and req.operation_id == queued[0]
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert req.state == RequestState.SUCCEEDED
    assert [s.step for s in req.events.all()] == ["submitted", "approved", "queued", "running", "succeeded"]
    meta = gateway_for(kafka_cluster).describe_topics([topic])[topic]
    assert len(meta.partitions) == 3 and meta.replication_factor == 2
    op = Operation.objects.get(pk=req.operation_id)
    assert op.state == OperationState.SUCCEEDED and op.items.get().state == "succeeded"
    created = AuditEvent.objects.get(action="topic.create", outcome="success", targets__icontains=topic)
    assert (created.actor_name, created.on_behalf_of, created.request_id) == (
        "operator",
        "requester",
        f"request-{req.pk}",
    )
    approved = AuditEvent.objects.get(action="request.approve")
    assert approved.params["comment"] == "looks fine" and approved.on_behalf_of == "requester"
    assert AuditEvent.objects.filter(action="request.execute.succeeded", operation_id=op.pk).exists()
    texts = list(Notification.objects.filter(user=personas["requester"]).values_list("text", flat=True))
    assert any("approved by operator" in t for t in texts) and any("is done" in t for t in texts)
    # A redelivered task converges instead of failing or running twice.
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert req.state == RequestState.SUCCEEDED


def test_approval_revalidates_against_the_cluster_as_it_is_now(personas, kafka_cluster, topic, queued):
    req = _submit(personas, kafka_cluster, topic)
    from console.kafka import NewTopic

    gateway_for(kafka_cluster).create_topics([NewTopic(topic, 1, 1)])
    with pytest.raises(request_checks.RequestInvalid, match="TOPIC_ALREADY_EXISTS"):
        requests.approve_request(actor=personas["operator"], request=req)
    req.refresh_from_db()
    assert req.state == "pending" and queued == []


def test_rejection_needs_a_comment_and_is_audited(personas, kafka_cluster, topic):
    req = _submit(personas, kafka_cluster, topic)
    with pytest.raises(request_checks.RequestInvalid, match="why"):
        requests.reject_request(actor=personas["operator"], request=req, comment="  ")
    req = requests.reject_request(actor=personas["operator"], request=req, comment="use the shared topic")
    assert req.state == "rejected" and req.decision_comment == "use the shared topic"
    rejected = AuditEvent.objects.exclude(outcome="refused").get(action="request.reject")
    assert rejected.params["comment"] == "use the shared topic"
    assert AuditEvent.objects.filter(
        action="request.reject", outcome="refused"
    ).exists()  # the try without one
    with pytest.raises(request_checks.RequestInvalid, match="already been decided"):
        requests.approve_request(actor=personas["admin"], request=req)


def test_only_the_requester_cancels_a_pending_request(personas, kafka_cluster, topic, client):
    req = _submit(personas, kafka_cluster, topic)
    with pytest.raises(PermissionDenied):
        requests.cancel_request(actor=personas["operator"], request=req)
    client.force_login(personas["requester"])
    url = reverse("request_cancel", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    assert client.post(url).status_code == 302
    req.refresh_from_db()
    assert (
        req.state == "cancelled"
        and AuditEvent.objects.exclude(outcome="refused").get(action="request.cancel").actor_name
        == "requester"
    )
    with pytest.raises(request_checks.RequestInvalid):
        requests.approve_request(actor=personas["operator"], request=req)


def test_the_auto_approve_rule_approves_low_risk_requests_and_says_so(
    personas, kafka_cluster, topic, queued, django_capture_on_commit_callbacks
):
    AutoApproveRule.objects.create(
        cluster=kafka_cluster, enabled=True, kinds=["topic.create"], max_partitions=3
    )
    with django_capture_on_commit_callbacks(execute=True):
        req = _submit(personas, kafka_cluster, topic)
    req.refresh_from_db()
    assert req.state == "approved" and req.auto_approved and access.is_system(req.decided_by)
    assert AuditEvent.objects.get(action="request.auto_approve").actor_name == access.SYSTEM_USERNAME
    operations.run(queued[0], worker="test")
    req.refresh_from_db()
    assert req.state == "succeeded"
    assert topic in gateway_for(kafka_cluster).describe_topics([topic])
    big = _submit(personas, kafka_cluster, topic + "-big", partitions=4)
    assert big.state == "pending"


def test_an_acl_request_within_namespaces_is_applied(
    personas, kafka_cluster, topic, queued, django_capture_on_commit_callbacks
):
    binding = {
        "resource_type": "TOPIC",
        "resource_name": topic,
        "principal": "User:team-a",
        "operation": "READ",
    }
    req = requests.submit_request(
        actor=personas["requester"], cluster=kafka_cluster, kind="acl.create", payload={"binding": binding}
    )
    with django_capture_on_commit_callbacks(execute=True):
        requests.approve_request(actor=personas["operator"], request=req)
    operations.run(queued[0], worker="test")
    req.refresh_from_db()
    assert req.state == "succeeded", req.result
    found = gateway_for(kafka_cluster).describe_acls(AclBindingFilter(resource_name=topic))
    assert [(b.principal, b.operation) for b in found] == [("User:team-a", "READ")]
    assert AuditEvent.objects.get(action="acl.create").on_behalf_of == "requester"


@pytest.mark.parametrize(
    "binding",
    [
        {
            "resource_type": "TOPIC",
            "resource_name": "team-a.x",
            "principal": "User:team-b",
            "operation": "READ",
        },
        {
            "resource_type": "TOPIC",
            "resource_name": "payments",
            "principal": "User:team-a",
            "operation": "READ",
        },
        {"resource_type": "TOPIC", "resource_name": "*", "principal": "User:team-a", "operation": "READ"},
        {
            "resource_type": "TOPIC",
            "resource_name": "team",
            "pattern_type": "PREFIXED",
            "principal": "User:team-a",
            "operation": "READ",
        },
    ],
)
def test_acl_requests_outside_the_namespaces_are_refused(personas, kafka_cluster, binding):
    with pytest.raises(request_checks.RequestInvalid, match="outside your namespaces"):
        requests.submit_request(
            actor=personas["requester"],
            cluster=kafka_cluster,
            kind="acl.create",
            payload={"binding": binding},
        )


def test_partition_increase_config_change_and_delete_requests(
    personas, kafka_cluster, topic, queued, django_capture_on_commit_callbacks
):
    from console.kafka import NewTopic

    gateway_for(kafka_cluster).create_topics([NewTopic(topic, 1, 1)])
    cases = [
        ("topic.partitions", {"topic": topic, "total_count": 2}),
        (
            "topic.config",
            {"topic": topic, "changes": [{"name": "retention.ms", "op": "SET", "value": "7200000"}]},
        ),
        ("topic.delete", {"topic": topic}),
    ]
    for kind, payload in cases:
        req = requests.submit_request(
            actor=personas["requester"], cluster=kafka_cluster, kind=kind, payload=payload
        )
        with django_capture_on_commit_callbacks(execute=True):
            requests.approve_request(actor=personas["operator"], request=req)
        operations.run(queued[-1], worker="test")
        req.refresh_from_db()
        assert req.state == "succeeded", (kind, req.result)
    got = gateway_for(kafka_cluster).describe_topics([topic])[topic]
    assert got.__class__.__name__ == "KafkaOperationError"
    for action in ("topic.partitions.add", "config.alter", "topic.delete"):
        executed = AuditEvent.objects.filter(action=action).latest("id")
        assert (executed.actor_name, executed.on_behalf_of) == ("operator", "requester"), action
        assert executed.request_id.startswith("request-")


# ---- pages -------------------------------------------------------------------------------------


def test_the_pages_submit_and_decide_with_csrf_and_escaping(personas, kafka_cluster, topic, queued):
    requester = Client(enforce_csrf_checks=True)
    requester.force_login(personas["requester"])
    new_url = reverse("request_new", kwargs={"name": kafka_cluster.name})
    token = requester.get(new_url).cookies[settings.CSRF_COOKIE_NAME].value
    form = {
        "kind": "topic.create",
        "topic": topic,
        "partitions": 1,
        "replication_factor": 1,
        "reason": "<script>x</script>",
    }
    assert requester.post(new_url, form).status_code == 403
    done = requester.post(new_url, {**form, "csrfmiddlewaretoken": token})
    req = ChangeRequest.objects.get()
    assert done.status_code == 302 and done["Location"].endswith(f"/requests/{req.pk}/")
    page = requester.get(done["Location"])
    assert b"<script>x" not in page.content and b"&lt;script&gt;x" in page.content
    assert b'id="approve"' not in page.content and b"four eyes" in page.content
    approve_url = reverse("request_approve", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    assert requester.post(approve_url, {"csrfmiddlewaretoken": token}).status_code == 403
    operator = Client()
    operator.force_login(personas["operator"])
    queue = operator.get(reverse("request_list", kwargs={"name": kafka_cluster.name}))
    assert topic.encode() in queue.content
    detail = operator.get(
        reverse("request_detail", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    )
    assert b'id="approve"' in detail.content
    operator.post(approve_url, {"comment": "ok \u2713 <b>"})
    req.refresh_from_db()
    assert req.state == "approved" and req.decision_comment == "ok \u2713 <b>"


def test_hostile_and_oversized_input_is_refused_on_the_form(client, personas, kafka_cluster):
    client.force_login(personas["requester"])
    url = reverse("request_new", kwargs={"name": kafka_cluster.name})
    cases = [
        {
            "kind": "topic.create",
            "topic": "team-a.<img src=x onerror=alert(1)>",
            "partitions": 1,
            "replication_factor": 1,
        },
        {"kind": "topic.create", "topic": "team-a." + "x" * 400, "partitions": 1, "replication_factor": 1},
        {"kind": "topic.create", "topic": "team-a.ünïcode", "partitions": 1, "replication_factor": 1},
        {"kind": "topic.config", "topic": "team-a.x", "configs": "not a pair"},
        {
            "kind": "acl.create",
            "acl_principal": "User:<script>",
            "acl_resource_type": "TOPIC",
            "acl_pattern_type": "LITERAL",
            "acl_resource_name": "team-a.x",
            "acl_operation": "READ",
            "acl_permission": "ALLOW",
            "acl_host": "*",
        },
        {"kind": "nope"},
        {
            "kind": "topic.create",
            "topic": "team-a.x",
            "partitions": 1,
            "replication_factor": 1,
            "reason": "r" * 3000,
        },
    ]
    for data in cases:
        response = client.post(url, data)
        assert response.status_code == 200, data
        assert b"<img src=x" not in response.content and b"<script>" not in response.content.replace(
            b"<script src", b""
        )
    assert not ChangeRequest.objects.exists()


def test_outsiders_and_other_requesters_cannot_see_a_request(client, personas, kafka_cluster, topic):
    req = _submit(personas, kafka_cluster, topic)
    url = reverse("request_detail", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    client.force_login(personas["viewer"])
    assert client.get(url).status_code == 404
    client.force_login(personas["outsider"])
    assert client.get(url).status_code == 404
    client.force_login(personas["auditor"])
    assert client.get(url).status_code == 200


def test_admins_set_the_auto_approve_rule(client, personas, kafka_cluster):
    client.force_login(personas["admin"])
    url = reverse("request_rules", kwargs={"name": kafka_cluster.name})
    assert (
        client.post(url, {"enabled": "on", "kinds": ["topic.create"], "max_partitions": 6}).status_code == 302
    )
    rule = AutoApproveRule.objects.get(cluster=kafka_cluster)
    assert (rule.enabled, rule.kinds, rule.max_partitions) == (True, ["topic.create"], 6)
    assert AuditEvent.objects.get(action="request.auto_approve_rule.update").after["max_partitions"] == 6
    client.force_login(personas["operator"])
    assert client.post(url, {"enabled": "on"}).status_code == 403


def test_the_status_fragment_polls_until_the_request_is_finished(client, personas, kafka_cluster, topic):
    req = _submit(personas, kafka_cluster, topic)
    client.force_login(personas["requester"])
    url = reverse("request_status", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    waiting = client.get(url, headers={"HX-Request": "true"})
    assert waiting.status_code == 200 and b'hx-trigger="every 2s"' in waiting.content
    requests.reject_request(actor=personas["operator"], request=req, comment="no")
    done = client.get(url, headers={"HX-Request": "true"})
    assert done.status_code == 286 and b"hx-trigger" not in done.content and b"rejected" in done.content


def test_a_request_to_an_unreachable_cluster_is_refused_with_the_reason(client, offline_cluster):
    from tests.conftest import make_personas

    people = make_personas(offline_cluster)
    client.force_login(people["requester"])
    response = client.post(
        reverse("request_new", kwargs={"name": offline_cluster.name}),
        {"kind": "topic.create", "topic": "team-a.orders", "partitions": 1, "replication_factor": 1},
    )
    assert response.status_code == 200 and b"could not be reached" in response.content
    assert not ChangeRequest.objects.exists()


def test_the_requester_is_emailed_when_email_is_configured(
    personas, kafka_cluster, topic, monkeypatch, mailoutbox, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(requests_notify, "EMAIL_FROM", "kafka-console@example.com")
    personas["requester"].email = "requester@example.com"
    personas["requester"].save()
    req = _submit(personas, kafka_cluster, topic)
    with django_capture_on_commit_callbacks(execute=True):
        requests.reject_request(actor=personas["operator"], request=req, comment="use team-a.shared")
    assert [m.to for m in mailoutbox] == [["requester@example.com"]]
    assert (
        "rejected by operator" in mailoutbox[0].body
        and mailoutbox[0].from_email == "kafka-console@example.com"
    )


def test_request_pages_show_values_not_python_reprs():
    from console.requests.display import payload_rows

    rows = dict(
        payload_rows(
            {
                "name": "team-a.orders",
                "configs": {"retention.ms": "7200000", "cleanup.policy": "compact"},
                "changes": [
                    {"name": "retention.ms", "op": "SET", "value": "60000"},
                    {"name": "x", "op": "DELETE"},
                ],
                "binding": {
                    "resource_type": "TOPIC",
                    "resource_name": "team",
                    "pattern_type": "PREFIXED",
                    "principal": "User:team-a",
                    "operation": "READ",
                },
                "validate_only": False,
                "assignment": None,
            }
        )
    )
    assert rows["Topic"] == "team-a.orders"
    assert rows["Configs"] == "cleanup.policy = compact, retention.ms = 2 h"  # as the Configs page reads it
    assert rows["Config changes"] == "set retention.ms = 1 min; reset x to its default"
    assert rows["ACL binding"] == (
        "principal=User:team-a operation=READ resource_type=TOPIC pattern_type=PREFIXED resource_name=team"
    )
    assert rows["Validate only"] == "no" and rows["Assignment"] == "—"
    assert not any(ch in text for text in rows.values() for ch in "{}[]'")
