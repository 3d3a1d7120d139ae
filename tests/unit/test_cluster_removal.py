"""Removing a cluster while a reassignment runs never orphans a throttle on Kafka, whatever the order.

Removal is refused, with the reason and an audit event, while operations run on the cluster or the
throttle ledger owes Kafka anything; once the work has ended and the ledger is settled it succeeds.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.clusters import actions as clusters
from console.models import AuditEvent, Cluster, Operation
from console.models.reassignment import OWED_STATES, Reassignment, ThrottleEntry
from console.reassignment import actions as reassignment
from console.reassignment import janitor as reassign_janitor
from console.reassignment import throttles
from tests.conftest import run_now, throttle_configs_on
from tests.unit.test_operation_faults import drive

pytestmark = pytest.mark.django_db

MB = 1024 * 1024


def _start(personas, cluster, sandbox, name):
    sandbox.create_topic(name, partitions=2, replication_factor=2, assignment=[[1, 2], [2, 3]])
    sandbox.produce_synthetic(name, 8 * MB)
    sandbox.advance(1)
    sandbox.produce_synthetic(name, 0)
    return reassignment.start_reassignment(
        actor=personas["operator"], cluster=cluster, proposed={(name, 0): (1, 3)}, throttle=1 * MB
    )


def _throttles_on(sandbox, topic) -> set:
    """Read straight from the sandbox through a connection of its own (the registry row may be gone)."""
    probe = Cluster(name="probe", bootstrap_servers=sandbox.bootstrap_servers, request_timeout_s=5)
    gw = clusters.gateway_for(probe)
    return throttle_configs_on(gw, topic)


def _runs_until(op, frozen, point):
    """Bring the reassignment to one point of its life before the removal is attempted."""
    if point == "queued":
        return
    run_now(op.pk)  # throttles recorded and set, partitions submitted and moving
    if point == "ended":
        drive(op.pk, frozen)


@pytest.mark.parametrize("point", ["queued", "moving", "ended"])
def test_removal_waits_for_the_work_and_then_leaves_nothing_on_kafka(personas, kafka_cluster, frozen, point):
    topic = f"removal-{point}"
    op = _start(personas, kafka_cluster, frozen, topic)
    _runs_until(op, frozen, point)
    if point != "ended":
        with pytest.raises(clusters.ClusterInUse) as refused:
            clusters.remove_cluster(actor=personas["admin"], cluster=kafka_cluster)
        assert f"#{op.pk} (reassignment.execute)" in str(refused.value)
        event = AuditEvent.objects.filter(action="cluster.remove").latest("pk")
        assert event.outcome == "refused" and event.params["refused"]
        assert Cluster.objects.filter(pk=kafka_cluster.pk).exists()
        drive(op.pk, frozen)  # the operator waits for it (or cancels it)
    clusters.remove_cluster(actor=personas["admin"], cluster=kafka_cluster)
    assert not Cluster.objects.filter(pk=kafka_cluster.pk).exists()
    assert not ThrottleEntry.objects.exists() and not Reassignment.objects.exists()
    assert _throttles_on(frozen, topic) == set()
    assert AuditEvent.objects.filter(action="cluster.remove", outcome="success").count() == 1


def test_owed_throttles_of_an_errored_reassignment_block_removal_until_taken_back(
    personas, kafka_cluster, frozen, monkeypatch, settings
):
    settings.OPERATION_MAX_ATTEMPTS = 2
    topic = "removal-owed"
    op = _start(personas, kafka_cluster, frozen, topic)
    run_now(op.pk)
    # The throttles cannot be taken back (every removal attempt fails): the operation errors out.
    monkeypatch.setattr(throttles, "remove_throttles", lambda r, **kw: {"describe": {"ok": False}})
    frozen.advance(60)
    op = drive(op.pk, frozen)
    assert op.state == "errored"
    owed = ThrottleEntry.objects.filter(cluster=kafka_cluster, state__in=OWED_STATES).count()
    assert owed and _throttles_on(frozen, topic)
    with pytest.raises(clusters.ClusterInUse, match=f"{owed} throttle configs are still owed"):
        clusters.remove_cluster(actor=personas["admin"], cluster=kafka_cluster)
    monkeypatch.undo()
    reassign_janitor.sweep_throttles()  # the janitor takes them back: Kafka moves nothing of ours now
    clusters.remove_cluster(actor=personas["admin"], cluster=kafka_cluster)
    assert _throttles_on(frozen, topic) == set()


def test_a_throttle_recorded_while_the_removal_runs_makes_it_refuse(
    personas, kafka_cluster, frozen, monkeypatch
):
    """The race: the checks passed, then a worker recorded a throttle before the delete."""
    topic = "removal-race"
    op = _start(personas, kafka_cluster, frozen, topic)
    run_now(op.pk)
    monkeypatch.setattr(clusters, "removal_blockers", lambda cluster: [])
    with pytest.raises(clusters.ClusterInUse, match="recorded throttles on it meanwhile"):
        clusters.remove_cluster(actor=personas["admin"], cluster=kafka_cluster)
    assert Cluster.objects.filter(pk=kafka_cluster.pk).exists()
    assert ThrottleEntry.objects.filter(state__in=OWED_STATES).exists()
    monkeypatch.undo()
    drive(op.pk, frozen)
    assert _throttles_on(frozen, topic) == set()


def test_a_cluster_removed_before_the_first_step_ends_its_operation_with_nothing_set(
    personas, kafka_cluster, frozen, monkeypatch, settings
):
    """The other race: removed after the reassignment was created, before its worker started."""
    settings.OPERATION_MAX_ATTEMPTS = 2
    topic = "removal-early"
    op = _start(personas, kafka_cluster, frozen, topic)
    monkeypatch.setattr(clusters, "removal_blockers", lambda cluster: [])
    clusters.remove_cluster(actor=personas["admin"], cluster=kafka_cluster)
    op = drive(op.pk, frozen)
    assert op.state == "errored" and op.cluster_id is None
    assert "the cluster was removed from the console before anything was set on Kafka" in op.error
    assert _throttles_on(frozen, topic) == set()


def test_the_settings_page_says_why_it_was_refused(client, personas, kafka_cluster, frozen):
    op = _start(personas, kafka_cluster, frozen, "removal-page")
    client.force_login(personas["admin"])
    response = client.post(
        reverse("cluster_remove", kwargs={"name": kafka_cluster.name}),
        {"confirm_name": kafka_cluster.name},
        follow=True,
    )
    assert response.status_code == 200
    assert "cannot be removed" in response.content.decode() and f"#{op.pk}" in response.content.decode()
    assert Operation.objects.filter(pk=op.pk, state="pending").exists()
    assert Cluster.objects.filter(pk=kafka_cluster.pk).exists()
