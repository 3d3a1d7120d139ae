"""Under min ISR is counted per partition, as the topic list and the fleet summary count it: a topic
whose partition 0 has three replicas but a later partition only one (fully in sync) is under its
minimum of 2 on that partition, though its "replication factor" (partition 0's) is 3."""

from __future__ import annotations

import pytest

from console.alerts import evaluate, measure
from console.clusters.actions import gateway_for
from console.kafka import close_all
from console.models import Cluster
from console.models.alerts import Alert
from console.telemetry import summary
from sandbox.testing import running_sandbox


@pytest.fixture(scope="module")
def mixed():
    """mi.mixed: partition 0 on [1,2,3], partition 1 on [2] only, partition 2 on [3,1]; min ISR 2.
    mi.even: [1,2] x2, min ISR 2 (at its minimum: never under). mi.default: [1] (default min 1)."""
    with running_sandbox(brokers=3, speed=0) as c:
        c.create_topic("mi.mixed", assignment=[[1, 2, 3], [2], [3, 1]], configs={"min.insync.replicas": "2"})
        c.create_topic("mi.even", assignment=[[1, 2], [2, 1]], configs={"min.insync.replicas": "2"})
        c.create_topic("mi.default", assignment=[[1]])
        yield c
    close_all()


def test_it_counts_a_later_partition_with_fewer_replicas_than_the_minimum(db, mixed):
    measure.MEMORY.clear()
    cluster = Cluster.objects.create(
        name="mixed", bootstrap_servers=mixed.bootstrap_servers, request_timeout_s=5
    )
    try:
        evaluate.evaluate_cluster(cluster)
        (alert,) = Alert.objects.filter(cluster=cluster, rule="under_min_isr")
        assert (alert.state, alert.value, alert.severity) == ("firing", 1.0, "critical")
        gw = gateway_for(cluster)
        kept = measure.MEMORY.configs[cluster.pk][1].min_isr
        assert kept == {"mi.mixed": 2, "mi.even": 2, "mi.default": 1}
        assert summary.partition_counts(gw.partition_layout(), kept).under_min_isr == 1
        assert set(Alert.objects.filter(cluster=cluster).values_list("rule", flat=True)) == {"under_min_isr"}
    finally:
        measure.MEMORY.clear()
