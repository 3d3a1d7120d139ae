"""Issue 14 finding #9: operation pages are scoped by the permission of the object they belong to.

A request's execution carries the request's payload (topic names, configs, ACL principals of
one team); it is shown to whoever may see that request, not to every viewer of the cluster.
"""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from console.models import Operation, Role, RoleBinding
from console.requests import actions as requests

pytestmark = pytest.mark.django_db


@pytest.fixture
def executed(personas, kafka_cluster, django_capture_on_commit_callbacks):
    topic = "team-a.secret-" + uuid.uuid4().hex[:8]
    req = requests.submit_request(
        actor=personas["requester"],
        cluster=kafka_cluster,
        kind="topic.create",
        payload={"name": topic, "partitions": 1, "replication_factor": 1},
        reason="payroll pipeline",
    )
    with django_capture_on_commit_callbacks(execute=True):
        req = requests.approve_request(actor=personas["operator"], request=req, comment="ok")
    return Operation.objects.get(pk=req.operation_id), topic


@pytest.fixture
def other_requester(kafka_cluster):
    user = get_user_model().objects.create_user(username="team-b", password="pw-team-b")
    RoleBinding.objects.create(
        cluster=kafka_cluster, user=user, role=Role.REQUESTER, namespaces=["team-b."], principals=["User:b"]
    )
    return user


@pytest.mark.parametrize("route", ["operation_detail", "operation_progress"])
@pytest.mark.parametrize(
    ("who", "sees"),
    [("requester", True), ("operator", True), ("auditor", True), ("admin", True), ("viewer", False)],
)
def test_a_request_execution_is_shown_to_those_who_may_see_the_request(
    client, personas, executed, route, who, sees
):
    op, topic = executed
    client.force_login(personas[who])
    response = client.get(reverse(route, kwargs={"op_id": op.pk}))
    if sees:
        assert response.status_code == 200
    else:
        assert response.status_code == 404 and topic.encode() not in response.content


def test_another_team_cannot_read_the_payload(client, executed, other_requester):
    op, topic = executed
    client.force_login(other_requester)
    for route in ("operation_detail", "operation_progress"):
        response = client.get(reverse(route, kwargs={"op_id": op.pk}))
        assert response.status_code == 404 and topic.encode() not in response.content


def test_other_operations_stay_visible_to_the_clusters_viewers(client, personas, kafka_cluster):
    op = Operation.objects.create(kind="health.check", cluster=kafka_cluster, created_by=personas["operator"])
    client.force_login(personas["viewer"])
    assert client.get(reverse("operation_detail", kwargs={"op_id": op.pk})).status_code == 200
