"""A reassignment poll's planned reads (``console/kafka/reassign_reads.py``), on the sandbox and on
a real cluster: during a throttled move the ListPartitionReassignments read from its bytes lists
what kafka-python's decoding lists, and a plan's requests, sent again and again (their bodies
encoded once), answer what ``poll_reads`` answers each time."""

from __future__ import annotations

import pytest

from console.kafka import KafkaOperationError, TopicPartition
from console.models import Cluster
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from tests.conftest import make_personas, run_now, run_until_finished
from tests.contract import test_progress as progress_contract

from .conftest import eventually

MB = 1024 * 1024

pytestmark = pytest.mark.contract


def _comparable(value):
    if isinstance(value, KafkaOperationError):
        return ("error", value.name)
    return {k: _comparable(v) if isinstance(v, dict | KafkaOperationError) else v for k, v in value.items()}


@pytest.mark.django_db
def test_planned_reads_answer_what_poll_reads_answers_during_a_move(
    endpoints, gw, topics, broker_ids, broker_rates_restored
):
    assert {1, 2} <= set(broker_ids), "needs brokers 1 and 2"
    cluster = Cluster.objects.create(
        name="contract", bootstrap_servers=endpoints.bootstrap_servers, request_timeout_s=10
    )
    people = make_personas(cluster)
    topic = topics.create(partitions=2, replication_factor=1, replica_assignment=((1,), (1,)))
    progress_contract._fill(endpoints, topic, 24)
    op = reassignment.start_reassignment(
        actor=people["operator"], cluster=cluster, proposed={(topic, 0): (1, 2)}, throttle=MB, rf_change=True
    )
    r = Reassignment.objects.get(operation=op)
    run_now(op.pk)  # throttle, submit: 24 MB to copy at 1 MB/s
    moving = [(topic, 0), (topic, 1)]  # partition 1 is not moving: not listed
    by_broker = {1: [(topic, 0), (topic, 1)], 2: [(topic, 0)], 987654: [(topic, 1)]}
    only = {topic: {0, 1}}
    plan = gw.reassignment_poll_plan(moving, by_broker, only)
    tps = [TopicPartition(t, p) for t, p in moving]
    for _ in range(3):  # the same requests each cycle: the bodies encoded once, new headers
        planned = eventually(
            lambda: gw.reassignment_poll_reads(plan, [topic]), lambda got: (topic, 0) in got[0]
        )
        general = gw.poll_reads(
            tps, {b: [TopicPartition(*tp) for tp in v] for b, v in by_broker.items()}, [topic], only
        )
        assert (
            planned[0]
            == general[0]
            == {(topic, 0)}
            == {tuple(tp) for tp in gw.list_partition_reassignments(tps)}
        )
        assert set(planned[1]) == {1, 2, 987654} and planned[1][987654].name == "BROKER_NOT_AVAILABLE"
        assert set(planned[1][1]) == {(topic, 0), (topic, 1)} and set(planned[1][2]) == {(topic, 0)}
        assert _comparable(planned[2]) == _comparable(general[2]) and set(planned[2][topic]) == {0, 1}
    reassignment.cancel_reassignment(actor=people["operator"], reassignment=r)
    run_until_finished(op, 50, pause_s=0.2)
    assert op.finished, op.state
    # nothing moving: the same plan's listing answers no partition
    listed = eventually(lambda: gw.reassignment_poll_reads(plan, [topic])[0], lambda got: not got)
    assert listed == set()
