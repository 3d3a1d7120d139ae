"""How many approvals a request needs and what an approval says it did: a self-service request
honours the change-control policy's approver count (distinct approvers, never the requester), and
the page's message after Approve says what happened (recorded and waiting, queued to run, or sent
back for a fresh review because the cluster drifted) instead of "approved" whatever happened."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from console import operations
from console.changes import actions as change_actions
from console.changes import approvals
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.kafka import ConfigChange, KafkaOperationError
from console.models import AuditEvent, Role
from console.models.changes import ChangeApproval
from console.models.requests import AutoApproveRule, ChangeRequest, RequestState
from console.requests import actions as requests
from console.requests import checks as request_checks
from tests.conftest import hold
from tests.unit.test_changes import held_config

pytestmark = pytest.mark.django_db


@pytest.fixture
def wanted():
    return "team-a." + uuid.uuid4().hex[:10]


def ask(personas, cluster, name: str) -> ChangeRequest:
    return requests.submit_request(
        actor=personas["requester"],
        cluster=cluster,
        kind="topic.create",
        payload={"name": name, "partitions": 1, "replication_factor": 1},
        reason="for orders",
    )


def exists(cluster, name: str) -> bool:
    return not isinstance(gateway_for(cluster).describe_topics([name])[name], KafkaOperationError)


def flashed(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def approve_on_page(client, approver, cluster, req: ChangeRequest, comment: str = ""):
    """``approver`` presses Approve (with ``comment``) on the request's page: the answer."""
    client.force_login(approver)
    url = reverse("request_approve", kwargs={"name": cluster.name, "request_id": req.pk})
    return client.post(url, {"comment": comment})


# -- 9b: the policy's approver count ---------------------------------------------------------------


def test_it_needs_two_distinct_approvers_for_a_request_where_the_policy_asks_for_two(
    personas, kafka_cluster, wanted, operator2, _no_queue
):
    hold(kafka_cluster, personas["admin"], ["topic.create"], approvers=2)
    req = ask(personas, kafka_cluster, wanted)
    assert req.approvals_required == 2
    with pytest.raises(PermissionDenied):
        requests.approve_request(actor=personas["requester"], request=req)
    req = requests.approve_request(actor=personas["operator"], request=req, comment="one")
    assert (req.state, req.operation_id, _no_queue) == (RequestState.PENDING, None, [])
    assert not exists(kafka_cluster, wanted)
    assert not requests.can_decide(personas["operator"], req) and requests.can_decide(operator2, req)
    with pytest.raises(request_checks.RequestInvalid, match="already approved"):
        requests.approve_request(actor=personas["operator"], request=req)
    first = AuditEvent.objects.get(action="request.approve", actor_name="operator", outcome="approved")
    assert (first.params["approval"], first.params["of"], first.on_behalf_of) == (1, 2, "requester")
    assert [(s.step, s.text) for s in req.events.all()] == [
        ("submitted", req.events.first().text),
        ("approved", "1 of 2: one"),
    ]
    req = requests.approve_request(actor=operator2, request=req, comment="two")
    assert req.state == RequestState.APPROVED and req.decided_by_name == "operator2"
    assert req.operation_id is not None
    second = AuditEvent.objects.get(action="request.approve", actor_name="operator2")
    assert (second.params["approval"], second.params["of"]) == (2, 2)
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert req.state == RequestState.SUCCEEDED and exists(kafka_cluster, wanted)


def test_it_counts_the_policy_as_it_is_when_approving_a_request_submitted_before_it(
    personas, kafka_cluster, wanted, operator2, _no_queue
):
    req = ask(personas, kafka_cluster, wanted)
    assert req.approvals_required == 1
    hold(kafka_cluster, personas["admin"], ["topic.create"], approvers=2)
    req = requests.approve_request(actor=personas["operator"], request=req)
    assert req.state == RequestState.PENDING and req.approvals_required == 2 and _no_queue == []


def test_it_keeps_one_approver_for_a_kind_the_policy_does_not_hold(
    personas, kafka_cluster, wanted, _no_queue
):
    hold(kafka_cluster, personas["admin"], ["acl"], approvers=2)
    req = ask(personas, kafka_cluster, wanted)
    req = requests.approve_request(actor=personas["operator"], request=req)
    assert req.approvals_required == 1 and req.state == RequestState.APPROVED and req.operation_id


def test_it_never_auto_approves_a_request_the_policy_wants_two_approvers_for(
    personas, kafka_cluster, wanted, _no_queue
):
    AutoApproveRule.objects.create(cluster=kafka_cluster, enabled=True, kinds=["topic.create"])
    hold(kafka_cluster, personas["admin"], ["topic.create"], approvers=2)
    req = ask(personas, kafka_cluster, wanted)
    assert req.state == RequestState.PENDING and not req.auto_approved and _no_queue == []
    assert not AuditEvent.objects.filter(action="request.auto_approve").exists()


def test_the_request_page_counts_approvals_and_says_the_first_of_two_did_not_run(
    client, personas, kafka_cluster, wanted, operator2, _no_queue
):
    hold(kafka_cluster, personas["admin"], ["topic.create"], approvers=2)
    req = ask(personas, kafka_cluster, wanted)
    done = approve_on_page(client, personas["operator"], kafka_cluster, req)
    assert flashed(done) == [
        f"Request #{req.pk}: your approval is 1 of 2; it waits for another approver and has not run."
    ]
    page = client.get(reverse("request_detail", kwargs={"name": kafka_cluster.name, "request_id": req.pk}))
    text = page.content.decode()
    assert 'id="request-approvals"' in text and "1 of 2: operator" in text and 'id="approve"' not in text
    done = approve_on_page(client, operator2, kafka_cluster, req)
    assert flashed(done)[-1] == f"Request #{req.pk} approved: it runs now."


# -- 13a: what an approval did ---------------------------------------------------------------------


def test_the_page_says_an_approval_that_drifted_back_did_not_run(
    client,
    personas,
    kafka_cluster,
    topic,
    operator2,  # noqa: F811
):
    hold(kafka_cluster, personas["admin"], ["config"], roles=[Role.OPERATOR])
    req = held_config(personas, kafka_cluster, topic)
    configs.alter_configs(  # someone else changes the same config meanwhile
        actor=personas["admin"],
        cluster=kafka_cluster,
        resource=configs.topic_resource(topic),
        changes=[ConfigChange("retention.ms", "SET", "3000")],
    )
    done = approve_on_page(client, operator2, kafka_cluster, req, "ok")
    req.refresh_from_db()
    assert req.state == RequestState.PENDING and req.operation_id is None
    assert flashed(done) == [
        f"Request #{req.pk} approved, but not run: the cluster changed since the review; the new diff "
        "is shown. It is back for a fresh review."
    ]


def test_the_page_says_a_held_change_approved_once_of_two_has_not_run(
    client,
    personas,
    kafka_cluster,
    topic,
    operator2,  # noqa: F811
):
    hold(kafka_cluster, personas["admin"], ["config"], approvers=2)
    req = held_config(personas, kafka_cluster, topic)
    done = approve_on_page(client, operator2, kafka_cluster, req)
    assert flashed(done) == [
        f"Request #{req.pk}: your approval is 1 of 2; it waits for another approver and has not run."
    ]
    done = approve_on_page(client, personas["admin"], kafka_cluster, req)
    assert flashed(done)[-1] == f"Request #{req.pk} approved: it runs now."


def test_an_approver_whose_approval_expired_may_approve_again(
    personas,
    kafka_cluster,
    topic,
    operator2,
    settings,  # noqa: F811
):
    settings.APPROVAL_TTL_H = 1
    hold(kafka_cluster, personas["admin"], ["config"], approvers=2)
    req = held_config(personas, kafka_cluster, topic)
    change_actions.approve_change(actor=operator2, request=req)
    ChangeApproval.objects.filter(request=req).update(created_at=timezone.now() - timedelta(hours=2))
    req = change_actions.approve_change(actor=operator2, request=req, comment="still fine")
    assert req.state == RequestState.PENDING
    assert [(a.user_name, a.comment) for a in approvals.fresh_approvals(req)] == [("operator2", "still fine")]
