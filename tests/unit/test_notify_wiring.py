"""The events reach the channels: requests submitted/approved/rejected, an operation's end (reassignment
outcomes, errored), leftover throttles found by the janitor, a broken audit chain."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection, transaction

from console import operations
from console.audit import store as audit
from console.integrity import chain
from console.models import AuditEvent, OperationState
from console.models.notify import NotificationDelivery
from console.models.reassignment import Reassignment, ThrottleEntry
from console.notify import actions, events
from console.operations import Done, Kind, Step, registry
from console.reassignment import janitor
from console.requests import actions as requests
from tests.conftest import make_personas
from tests.unit.test_notify import QUEUED, _notify_queue  # noqa: F401 - the notify queue fixture

pytestmark = pytest.mark.django_db


def _subscribe(admin, cluster, *subscribed):
    channel, _ = actions.create_channel(
        actor=admin,
        cluster=cluster,
        name="ops",
        kind="slack",
        url="https://hooks.example.com/x",
        events=list(subscribed),
    )
    return channel


def _events():
    return list(NotificationDelivery.objects.order_by("id").values_list("event", flat=True))


def test_requests_announce_submitted_approved_and_rejected(
    personas, kafka_cluster, django_capture_on_commit_callbacks
):
    _subscribe(
        personas["admin"],
        kafka_cluster,
        events.REQUEST_SUBMITTED,
        events.REQUEST_APPROVED,
        events.REQUEST_REJECTED,
    )
    submitted = []
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            submitted.append(
                requests.submit_request(
                    actor=personas["requester"],
                    cluster=kafka_cluster,
                    kind="topic.create",
                    payload={
                        "name": "team-a." + uuid.uuid4().hex[:10],
                        "partitions": 1,
                        "replication_factor": 1,
                    },
                    reason="orders",
                )
            )
    with django_capture_on_commit_callbacks(execute=True):
        requests.approve_request(actor=personas["operator"], request=submitted[0], comment="fine")
        requests.reject_request(actor=personas["operator"], request=submitted[1], comment="not this one")
    assert _events() == [
        events.REQUEST_SUBMITTED,
        events.REQUEST_SUBMITTED,
        events.REQUEST_APPROVED,
        events.REQUEST_REJECTED,
    ]
    rejected = NotificationDelivery.objects.get(event=events.REQUEST_REJECTED)
    assert rejected.payload["link"] == f"/c/sandbox/requests/{submitted[1].pk}/"
    assert (
        "not this one" in rejected.payload["text"]
        and rejected.payload["details"]["request"] == submitted[1].pk
    )
    assert len(QUEUED) == 4  # each handed to the worker once its transaction committed


def _boom(ctx):
    raise RuntimeError("the broker said no")


def _cancelled(ctx):
    return Done(OperationState.CANCELLED, {"outcome": "cancelled"})


@pytest.fixture
def fake_kinds(monkeypatch, settings):
    settings.OPERATION_MAX_ATTEMPTS = 1
    monkeypatch.setitem(registry._KINDS, "test.notify.boom", Kind("test.notify.boom", (Step("boom", _boom),)))
    # A stand-in with the reassignment's kind name: only the end state matters to the notification.
    monkeypatch.setitem(
        registry._KINDS, "reassignment.execute", Kind("reassignment.execute", (Step("end", _cancelled),))
    )


def test_an_errored_operation_and_a_reassignments_end_are_announced(
    offline_cluster, fake_kinds, django_capture_on_commit_callbacks, run_operation
):
    people = make_personas(offline_cluster)
    _subscribe(people["admin"], offline_cluster, events.OPERATION_ERRORED, events.REASSIGNMENT_CANCELLED)
    for kind in ("test.notify.boom", "reassignment.execute"):
        with django_capture_on_commit_callbacks(execute=True):
            op = operations.start(
                actor=people["operator"], kind=kind, cluster=offline_cluster, params={}, items=["x"]
            )
        with django_capture_on_commit_callbacks(execute=True):
            run_operation(op.pk)
    assert _events() == [events.OPERATION_ERRORED, events.REASSIGNMENT_CANCELLED]
    errored = NotificationDelivery.objects.get(event=events.OPERATION_ERRORED)
    assert "the broker said no" in errored.payload["text"] and errored.payload["link"].startswith(
        "/operations/"
    )


def test_the_janitor_announces_leftover_throttles_once(offline_cluster, django_capture_on_commit_callbacks):
    people = make_personas(offline_cluster)
    _subscribe(people["admin"], offline_cluster, events.THROTTLES_LEFTOVER)
    with transaction.atomic():
        op = operations.start(
            actor=people["operator"],
            kind="reassignment.execute",
            cluster=offline_cluster,
            params={},
            items=["t-0"],
        )
        from console.models import Operation

        Operation.objects.filter(pk=op.pk).update(state=OperationState.ERRORED)
        r = Reassignment.objects.create(operation=op, cluster=offline_cluster)
        ThrottleEntry.objects.create(
            reassignment=r, cluster=offline_cluster, resource_type="BROKER", resource_name="1",
            config="leader.replication.throttled.rate", value="1000", state="set",
        )  # fmt: skip
    for _ in range(2):  # Kafka is unreachable: the throttles stay owed, announced only once
        with django_capture_on_commit_callbacks(execute=True):
            assert janitor.sweep_throttles() == []
    (d,) = NotificationDelivery.objects.all()
    assert d.event == events.THROTTLES_LEFTOVER and "owing 1 throttle" in d.payload["title"]
    ThrottleEntry.objects.filter(reassignment=r).update(state="removed")  # let the cluster fixture go


def test_a_broken_audit_chain_is_announced_on_every_clusters_channels_once(
    offline_cluster, django_capture_on_commit_callbacks
):
    people = make_personas(offline_cluster)
    _subscribe(people["admin"], offline_cluster, events.AUDIT_CHAIN_BROKEN)
    with transaction.atomic():
        written = [audit.record(actor=None, action="test.event", params={"n": n}) for n in range(3)]
    with connection.cursor() as cursor:
        cursor.execute("UPDATE console_auditevent SET actor_name = 'mallory' WHERE id = %s", [written[1].pk])
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            assert not chain.check_chain().ok
    (d,) = NotificationDelivery.objects.all()
    assert d.event == events.AUDIT_CHAIN_BROKEN and str(written[1].pk) in d.title
    assert AuditEvent.objects.filter(pk=written[1].pk).exists()
