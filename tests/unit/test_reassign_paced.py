"""A paced reassignment against the sandbox: waves of at most N partitions per broker, throttles of
finished partitions taken back while others move, pause / resume, cancel dropping the queue, and a
worker restarted mid-queue going on where it was."""

from __future__ import annotations

import pytest

from console.clusters.actions import gateway_for
from console.kafka import ConfigResource, TopicPartition
from console.models import AuditEvent, OperationState
from console.models.reassignment import EntryState
from console.reassignment import actions as reassignment
from console.reassignment import finish, queue, takeback, throttles
from console.reassignment.pacing import Pacing
from tests.conftest import run_now
from tests.unit.reassign_world import MB, clear_throttles, make_topic, start

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_throttles_left(sandbox):
    yield
    clear_throttles(sandbox)


def topic_configs(cluster, topic):
    res = ConfigResource("TOPIC", topic)
    entries = gateway_for(cluster).describe_configs([res])[res]
    return {
        k: entries[k].value for k in throttles.REPLICA_CONFIGS if entries[k].source == "DYNAMIC_TOPIC_CONFIG"
    }


def broker_rates(cluster, broker):
    res = ConfigResource("BROKER", str(broker))
    entries = gateway_for(cluster).describe_configs([res])[res]
    return {
        k: entries[k].value
        for k in throttles.RATE_CONFIGS
        if k in entries and entries[k].source == "DYNAMIC_BROKER_CONFIG"
    }


def states(r):
    return dict(r.partitions.values_list("partition", "state"))


def kafka_moving(cluster, topic, n):
    listed = gateway_for(cluster).list_partition_reassignments([TopicPartition(topic, p) for p in range(n)])
    return sorted(tp.partition for tp in listed)


def paced(personas, cluster, topic, n_parts, n=1, **kw):
    plan = {(topic, p): (1, 3) for p in range(n_parts)}
    return start(personas, cluster, plan, pacing=Pacing(max_moves=n, **kw))


def finish_moving(frozen, op, seconds=10, runs=1):
    for _ in range(runs):
        frozen.advance(seconds)
        run_now(op.pk)


def test_it_moves_in_waves_and_gives_back_throttles_of_finished_partitions(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]] * 3, mb_per_partition=2)
    op, r = paced(personas, kafka_cluster, topic, 3)
    started = AuditEvent.objects.get(action="reassignment.execute.requested", operation_id=op.pk)
    assert started.params["pacing"] == {"leader": None, "follower": None, "brokers": {}, "max_moves": 1}
    run_now(op.pk)  # throttles, the first batch, the first poll
    # every partition adds 3 and removes 2: one at a time
    assert states(r) == {0: "moving", 1: "pending", 2: "pending"}
    assert kafka_moving(kafka_cluster, topic, 3) == [0]
    assert topic_configs(kafka_cluster, topic)[throttles.FOLLOWER_REPLICAS] == "0:3,1:3,2:3"
    q = queue.queue_state(r)
    assert (q["queued"], q["in_flight"], q["next"]) == (2, 1, [f"{topic}-1", f"{topic}-2"])
    assert q["in_flight_per_broker"] == {"2": 1, "3": 1}

    finish_moving(frozen, op)  # 0 finishes: its entries go, 1 is submitted
    assert states(r) == {0: "done", 1: "moving", 2: "pending"}
    assert kafka_moving(kafka_cluster, topic, 3) == [1]
    assert topic_configs(kafka_cluster, topic) == {
        throttles.LEADER_REPLICAS: "1:1,1:2,2:1,2:2",
        throttles.FOLLOWER_REPLICAS: "1:3,2:3",
    }
    follower = r.throttles.get(config=throttles.FOLLOWER_REPLICAS)
    assert (follower.state, follower.added) == (EntryState.SET, ["1:3", "2:3"])
    assert broker_rates(kafka_cluster, 3)  # still involved by 1 and 2
    event = AuditEvent.objects.filter(action="reassignment.throttle.remove", operation_id=op.pk).first()
    assert event.params["reason"] == takeback.REASON

    finish_moving(frozen, op, runs=3)
    op.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED, op.error
    assert set(states(r).values()) == {"done"}
    assert topic_configs(kafka_cluster, topic) == {}
    assert broker_rates(kafka_cluster, 3) == {}
    assert not r.throttles.exclude(state=EntryState.REMOVED).exists()


def test_a_broker_no_longer_involved_gets_its_rates_back_while_others_move(personas, kafka_cluster, frozen):
    # 0 moves 1 -> 2, 1 and 2 move 3 -> 2: 0 and 1 at once under N=2, 2 queued (broker 2 is full)
    topic = make_topic(frozen, [[1], [3], [3]], mb_per_partition=2)
    op, r = start(
        personas,
        kafka_cluster,
        {(topic, 0): (2,), (topic, 1): (2,), (topic, 2): (2,)},
        pacing=Pacing(max_moves=2, leader=2 * MB, follower=MB),
    )
    run_now(op.pk)
    assert states(r) == {0: "moving", 1: "moving", 2: "pending"}
    assert broker_rates(kafka_cluster, 1) == {
        throttles.LEADER_RATE: str(2 * MB),
        throttles.FOLLOWER_RATE: str(MB),
    }
    finish_moving(frozen, op)
    assert states(r) == {0: "done", 1: "done", 2: "moving"}
    # broker 1 is no longer involved: its rates are back; 2 and 3 keep theirs
    assert broker_rates(kafka_cluster, 1) == {}
    assert broker_rates(kafka_cluster, 3) == {
        throttles.LEADER_RATE: str(2 * MB),
        throttles.FOLLOWER_RATE: str(MB),
    }
    finish_moving(frozen, op, runs=3)
    op.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED, op.error
    assert broker_rates(kafka_cluster, 3) == {} and broker_rates(kafka_cluster, 2) == {}


def test_pause_stops_submissions_and_resume_goes_on(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]] * 3, mb_per_partition=2)
    op, r = paced(personas, kafka_cluster, topic, 3)
    run_now(op.pk)
    state = queue.pause_reassignment(actor=personas["operator"], reassignment=r)
    assert state["paused"] and state["text"] == "paused (2 queued)"
    finish_moving(frozen, op, runs=2)  # 0 finishes; nothing new is submitted
    assert states(r) == {0: "done", 1: "pending", 2: "pending"}
    assert kafka_moving(kafka_cluster, topic, 3) == []
    op.refresh_from_db()
    assert op.state == OperationState.RUNNING and "paused (2 queued)" in op.progress_text
    # paused with nothing in flight: the worker looks again only every PAUSED_POLL_S, not twice a second
    from django.utils import timezone

    from console.reassignment.worker import PAUSED_POLL_S

    assert (op.next_run_at - timezone.now()).total_seconds() > PAUSED_POLL_S - 1
    with pytest.raises(reassignment.PlanRejected, match="already paused"):
        queue.pause_reassignment(actor=personas["operator"], reassignment=r)

    queue.resume_reassignment(actor=personas["operator"], reassignment=r)
    finish_moving(frozen, op, seconds=0)
    assert states(r)[1] == "moving"
    finish_moving(frozen, op, runs=4)
    op.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED, op.error
    events = list(
        AuditEvent.objects.filter(action__in=("reassignment.pause", "reassignment.resume"))
        .order_by("pk")
        .values_list("action", "outcome")
    )
    assert events == [
        ("reassignment.pause", "requested"),
        ("reassignment.pause", "success"),
        ("reassignment.pause", "refused"),
        ("reassignment.resume", "requested"),
        ("reassignment.resume", "success"),
    ]
    with pytest.raises(reassignment.PlanRejected, match="already finished"):
        queue.resume_reassignment(actor=personas["operator"], reassignment=r)


def test_cancel_drops_the_queue_and_says_what_never_started(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]] * 3, mb_per_partition=2)
    op, r = paced(personas, kafka_cluster, topic, 3)
    run_now(op.pk)
    reassignment.cancel_reassignment(actor=personas["operator"], reassignment=r)
    run_now(op.pk)
    op.refresh_from_db()
    assert op.state == OperationState.CANCELLED
    rows = dict(r.partitions.values_list("partition", "message"))
    assert rows[1] == rows[2] == finish.NEVER_STARTED
    assert op.result["never_started"] == 2
    assert kafka_moving(kafka_cluster, topic, 3) == []
    assert topic_configs(kafka_cluster, topic) == {} and broker_rates(kafka_cluster, 3) == {}


def test_a_worker_restarted_mid_queue_goes_on(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]] * 3, mb_per_partition=2)
    op, r = paced(personas, kafka_cluster, topic, 3)
    run_now(op.pk)
    frozen.advance(10)
    # a worker crashed after Kafka accepted the next batch but before the rows said so
    gateway_for(kafka_cluster).alter_partition_reassignments({TopicPartition(topic, 1): [1, 3]})
    takeback._SEEN.clear()  # a new process: nothing remembered
    run_now(op.pk, worker="another-worker")
    assert states(r)[1] == "moving" and states(r)[2] == "pending"  # adopted, not refused
    assert kafka_moving(kafka_cluster, topic, 3) == [1]
    finish_moving(frozen, op, runs=4)
    op.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED, op.error
    assert set(states(r).values()) == {"done"}


def test_a_move_without_n_is_not_paused_and_submits_everything(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]] * 3, mb_per_partition=2)
    op, r = start(personas, kafka_cluster, {(topic, p): (1, 3) for p in range(3)})
    run_now(op.pk)
    assert set(states(r).values()) == {"moving"}
    assert queue.queue_state(r) is None
    with pytest.raises(reassignment.PlanRejected, match="not paced"):
        queue.pause_reassignment(actor=personas["operator"], reassignment=r)
    assert AuditEvent.objects.filter(action="reassignment.pause", outcome="refused").exists()


def test_bad_pacing_is_refused_before_anything_is_created(personas, kafka_cluster, frozen):
    from console.models.reassignment import Reassignment

    topic = make_topic(frozen, [[1, 2]])
    plan = {(topic, 0): (1, 3)}
    for bad in (Pacing(max_moves=0), Pacing(max_moves=-2), Pacing(brokers={9: MB}), Pacing(leader=-1)):
        with pytest.raises((reassignment.PlanRejected, throttles.ThrottleError)):
            start(personas, kafka_cluster, plan, pacing=bad)
    with pytest.raises(reassignment.PlanRejected, match="does not involve"):
        start(personas, kafka_cluster, plan, pacing=Pacing(brokers={9: MB}))
    assert not Reassignment.objects.exists()


def test_a_viewer_cannot_pause(personas, kafka_cluster, frozen):
    from django.core.exceptions import PermissionDenied

    topic = make_topic(frozen, [[1, 2]] * 2, mb_per_partition=2)
    op, r = paced(personas, kafka_cluster, topic, 2)
    with pytest.raises(PermissionDenied):
        queue.pause_reassignment(actor=personas["viewer"], reassignment=r)
    r.refresh_from_db()
    assert not r.paused
    assert not AuditEvent.objects.filter(action="reassignment.pause", outcome="requested").exists()
