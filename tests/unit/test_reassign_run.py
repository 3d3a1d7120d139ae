"""A reassignment against the sandbox: ledger, throttles, submit, poller, completion, cancel, janitor."""

from __future__ import annotations

import gc
from datetime import timedelta

import pytest
from django.utils import timezone

from console import operations
from console.clusters.actions import gateway_for
from console.kafka import ConfigChange, ConfigResource, TopicPartition, close_all
from console.models import AuditEvent, Operation, OperationState
from console.models.reassignment import EntryState, PartitionState, Reassignment, Stage
from console.reassignment import actions as reassignment
from console.reassignment import external, store, throttles
from console.reassignment import janitor as reassign_janitor
from console.reassignment.progress import replica_dicts
from tests.conftest import run_now
from tests.unit.reassign_world import MB, LaggingMetadata, clear_throttles, make_topic, start

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_throttles_left(sandbox):
    yield
    clear_throttles(sandbox)


def topic_configs(cluster, topic):
    entries = gateway_for(cluster).describe_configs([ConfigResource("TOPIC", topic)])[
        ConfigResource("TOPIC", topic)
    ]
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


def test_it_moves_a_partition_under_throttle_and_cleans_up(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2], [2, 3]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 3)}, elect_preferred=True)
    assert AuditEvent.objects.filter(action="reassignment.execute.requested", operation_id=op.pk).exists()

    run_now(op.pk)

    r.refresh_from_db()
    assert r.stage == Stage.MOVING
    # The ledger was written before the configs were set, with the values they replaced.
    ledger = {(e.resource_type, e.resource_name, e.config): e for e in r.throttles.all()}
    assert ledger[("TOPIC", topic, throttles.LEADER_REPLICAS)].value == "0:1,0:2"
    assert ledger[("TOPIC", topic, throttles.FOLLOWER_REPLICAS)].value == "0:3"
    assert {k[1] for k in ledger if k[0] == "BROKER"} == {"1", "2", "3"}
    assert all(e.state == EntryState.SET and e.previous is None for e in ledger.values())
    assert topic_configs(kafka_cluster, topic) == {
        throttles.LEADER_REPLICAS: "0:1,0:2",
        throttles.FOLLOWER_REPLICAS: "0:3",
    }
    assert broker_rates(kafka_cluster, 3) == {k: str(MB) for k in throttles.RATE_CONFIGS}
    record = AuditEvent.objects.get(action="reassignment.throttle.record", operation_id=op.pk)
    set_event = AuditEvent.objects.get(action="reassignment.throttle.set", operation_id=op.pk)
    assert record.pk < set_event.pk

    frozen.advance(4)
    run_now(r.operation_id)
    assert r.partitions.get().state == PartitionState.MOVING
    r.refresh_from_db()
    total, done, compact, _shown = store.live_entry(
        r, topic, 0
    )  # the poller's snapshot: one UPDATE per cycle
    replicas = replica_dicts(compact)
    assert 0 < done < total and (r.bytes_done, r.bytes_total) == (done, total)
    assert {x["broker"]: x["status"] for x in replicas}[1] == "In sync"
    assert {x["broker"]: x["status"] for x in replicas}[3].startswith("Behind: ")
    op.refresh_from_db()
    assert 0 < op.progress < 1 and op.state == OperationState.RUNNING

    frozen.advance(20)
    run_now(r.operation_id)

    op.refresh_from_db()
    r.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED, op.error
    assert r.outcome == "succeeded" and r.partitions.get().state == PartitionState.DONE
    assert topic_configs(kafka_cluster, topic) == {}
    assert broker_rates(kafka_cluster, 3) == {}
    assert not r.throttles.exclude(state=EntryState.REMOVED).exists()
    md = gateway_for(kafka_cluster).describe_topics([topic])[topic]
    assert md.partitions[0].replicas == (1, 3)
    assert AuditEvent.objects.filter(action="reassignment.throttle.remove", operation_id=op.pk).exists()
    assert (
        AuditEvent.objects.get(action="reassignment.execute.succeeded", operation_id=op.pk).outcome
        == "success"
    )


def test_previous_throttle_values_are_restored_not_deleted(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]])
    frozen.set_broker_config("2", throttles.LEADER_RATE, "777777")
    try:
        op, r = start(personas, kafka_cluster, {(topic, 0): (2, 3)})
        run_now(op.pk)
        entry = r.throttles.get(resource_name="2", config=throttles.LEADER_RATE)
        assert entry.previous == "777777"
        frozen.advance(30)
        run_now(r.operation_id)
        assert broker_rates(kafka_cluster, 2) == {throttles.LEADER_RATE: "777777"}
    finally:
        frozen.set_broker_config("2", throttles.LEADER_RATE, None)


def test_changing_the_throttle_mid_run_is_audited_and_applied(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 3)})
    run_now(op.pk)
    with pytest.raises(throttles.ThrottleError):
        throttles.change_throttle(actor=personas["operator"], reassignment=r, rate=0)
    throttles.change_throttle(actor=personas["operator"], reassignment=r, rate=5 * MB)
    assert broker_rates(kafka_cluster, 3)[throttles.FOLLOWER_RATE] == str(5 * MB)
    event = AuditEvent.objects.get(action="reassignment.throttle.change", operation_id=op.pk)
    assert (event.before, event.after) == ({"rate": MB}, {"rate": 5 * MB})
    frozen.advance(30)
    run_now(r.operation_id)
    assert broker_rates(kafka_cluster, 3) == {}


def test_cancel_reverts_in_flight_partitions_and_removes_throttles(
    personas, kafka_cluster, frozen, django_capture_on_commit_callbacks
):
    topic = make_topic(frozen, [[1, 2]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 3)})
    run_now(op.pk)
    reassignment.cancel_reassignment(actor=personas["operator"], reassignment=r)
    run_now(r.operation_id)
    op.refresh_from_db()
    assert op.state == OperationState.CANCELLED
    assert r.partitions.get().state == PartitionState.CANCELLED
    assert gateway_for(kafka_cluster).describe_topics([topic])[topic].partitions[0].replicas == (1, 2)
    assert topic_configs(kafka_cluster, topic) == {}
    assert AuditEvent.objects.filter(action="reassignment.cancel", operation_id=op.pk).exists()


def test_a_conflicting_second_plan_is_refused_per_partition(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2], [2, 3]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 3)})
    with pytest.raises(reassignment.PlanRejected) as err:
        start(personas, kafka_cluster, {(topic, 0): (2, 3), (topic, 1): (2, 1)})
    rows = {(c.topic, c.partition): c for c in err.value.checks}
    assert rows[(topic, 0)].problems == ("Already being reassigned",)
    assert rows[(topic, 1)].ok


def test_bad_input_is_refused_before_anything_is_created(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]])
    with pytest.raises(throttles.ThrottleError):
        start(personas, kafka_cluster, {(topic, 0): (1, 3)}, throttle=0)
    with pytest.raises(throttles.ThrottleError):
        start(personas, kafka_cluster, {(topic, 0): (1, 3)}, throttle=10**15)
    with pytest.raises(reassignment.PlanRejected, match="empty"):
        start(personas, kafka_cluster, {})
    with pytest.raises(reassignment.PlanRejected):
        start(personas, kafka_cluster, {("no-such-topic", 0): (1, 2)})
    assert not Reassignment.objects.exists()


def test_a_viewer_cannot_start_a_reassignment(personas, kafka_cluster, frozen):
    from django.core.exceptions import PermissionDenied

    topic = make_topic(frozen, [[1, 2]])
    with pytest.raises(PermissionDenied):
        reassignment.start_reassignment(
            actor=personas["viewer"], cluster=kafka_cluster, proposed={(topic, 0): (1, 3)}, throttle=MB
        )


def test_a_worker_gone_quiet_loses_nothing_the_tick_resumes_and_one_path_removes_throttles(
    personas, kafka_cluster, frozen
):
    """The worker submits, then nothing runs the operation for a while; the next tick resumes it."""
    topic = make_topic(frozen, [[1, 2]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 3)})
    run_now(op.pk)  # throttles, submit, the first poll; then nobody runs it
    assert topic_configs(kafka_cluster, topic)
    frozen.advance(5)
    Operation.objects.filter(pk=op.pk).update(next_run_at=timezone.now() - timedelta(seconds=1))
    assert op.pk in operations.run_due(worker="beat")
    r.refresh_from_db()
    assert r.polls == 2 and 0 < r.bytes_done < r.bytes_total
    # The move finishes while nothing runs: the janitor leaves a live operation's throttles alone.
    frozen.advance(30)
    assert not gateway_for(kafka_cluster).list_partition_reassignments([TopicPartition(topic, 0)])
    assert reassign_janitor.sweep_throttles() == []
    assert topic_configs(kafka_cluster, topic)
    run_now(op.pk)
    op.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED
    assert topic_configs(kafka_cluster, topic) == {} and broker_rates(kafka_cluster, 3) == {}
    assert AuditEvent.objects.filter(action="reassignment.throttle.remove", operation_id=op.pk).count() == 1


def test_foreign_throttles_are_listed_and_cleaned_with_an_audit(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]])
    frozen.set_broker_config("1", throttles.FOLLOWER_RATE, "1000")
    gateway_for(kafka_cluster).incremental_alter_configs(
        {ConfigResource("TOPIC", topic): [ConfigChange(throttles.LEADER_REPLICAS, "SET", "0:1")]}
    )
    found = {f["key"]: f for f in reassign_janitor.find_foreign_throttles(kafka_cluster)}
    assert f"TOPIC|{topic}|{throttles.LEADER_REPLICAS}" in found
    assert f"BROKER|1|{throttles.FOLLOWER_RATE}" in found
    reassign_janitor.clean_foreign_throttles(
        actor=personas["operator"], cluster=kafka_cluster, keys=list(found)
    )
    assert topic_configs(kafka_cluster, topic) == {}
    assert broker_rates(kafka_cluster, 1) == {}
    requested, event = AuditEvent.objects.filter(action="throttle.cleanup").order_by("id")
    assert requested.outcome == "requested" and event.params["requested_event"] == requested.pk
    assert event.before[f"broker:1/{throttles.FOLLOWER_RATE}"] == "1000"


def test_a_cluster_wide_default_throttle_rate_is_found_shown_per_broker_and_cleaned(
    personas, kafka_cluster, frozen
):
    from console.brokers import reads as broker_reads

    default = ConfigResource("BROKER", "")
    gw = gateway_for(kafka_cluster)
    gw.incremental_alter_configs({default: [ConfigChange(throttles.LEADER_RATE, "SET", "5000")]})
    try:
        found = {f["key"]: f for f in reassign_janitor.find_foreign_throttles(kafka_cluster)}
        key = f"BROKER||{throttles.LEADER_RATE}"
        assert key in found and found[key]["value"] == "5000"
        listing = broker_reads.list_brokers(actor=personas["viewer"], cluster=kafka_cluster, refresh=True)
        in_effect = {b.id: b.throttles.leader_rate for b in listing.brokers if b.throttles is not None}
        assert in_effect and set(in_effect.values()) == {"5000"}  # every broker is throttled by it
        reassign_janitor.clean_foreign_throttles(
            actor=personas["operator"], cluster=kafka_cluster, keys=[key]
        )
        entries = gw.describe_configs([default])[default]
        left = entries.get(throttles.LEADER_RATE)
        assert left is None or left.source != "DYNAMIC_DEFAULT_BROKER_CONFIG"
    finally:
        gw.incremental_alter_configs({default: [ConfigChange(throttles.LEADER_RATE, "DELETE")]})


def test_a_replication_factor_change_is_executed(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 2, 3)}, rf_change=True)
    run_now(op.pk)
    frozen.advance(30)
    run_now(r.operation_id)
    op.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED, op.error
    assert gateway_for(kafka_cluster).describe_topics([topic])[topic].partitions[0].replicas == (1, 2, 3)


def test_a_target_broker_going_down_mid_move_shows_it_not_reachable(personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 3)})
    run_now(op.pk)
    frozen.stop_broker(3)
    try:
        frozen.advance(5)
        run_now(r.operation_id)
        r.refresh_from_db()
        compact = store.live_entry(r, topic, 0).replicas
        replicas = replica_dicts(compact)
        assert {x["broker"]: x["status"] for x in replicas}[3] == "Broker not reachable (down or fenced)"
        assert Operation.objects.get(pk=op.pk).state == OperationState.RUNNING
    finally:
        frozen.start_broker(3)
        # The gateway learns live brokers from metadata it refreshes lazily; start fresh so later
        # tests do not see broker 3 as down (reported to the gateway's owner).
        close_all()
    frozen.advance(30)
    run_now(r.operation_id)
    assert Operation.objects.get(pk=op.pk).state == OperationState.SUCCEEDED


def test_two_operators_racing_on_a_partition_the_second_is_refused_per_partition(
    personas, kafka_cluster, frozen, monkeypatch
):
    topic = make_topic(frozen, [[1, 2], [2, 3]])
    first, r1 = start(personas, kafka_cluster, {(topic, 0): (1, 3)})
    # Both validated at the same moment: the second did not see the first yet.
    monkeypatch.setattr(reassignment, "console_busy", lambda cluster, exclude=None: {})
    second, r2 = start(personas, kafka_cluster, {(topic, 0): (2, 3), (topic, 1): (2, 1)})
    monkeypatch.undo()
    run_now(first.pk)
    run_now(second.pk)
    states = {x.partition: (x.state, x.message) for x in r2.partitions.all()}
    assert states[0] == (PartitionState.REFUSED, f"Already being reassigned by reassignment #{r1.pk}")
    assert states[1][0] == PartitionState.MOVING
    assert r1.partitions.get().state == PartitionState.MOVING
    listed = gateway_for(kafka_cluster).list_partition_reassignments([TopicPartition(topic, 0)])
    assert list(listed[TopicPartition(topic, 0)].adding) == [3]  # the first plan's target, not merged


def test_a_reassignment_started_outside_the_console_is_listed_with_its_replica_states(
    personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1, 2], [2, 3]])
    gw = gateway_for(kafka_cluster)
    tp = TopicPartition(topic, 1)
    assert gw.alter_partition_reassignments({tp: [2, 1]})[tp].__class__.__name__ == "Ok"
    try:
        rows = [x for x in external.external_reassignments(kafka_cluster) if x["topic"] == topic]
        assert [
            (x["partition"], x["original"], x["target"], x["adding"], x["removing"], x["percent"])
            for x in rows
        ] == [(1, [2, 3], [2, 1], [1], [3], 0)]
        states = {x["broker"]: (x["status"], x["new"]) for x in rows[0]["replicas"]}
        assert states[2] == ("In sync", False)
        assert states[1][0].startswith("Behind: ") and states[1][1] is True
    finally:
        gw.alter_partition_reassignments({tp: None})


def test_a_broker_whose_metadata_lags_the_finished_move_does_not_make_it_diverged(
    personas, kafka_cluster, frozen, monkeypatch
):
    """Real Kafka: the controller drops the finished move from its list a moment before a broker
    answering Metadata shows the new replicas. The poller waits for the metadata, up to a bound."""
    from console.reassignment import poll

    topic = make_topic(frozen, [[1, 2]], mb_per_partition=1)
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 3)}, throttle=None)
    lagging = LaggingMetadata(
        poll.gateway_for, topic, (1, 2)
    )  # the lagging broker still has the old replicas
    monkeypatch.setattr(poll, "gateway_for", lagging)
    monkeypatch.setattr(poll, "VERIFY_RETRY_S", 0.01)
    run_now(op.pk)
    frozen.advance(30)
    run_now(op.pk)
    op.refresh_from_db()
    assert lagging.stale_answers == 2
    assert r.partitions.get().state == PartitionState.DONE
    assert op.state == OperationState.SUCCEEDED, op.error


def test_a_reassignment_holds_its_plan_with_the_collector_paused(
    personas, kafka_cluster, frozen, monkeypatch
):
    """Preview, start, the throttle and submit steps and a poll cycle each run paused; the collector
    is back on between them."""
    from console.reassignment import planner, poll, worker

    seen: list[tuple[str, bool]] = []

    def spy(label, fn):
        def wrapped(*args, **kwargs):
            seen.append((label, gc.isenabled()))
            return fn(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(planner, "validate_plan", spy("validate", planner.validate_plan))
    monkeypatch.setattr(throttles, "record_throttles", spy("throttle", throttles.record_throttles))
    monkeypatch.setattr(worker, "console_conflicts", spy("submit", worker.console_conflicts))
    monkeypatch.setattr(poll, "_poll", spy("poll", poll._poll))
    topic = make_topic(frozen, [[1, 2]])
    plan = {(topic, 0): (1, 3)}
    reassignment.preview_plan(kafka_cluster, plan, throttle=1024 * 1024)
    assert gc.isenabled()
    op = reassignment.start_reassignment(
        actor=personas["operator"], cluster=kafka_cluster, proposed=plan, throttle=1024 * 1024
    )
    assert gc.isenabled()
    run_now(op.pk)
    assert gc.isenabled()
    assert seen == [
        ("validate", False),
        ("validate", False),
        ("throttle", False),
        ("submit", False),
        ("poll", False),
    ]


def _queries(fn, *args, **kwargs) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        fn(*args, **kwargs)
    return len(ctx.captured_queries)


@pytest.mark.parametrize("ending", ["give_up", "janitor"])
def test_reading_rows_and_ledger_entries_takes_the_same_queries_for_one_row_or_many(
    personas, kafka_cluster, frozen, ending
):
    """Rows and ledger entries read through a reassignment with columns left out must not fetch a
    left-out column (the reassignment's id) once per row: a 10,000-partition plan made 10,000 queries."""
    from console import access
    from console.reassignment import finish, planner

    access.system_actor()  # created once, on first use (the throttle removal's actor)

    def run(plan) -> list[int]:
        op, r = start(personas, kafka_cluster, plan)
        r = Reassignment.objects.select_related("cluster", "operation").get(pk=r.pk)
        r.operation = operations.claim(op.pk, "test")
        rows = store.partition_rows(r, [PartitionState.PENDING])
        moves = planner.plan_moves(
            {(x.topic, x.partition): tuple(x.original) for x in rows},
            {(x.topic, x.partition): tuple(x.target) for x in rows},
        )
        throttles.record_throttles(r, moves)
        counts = [_queries(throttles.apply_throttles, r)]
        assert not r.throttles.exclude(state=EntryState.SET).exists()
        r.partitions.update(state=PartitionState.DONE)
        counts.append(_queries(finish.elect, r))
        counts.append(_queries(finish._final_outcomes, r))
        r.partitions.update(state=PartitionState.PENDING)  # never submitted: nothing of ours moves
        if ending == "give_up":
            counts.append(_queries(finish.give_up, r, "test"))
        else:
            Operation.objects.filter(pk=op.pk).update(state=OperationState.ERRORED)
            counts.append(_queries(reassign_janitor.sweep_throttles))
        assert not r.throttles.filter(state__in=throttles.ACTIVE).exists()  # taken back
        return counts

    one = make_topic(frozen, [[1, 2]], mb_per_partition=1)
    many = [make_topic(frozen, [[1, 2]] * 6, mb_per_partition=1) for _ in range(3)]
    small = run({(one, 0): (1, 3)})  # 1 row, 8 ledger entries
    big = run({(t, p): (1, 3) for t in many for p in range(6)})  # 18 rows, 12 ledger entries
    assert small == big


def test_submit_settles_each_partition_from_what_kafka_already_does_and_answers(
    personas, kafka_cluster, frozen
):
    """Before submitting, Kafka is asked what is already moving: a move towards our target (ours,
    submitted before a crash) is adopted, a move elsewhere is refused, never merged; Kafka's
    own refusal of a partition (its topic deleted meanwhile) fails that partition alone."""
    from console.reassignment import worker

    topic = make_topic(frozen, [[1, 2]] * 4, mb_per_partition=1)
    doomed = make_topic(frozen, [[1, 2]], mb_per_partition=1)
    plan = {(topic, 0): (1, 3), (topic, 1): (1, 3), (topic, 2): (1, 3), (doomed, 0): (1, 3)}
    op, r = start(personas, kafka_cluster, plan, throttle=None)
    gw = gateway_for(kafka_cluster)
    outside = gw.alter_partition_reassignments(
        {TopicPartition(topic, 1): [2, 3], TopicPartition(topic, 2): [1, 3]}
    )
    assert all(v.__class__.__name__ == "Ok" for v in outside.values()), outside
    gw.delete_topics([doomed])
    r = Reassignment.objects.select_related("cluster", "operation").get(pk=r.pk)
    r.operation = operations.claim(op.pk, "test")

    worker.submit(r)

    states = {(x.topic, x.partition): (x.state, x.message) for x in r.partitions.all()}
    assert states[(topic, 0)] == (PartitionState.MOVING, "")
    assert states[(topic, 1)] == (PartitionState.REFUSED, "Already being reassigned outside this operation")
    assert states[(topic, 2)] == (PartitionState.MOVING, "")
    state, message = states[(doomed, 0)]
    assert state == PartitionState.FAILED and message.startswith("UNKNOWN_TOPIC_OR_PARTITION: ")
    listed = gw.list_partition_reassignments([TopicPartition(topic, p) for p in range(3)])
    assert list(listed[TopicPartition(topic, 1)].removing) == [1]  # the outside move left as it was
    assert list(listed[TopicPartition(topic, 0)].adding) == [3]


def test_the_gateway_refuses_replicas_that_are_not_broker_ids_without_asking_kafka(kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]] * 4, mb_per_partition=1)
    tps = [TopicPartition(topic, p) for p in range(4)]
    out = gateway_for(kafka_cluster).alter_partition_reassignments(
        {tps[0]: (1, True), tps[1]: (1, 3.0), tps[2]: ("1", 3), tps[3]: (1, 3)}
    )
    for tp in tps[:3]:
        assert out[tp].name == "INVALID_REPLICA_ASSIGNMENT" and "must be broker ids" in out[tp].message
    assert out[tps[3]].__class__.__name__ == "Ok"
    listed = gateway_for(kafka_cluster).list_partition_reassignments(tps)
    assert set(listed) == {tps[3]}


def test_the_janitor_leaves_an_ended_operations_throttles_while_kafka_still_moves_its_partitions(
    personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1, 2]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 3)})
    run_now(op.pk)  # throttles set, the partition moving
    Operation.objects.filter(pk=op.pk).update(state=OperationState.ERRORED)  # ended with throttles owed
    assert reassign_janitor.sweep_throttles() == []  # Kafka still copies to broker 3: left throttled
    assert topic_configs(kafka_cluster, topic)
    frozen.advance(60)
    assert not gateway_for(kafka_cluster).list_partition_reassignments([TopicPartition(topic, 0)])
    assert reassign_janitor.sweep_throttles() == [r.pk]
    assert topic_configs(kafka_cluster, topic) == {} and broker_rates(kafka_cluster, 3) == {}
