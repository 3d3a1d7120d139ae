"""Refused changes are in the audit trail (outcome "refused", with the reason), once each."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from console.models import AuditEvent
from console.reassignment import actions as reassignment
from console.reassignment import throttles
from console.requests import actions as requests
from console.requests.checks import RequestInvalid

pytestmark = pytest.mark.django_db


def _refused(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action, outcome="refused").order_by("id"))


def test_a_request_outside_the_namespace_is_recorded_as_refused(personas, kafka_cluster):
    with pytest.raises(RequestInvalid):
        requests.submit_request(
            actor=personas["requester"],
            cluster=kafka_cluster,
            kind="topic.create",
            payload={"name": "team-b.orders", "partitions": 1, "replication_factor": 1},
        )
    [event] = _refused("request.submit")
    assert event.actor_name == "requester" and event.cluster_id == kafka_cluster.pk
    assert "namespace" in event.params["reason"]
    assert event.targets == ["topic.create"]


def test_a_permission_refusal_inside_an_action_is_recorded_once_even_through_a_view(
    client, personas, kafka_cluster
):
    with pytest.raises(PermissionDenied):
        reassignment.start_reassignment(
            actor=personas["viewer"], cluster=kafka_cluster, proposed={("t", 0): (1,)}, throttle=None
        )
    [event] = _refused("reassignment.start")
    assert event.actor_name == "viewer" and event.targets == ["topic:t"]
    assert "permission" in event.params["reason"]


def test_plan_and_throttle_refusals_name_the_reason(personas, kafka_cluster):
    with pytest.raises(reassignment.PlanRejected):
        reassignment.start_reassignment(
            actor=personas["operator"], cluster=kafka_cluster, proposed={}, throttle=None
        )
    with pytest.raises(throttles.ThrottleError):
        reassignment.start_reassignment(
            actor=personas["operator"], cluster=kafka_cluster, proposed={("t", 0): (1,)}, throttle=1
        )
    reasons = [e.params["reason"] for e in _refused("reassignment.start")]
    assert len(reasons) == 2 and "empty" in reasons[0] and "throttle" in reasons[1].lower()


def test_a_post_the_web_layer_refuses_is_recorded(client, personas, kafka_cluster):
    client.force_login(personas["viewer"])
    response = client.post(
        f"/c/{kafka_cluster.name}/topics/-/new/", {"name": "x", "partitions": 1, "replication_factor": 1}
    )
    assert response.status_code == 403
    [event] = [e for e in AuditEvent.objects.filter(outcome="refused")]
    assert event.action == "http.topic_create" and event.actor_name == "viewer"
    assert event.targets == [f"/c/{kafka_cluster.name}/topics/-/new/"]
    # a GET the user may not see is not an attempted change
    client.get(f"/c/{kafka_cluster.name}/topics/-/new/")
    assert AuditEvent.objects.filter(outcome="refused").count() == 1


def test_a_refused_request_approval_by_its_author_is_recorded(personas, kafka_cluster):
    from console.models import RoleBinding
    from console.models.access import Role

    RoleBinding.objects.create(cluster=kafka_cluster, user=personas["requester"], role=Role.OPERATOR)
    req = requests.submit_request(
        actor=personas["requester"],
        cluster=kafka_cluster,
        kind="topic.create",
        payload={"name": "team-a.x", "partitions": 1, "replication_factor": 1},
    )
    with pytest.raises(PermissionDenied):
        requests.approve_request(actor=personas["requester"], request=req)
    [event] = _refused("request.approve")
    assert event.targets == [f"request:{req.pk}"] and "Four eyes" in event.params["reason"]
