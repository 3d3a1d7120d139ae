"""The reassignment poll's reads, on the sandbox and on a real cluster.

A poll reads the ISR from a Metadata request of the moving topics whose answer the console's C
decoder reads (``metadata_read.py``). It must give the leaders, ISRs and errors kafka-python's own
decoding of the same request gives (``describe_topics``), and the throttled move of
``test_progress`` shows "In sync" only once Kafka lists the replica in the ISR.
"""

from __future__ import annotations

import pytest

from console.kafka import KafkaOperationError, TopicPartition
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


def _described_isr(gw, names, only):
    """``partition_isr``'s answer as kafka-python's decoding of the topics' Metadata gives it."""
    out = {}
    for name, t in gw.describe_topics(names).items():
        if isinstance(t, KafkaOperationError):
            out[name] = ("error", t.name)
            continue
        keep = None if only is None else only.get(name, ())
        out[name] = {p.id: (p.leader, p.isr) for p in t.partitions if keep is None or p.id in keep}
    return out


def test_the_named_isr_read_answers_what_kafka_pythons_decoding_answers(gw, topics, broker_ids):
    rf = min(3, len(broker_ids))
    a = topics.create(partitions=3, replication_factor=rf)
    b = topics.create(partitions=1, replication_factor=1)
    names = sorted([a, b, "ct-no-such-topic-poll-reads"])
    for only in (None, {a: {0, 2}, b: {0, 5}}):
        # two reads may reach brokers whose metadata differ for a moment (a new topic propagates)
        named, described = eventually(
            lambda only=only: (
                _comparable(gw.partition_isr(names, only)),
                _described_isr(gw, names, only),
            ),
            lambda pair: pair[0] == pair[1],
        )
        assert described == named
        assert described["ct-no-such-topic-poll-reads"] == ("error", "UNKNOWN_TOPIC_OR_PARTITION")
        assert set(described[a]) == ({0, 1, 2} if only is None else {0, 2}) and set(described[b]) == {0}
        assert all(leader in isr for leader, isr in described[a].values())


def test_log_dirs_and_isr_answer_the_held_replicas_and_the_isr(gw, topics, broker_ids):
    x, y = broker_ids[:2] if len(broker_ids) > 1 else (broker_ids[0], broker_ids[0])
    name = topics.create(partitions=2, replica_assignment=((x,), (y,)))
    p0, p1 = TopicPartition(name, 0), TopicPartition(name, 1)
    by_broker = {x: [p0], y: [p0, p1], 987654: [p1]}

    def read():
        held, isr = gw.log_dirs_and_isr(by_broker, [name], {name: {0, 1}})
        return {b: ("error", v.name) if isinstance(v, KafkaOperationError) else v for b, v in held.items()}, (
            _comparable(isr)
        )

    def settled(pair) -> bool:  # both replicas listed, each with its offset lag: Kafka answers -1
        held = pair[0]  # while the broker has not made the replica yet (a topic just created)
        return p0 in held[x] and p1 in held[y] and all(v[1] >= 0 for b in (x, y) for v in held[b].values())

    held, isr = eventually(read, settled)
    # the held replicas: what progress.flatten_logs made of describe_log_dirs' answer
    general = flatten_logs(gw.describe_log_dirs(partitions=by_broker))
    assert general[987654] is None and held[987654][0] == "error"
    for b in {x, y}:
        assert held[b] == {tuple(tp): (info[0], info[1]) for tp, info in general[b].items()}
    assert isr == _described_isr(gw, [name], {name: {0, 1}}) and set(isr[name]) == {0, 1}


@pytest.mark.django_db
def test_while_a_replica_is_added_the_isr_read_leaves_it_out(
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
    named, described = eventually(
        lambda: (_comparable(gw.partition_isr([topic])), _described_isr(gw, [topic], None)),
        lambda pair: pair[0] == pair[1],
    )
    assert described == named and named[topic] == {0: (1, (1,))}
    tp = TopicPartition(topic, 0)
    listed, held, isr = gw.poll_reads([tp], {1: [tp], 2: [tp]}, [topic])
    assert listed == {(topic, 0)} == set(gw.list_partition_reassignments([tp]))
    assert (topic, 0) in held[1] and _comparable(isr)[topic][0][0] == 1
    reassignment.cancel_reassignment(actor=people["operator"], reassignment=r)
    run_until_finished(op, 50, pause_s=0.2)
    assert op.finished, op.state
