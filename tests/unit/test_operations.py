"""Operations: created with their audit event, claimed once, run by the task function, recovered by beat."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console import operations
from console.clusters import worker as health
from console.models import AuditEvent, Operation, OperationState
from tasks import operations as op_tasks

pytestmark = pytest.mark.django_db


def test_it_runs_a_health_check_end_to_end(
    personas, kafka_cluster, django_capture_on_commit_callbacks, monkeypatch, settings
):
    settings.OPERATION_DISPATCHER = "tasks.operations.enqueue"
    queued = []
    monkeypatch.setattr(
        op_tasks.run_operation, "apply_async", lambda args, countdown=None: queued.append(args) or _Result()
    )
    with django_capture_on_commit_callbacks(execute=True):
        op = health.start_health_check(actor=personas["operator"], cluster=kafka_cluster)
    assert queued == [(op.pk,)]
    assert Operation.objects.get(pk=op.pk).celery_task_id == "fake-task"
    requested = AuditEvent.objects.get(action="health.check.requested")
    assert (requested.operation_id, requested.actor_name, requested.outcome) == (
        op.pk,
        "operator",
        "requested",
    )

    op_tasks.run_operation.run(op.pk)

    op.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED
    assert op.progress == 1.0
    assert {i.resource: i.state for i in op.items.all()} == {
        "queue": "succeeded",
        "database": "succeeded",
        "kafka": "succeeded",
    }
    assert "3 brokers" in op.items.get(resource="kafka").message
    done = AuditEvent.objects.get(action="health.check.succeeded")
    assert done.outcomes["kafka"]["ok"] is True


def test_a_health_check_of_an_unreachable_cluster_fails_with_the_reason(personas, offline_cluster):
    op = health.start_health_check(actor=personas["admin"], cluster=offline_cluster)
    operations.run(op.pk, worker="test")
    op.refresh_from_db()
    assert op.state == OperationState.FAILED
    assert "127.0.0.1:1" in op.error
    assert AuditEvent.objects.filter(action="health.check.failed", operation_id=op.pk).exists()


def test_a_second_worker_backs_off(personas, kafka_cluster):
    op = Operation.objects.create(kind="health.check", cluster=kafka_cluster)
    assert operations.claim(op.pk, "w1") is not None
    assert operations.claim(op.pk, "w2") is None
    assert Operation.objects.get(pk=op.pk).claimed_by == "w1"


def test_a_quiet_running_operation_is_due_again_and_reclaimed_as_a_new_attempt(
    personas, kafka_cluster, settings
):
    op = Operation.objects.create(kind="health.check", cluster=kafka_cluster)
    operations.claim(op.pk, "dead-worker")
    fresh = Operation.objects.create(kind="health.check", cluster=kafka_cluster)
    operations.claim(fresh.pk, "live-worker")
    Operation.objects.filter(pk=op.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.OPERATION_STALE_AFTER_S + 5)
    )
    assert operations.due_ids() == [op.pk]
    reclaimed = operations.claim(op.pk, "new-worker")
    assert reclaimed is not None and reclaimed.attempts == 1 and reclaimed.claimed_by == "new-worker"


def test_pending_operations_nobody_took_are_queued_again(personas, kafka_cluster, settings, _no_queue):
    old = Operation.objects.create(kind="health.check", cluster=kafka_cluster)
    Operation.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.OPERATION_STALE_AFTER_S + 5)
    )
    Operation.objects.create(
        kind="health.check", cluster=kafka_cluster
    )  # just created: its task is on the way
    assert operations.requeue_pending() == [old.pk]
    assert _no_queue == [old.pk]


def test_finished_operations_are_never_reclaimed(kafka_cluster):
    op = Operation.objects.create(kind="health.check", cluster=kafka_cluster, state=OperationState.SUCCEEDED)
    assert operations.claim(op.pk, "w") is None


def test_an_unavailable_queue_leaves_the_operation_pending(personas, kafka_cluster, monkeypatch, settings):
    def broken(args, countdown=None):
        raise ConnectionError("redis is down")

    settings.OPERATION_DISPATCHER = "tasks.operations.enqueue"
    monkeypatch.setattr(op_tasks.run_operation, "apply_async", broken)
    op = Operation.objects.create(kind="health.check", cluster=kafka_cluster)
    assert operations.dispatch(op.pk) == ""
    assert Operation.objects.get(pk=op.pk).state == OperationState.PENDING


def test_the_progress_fragment_stops_polling_when_done(client, personas, kafka_cluster):
    op = Operation.objects.create(kind="health.check", cluster=kafka_cluster, state=OperationState.RUNNING)
    client.force_login(personas["viewer"])
    url = f"/operations/{op.pk}/progress/"
    running = client.get(url, headers={"HX-Request": "true"})
    assert running.status_code == 200 and b'hx-trigger="every 1s"' in running.content
    Operation.objects.filter(pk=op.pk).update(state=OperationState.SUCCEEDED, progress=1.0)
    done = client.get(url, headers={"HX-Request": "true"})
    assert done.status_code == 286
    assert b"hx-trigger" not in done.content


class _Result:
    id = "fake-task"


def test_a_cluster_less_operation_is_visible_to_its_starter_only(client, personas):
    op = Operation.objects.create(kind="audit.verify", created_by=personas["auditor"])
    client.force_login(personas["auditor"])
    assert client.get(f"/operations/{op.pk}/").status_code == 200
    client.force_login(personas["viewer"])
    assert client.get(f"/operations/{op.pk}/").status_code == 404
    client.force_login(personas["admin"])
    assert client.get(f"/operations/{op.pk}/").status_code == 200
