"""The reassignment poll's reads, on the sandbox and on a real cluster.

A poll reads the ISR either from a Metadata request of the moving topics (kafka-python) or from
the whole cluster's Metadata (librdkafka), whichever is cheaper for the share of the cluster's
partitions that is moving (``PollReadsMixin._isr_from_whole_cluster``). Both must give the same
leaders, ISRs and errors, and the throttled move of ``test_progress`` must read the same way
through either ("In sync" only once Kafka lists the replica in the ISR).
"""

from __future__ import annotations

import pytest

from console.kafka import KafkaOperationError, TopicPartition
from console.kafka.poll_reads import PollReadsMixin
from console.models import Cluster
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment.progress import flatten_logs
from tests.conftest import make_personas, run_now, run_until_finished
from tests.contract import test_progress as progress_contract

from .conftest import describe, eventually

MB = 1024 * 1024

pytestmark = pytest.mark.contract


def _comparable(isr):
    if isinstance(isr, KafkaOperationError):
        return ("error", isr.name)
    return {t: v if isinstance(v, dict) else ("error", v.name) for t, v in isr.items()}


def test_the_whole_cluster_isr_read_answers_what_the_named_read_answers(gw, topics, broker_ids):
    rf = min(3, len(broker_ids))
    a = topics.create(partitions=3, replication_factor=rf)
    b = topics.create(partitions=1, replication_factor=1)
    names = sorted([a, b, "ct-no-such-topic-poll-reads"])
    for only in (None, {a: {0, 2}, b: {0, 5}}):
        # two reads may reach brokers whose metadata differ for a moment (a new topic propagates)
        named, whole = eventually(
            lambda only=only: (
                _comparable(gw.partition_isr(names, only)),
                _comparable(gw._whole_cluster_isr(names, only)),
            ),
            lambda pair: pair[0] == pair[1],
        )
        assert whole == named
        assert whole["ct-no-such-topic-poll-reads"] == ("error", "UNKNOWN_TOPIC_OR_PARTITION")
        assert set(whole[a]) == ({0, 1, 2} if only is None else {0, 2}) and set(whole[b]) == {0}
        assert all(leader in isr for leader, isr in whole[a].values())


def test_log_dirs_and_isr_answer_the_same_either_way(gw, topics, broker_ids, monkeypatch):
    x, y = broker_ids[:2] if len(broker_ids) > 1 else (broker_ids[0], broker_ids[0])
    name = topics.create(partitions=2, replica_assignment=((x,), (y,)))
    p0, p1 = TopicPartition(name, 0), TopicPartition(name, 1)
    by_broker = {x: [p0], y: [p0, p1], 987654: [p1]}

    def read(whole: bool):
        monkeypatch.setattr(PollReadsMixin, "_isr_from_whole_cluster", lambda self, names: whole)
        held, isr = gw.log_dirs_and_isr(by_broker, [name], {name: {0, 1}})
        return {b: ("error", v.name) if isinstance(v, KafkaOperationError) else v for b, v in held.items()}, (
            _comparable(isr)
        )

    whole, named = eventually(
        lambda: (read(True), read(False)),
        lambda pair: pair[0] == pair[1] and (p0 in pair[0][0][x] and p1 in pair[0][0][y]),
    )
    assert whole == named
    held, isr = whole
    # the held replicas: what progress.flatten_logs made of describe_log_dirs' answer
    general = flatten_logs(gw.describe_log_dirs(partitions=by_broker))
    assert general[987654] is None and held[987654][0] == "error"
    for b in {x, y}:
        assert held[b] == {tuple(tp): (info[0], info[1]) for tp, info in general[b].items()}
    assert set(isr[name]) == {0, 1}


@pytest.mark.django_db
def test_while_a_replica_is_added_both_reads_leave_it_out_of_the_isr(
    endpoints, gw, topics, broker_ids, broker_rates_restored
):
    """During a throttled move Metadata lists the adding replica among the replicas, not in the
    ISR: a read that took the replicas for the ISR would show "In sync" too early."""
    assert {1, 2} <= set(broker_ids), "needs brokers 1 and 2"
    cluster = Cluster.objects.create(
        name="contract", bootstrap_servers=endpoints.bootstrap_servers, request_timeout_s=10
    )
    people = make_personas(cluster)
    topic = topics.create(partitions=1, replication_factor=1, replica_assignment=((1,),))
    progress_contract._fill(endpoints, topic, 24)
    op = reassignment.start_reassignment(
        actor=people["operator"], cluster=cluster, proposed={(topic, 0): (1, 2)}, throttle=MB, rf_change=True
    )
    r = Reassignment.objects.get(operation=op)
    run_now(op.pk)  # throttle, submit: 24 MB to copy at 1 MB/s
    md = eventually(lambda: describe(gw, topic).partitions[0], lambda p: 2 in p.replicas)
    assert 2 in md.replicas and 2 not in md.isr, md
    named, whole = eventually(
        lambda: (_comparable(gw.partition_isr([topic])), _comparable(gw._whole_cluster_isr([topic], None))),
        lambda pair: pair[0] == pair[1],
    )
    assert whole == named and whole[topic] == {0: (1, (1,))}
    tp = TopicPartition(topic, 0)
    listed, held, isr = gw.poll_reads([tp], {1: [tp], 2: [tp]}, [topic])
    assert listed == {(topic, 0)} == set(gw.list_partition_reassignments([tp]))
    assert (topic, 0) in held[1] and _comparable(isr)[topic][0][0] == 1
    reassignment.cancel_reassignment(actor=people["operator"], reassignment=r)
    run_until_finished(op, 50, pause_s=0.2)
    assert op.finished, op.state


@pytest.mark.django_db
@pytest.mark.parametrize("whole", [True, False], ids=["whole-cluster-isr", "named-topics-isr"])
def test_the_throttled_move_reads_the_same_through_either_isr_read(
    endpoints, gw, topics, broker_ids, broker_rates_restored, monkeypatch, whole
):
    """``test_progress``'s throttled move, every poll reading the ISR one way."""
    monkeypatch.setattr(PollReadsMixin, "_isr_from_whole_cluster", lambda self, names: whole)
    progress_contract.test_a_throttled_move_shows_messages_behind_and_in_sync_only_once_in_the_isr(
        endpoints, gw, topics, broker_ids, broker_rates_restored
    )
