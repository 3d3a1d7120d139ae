"""Alert evaluation of a cluster registered with its controllers (KIP-919 controller mode): what the
controllers answer is measured and nothing they cannot answer is taken for an unreachable cluster."""

from __future__ import annotations

import pytest
from django.utils import timezone

from console.alerts import evaluate, measure
from console.kafka import close_all
from console.models import Cluster
from console.models.alerts import Alert
from sandbox.testing import running_sandbox


@pytest.fixture(scope="module")
def quorum():
    with running_sandbox(brokers=2, controllers=3, speed=0) as c:
        c.create_topic("alc.t", assignment=[[1, 2]])
        yield c
    close_all()


@pytest.fixture
def fresh(db):
    measure.MEMORY.clear()
    yield
    measure.MEMORY.clear()


def test_it_raises_no_alert_for_a_healthy_quorum_reached_through_its_controllers(quorum, fresh):
    cluster = Cluster.objects.create(
        name="ctl-mode", bootstrap_controllers=quorum.bootstrap_controllers, request_timeout_s=5
    )
    evaluate.evaluate_cluster(cluster, timeout_s=15)
    assert list(Alert.objects.filter(cluster=cluster).values_list("rule", "subject", "summary")) == []


def test_it_leaves_what_only_brokers_answer_unmeasured_and_keeps_its_alerts(quorum, fresh):
    cluster = Cluster.objects.create(
        name="ctl-down", bootstrap_controllers=quorum.bootstrap_controllers, request_timeout_s=5
    )
    seen = Alert.objects.create(
        cluster=cluster, rule="under_replicated", subject="", severity="warning", summary="1 partition(s)",
        fired_at=timezone.now(), last_seen_at=timezone.now(),
    )  # fmt: skip
    quorum.stop_broker(2)
    try:
        evaluate.evaluate_cluster(cluster, timeout_s=15)
    finally:
        quorum.start_broker(2)
    # the controllers cannot see partitions or brokers: the open alert is neither resolved nor joined
    assert list(Alert.objects.filter(cluster=cluster).values_list("pk", "rule", "state")) == [
        (seen.pk, "under_replicated", "firing")
    ]


def test_it_still_alerts_controllers_that_cannot_be_reached(fresh):
    cluster = Cluster.objects.create(
        name="ctl-gone", bootstrap_controllers="127.0.0.1:1", request_timeout_s=2
    )
    evaluate.evaluate_cluster(cluster, timeout_s=15)
    assert list(Alert.objects.filter(cluster=cluster).values_list("rule", "state")) == [
        ("cluster_unreachable", "firing")
    ]
