"""A scheduled held change against the sandbox or a real Kafka: a topic config change held by change
control, approved with a time T a few seconds ahead, is not run by a tick before T, is queued by the tick
at T and runs then (after the last drift check, against the cluster as it is), and Kafka has the new
value; a freeze covering a second change's time refuses it at scheduling; a self-service request
approved during a freeze waits for its end and then runs. Topics are named ``win.*`` and
deleted afterwards."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from console import operations
from console.changes import actions as changes
from console.changes import schedule
from console.configs import actions as configs
from console.configs import held as configs_held
from console.kafka import ConfigChange, KafkaOperationError, NewTopic
from console.models import Cluster, Role, RoleBinding
from console.models.requests import RequestState
from console.requests import actions as requests
from console.topics import cache as metadata_cache
from console.windows import actions as windows
from console.windows.guard import ChangeWindowClosed
from tests.conftest import make_personas

from .conftest import describe

pytestmark = pytest.mark.contract


@pytest.fixture
def world(db, endpoints, gw, django_user_model):
    cluster = Cluster.objects.create(
        name="contract-windows", bootstrap_servers=endpoints.bootstrap_servers, request_timeout_s=15
    )
    people = make_personas(cluster)
    approver = django_user_model.objects.create_user(username="operator2", password="pw-operator2")
    RoleBinding.objects.create(cluster=cluster, user=approver, role=Role.OPERATOR)
    name = f"win.{uuid.uuid4().hex[:12]}"
    made = gw.create_topics([NewTopic(name, 1, 1, None, {"retention.ms": "3600000"})])[name]
    assert not isinstance(made, KafkaOperationError), made
    describe(gw, name)
    metadata_cache.clear()
    changes.set_policy(
        actor=people["admin"], cluster=cluster, enabled=True, kinds=["config"], roles=[], approvers=1
    )
    yield people, approver, cluster, name
    gw.delete_topics([name])
    metadata_cache.clear()


def retention(gw, topic: str) -> str:
    res = configs.topic_resource(topic)
    return gw.describe_configs([res])[res]["retention.ms"].value


@pytest.mark.django_db
def test_a_scheduled_config_change_runs_at_its_time_and_not_before(gw, world):
    people, approver, cluster, topic = world
    operator = people["operator"]
    prepared = configs_held.prepare_config(
        operator, cluster, configs.topic_resource(topic), [ConfigChange("retention.ms", "SET", "7200000")]
    )
    req = changes.submit_change(actor=operator, cluster=cluster, prepared=prepared, reason="at T")
    t = timezone.now() + timedelta(seconds=3)
    schedule.schedule_change(actor=operator, request=req, run_at=t)
    changes.approve_change(actor=approver, request=req)
    req.refresh_from_db()
    assert (req.state, req.operation_id) == (RequestState.APPROVED, None)
    assert schedule.run_due(worker="contract") == {}  # before T: nothing
    assert retention(gw, topic) == "3600000"
    time.sleep(max(0.0, (t - timezone.now()).total_seconds()) + 0.05)
    assert list(schedule.run_due(worker="contract").values()) == ["queued"]
    req.refresh_from_db()
    operations.run(req.operation_id, worker="contract")
    req.refresh_from_db()
    assert req.state == RequestState.SUCCEEDED, req.result
    assert retention(gw, topic) == "7200000"
    steps = [e.step for e in req.events.order_by("id")]
    assert steps == ["submitted", "scheduled", "approved", "due", "queued", "running", "succeeded"]


@pytest.mark.django_db
def test_a_time_inside_a_freeze_is_refused(gw, world):
    people, _, cluster, topic = world
    operator = people["operator"]
    now = timezone.now()
    freeze = windows.add_window(
        actor=people["admin"], cluster=cluster, kind="freeze", reason="contract freeze",
        starts_at=now + timedelta(hours=1), ends_at=now + timedelta(hours=2),
    )  # fmt: skip
    prepared = configs_held.prepare_config(
        operator, cluster, configs.topic_resource(topic), [ConfigChange("retention.ms", "SET", "5400000")]
    )
    req = changes.submit_change(actor=operator, cluster=cluster, prepared=prepared)
    with pytest.raises(ChangeWindowClosed, match=f"frozen by window #{freeze.pk}"):
        schedule.schedule_change(actor=operator, request=req, run_at=now + timedelta(hours=1, minutes=30))
    assert retention(gw, topic) == "3600000"


@pytest.mark.django_db
def test_a_request_approved_during_a_freeze_runs_when_it_ends(gw, world):
    people, _, cluster, _ = world
    RoleBinding.objects.filter(cluster=cluster, user=people["requester"]).update(namespaces=["win."])
    now = timezone.now()
    freeze = windows.add_window(
        actor=people["admin"], cluster=cluster, kind="freeze", reason="contract freeze",
        starts_at=now - timedelta(minutes=1), ends_at=now + timedelta(seconds=3),
    )  # fmt: skip
    name = f"win.{uuid.uuid4().hex[:12]}"
    try:
        req = requests.submit_request(
            actor=people["requester"], cluster=cluster, kind="topic.create",
            payload={"name": name, "partitions": 1, "replication_factor": 1, "configs": {}},
        )  # fmt: skip
        req = requests.approve_request(actor=people["operator"], request=req)
        assert (req.state, req.operation_id, schedule.scheduled_at(req)) == (
            RequestState.APPROVED,
            None,
            freeze.ends_at,
        )
        assert schedule.run_due(worker="contract") == {}  # frozen: nothing runs
        time.sleep(max(0.0, (freeze.ends_at - timezone.now()).total_seconds()) + 0.05)
        assert list(schedule.run_due(worker="contract").values()) == ["queued"]
        req.refresh_from_db()
        operations.run(req.operation_id, worker="contract")
        req.refresh_from_db()
        assert req.state == RequestState.SUCCEEDED, req.result
        assert not isinstance(gw.describe_topics([name])[name], KafkaOperationError)
    finally:
        gw.delete_topics([name])
        metadata_cache.clear()
