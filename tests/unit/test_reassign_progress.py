"""Progress arithmetic on DescribeLogDirs answers shaped as the gateway returns them (KIP-179 states)."""

from __future__ import annotations

from console.kafka import KafkaOperationError, TopicPartition
from console.kafka.types import LogDirInfo, ReplicaLogInfo
from console.reassignment.progress import (
    CAUGHT_UP,
    IN_SYNC,
    NOT_STARTED,
    UNKNOWN_BROKER,
    UNKNOWN_PARTITION,
    at_least,
    eta_seconds,
    flatten_logs,
    mark_in_sync,
    messages_behind,
    partition_progress,
    smoothed_rate,
    staleness,
)

TP = TopicPartition("orders", 0)
MB = 1024 * 1024


def _logdir(path: str, entries: dict) -> LogDirInfo:
    return LogDirInfo(path, None, entries)


def test_flatten_merges_dirs_drops_future_replicas_and_marks_silent_brokers():
    other = TopicPartition("orders", 1)
    logs = {
        1: (_logdir("/a", {TP: ReplicaLogInfo(10 * MB, 0, False)}),),
        # broker 2 moves orders-0 between its own dirs: the future copy is not the replica's size
        2: (
            _logdir("/a", {TP: ReplicaLogInfo(4 * MB, 7, False)}),
            _logdir("/b", {TP: ReplicaLogInfo(1 * MB, 0, True), other: ReplicaLogInfo(3, 0, False)}),
        ),
        3: KafkaOperationError(8, "BROKER_NOT_AVAILABLE", "down"),
    }
    flat = flatten_logs(logs)
    assert flat[3] is None
    assert flat[1][("orders", 0)][:2] == (10 * MB, 0)  # plain (topic, partition) keys find the entries
    assert flat[2][("orders", 0)][:2] == (4 * MB, 7)
    assert flat[2][("orders", 1)][:2] == (3, 0)


def test_replica_states_and_bytes_against_the_leaders_size():
    logs = flatten_logs(
        {
            1: (_logdir("/a", {TP: ReplicaLogInfo(10 * MB, 0, False)}),),
            2: (_logdir("/a", {TP: ReplicaLogInfo(10 * MB, 0, False)}),),
            4: (_logdir("/a", {TP: ReplicaLogInfo(4 * MB, 600, False)}),),
            5: (_logdir("/a", {}),),
            6: KafkaOperationError(8, "BROKER_NOT_AVAILABLE", "down"),
        }
    )
    prog = partition_progress(("orders", 0), [1, 2], [2, 4, 5, 6], True, logs, isr=[1, 2])
    states = {r["broker"]: r["status"] for r in prog.replicas}
    assert states[2] == IN_SYNC
    assert states[4] == "Behind: ~600 messages / 6.0 MiB"
    assert states[5] == NOT_STARTED  # a new replica its broker has not created yet
    assert states[6] == UNKNOWN_BROKER
    assert (prog.bytes_total, prog.bytes_done) == (3 * 10 * MB, 4 * MB)  # three new replicas copy 10 MB each


def test_a_partition_no_broker_hosts_is_unknown():
    logs = flatten_logs({1: (_logdir("/a", {}),), 2: (_logdir("/a", {}),)})
    prog = partition_progress(("gone", 3), [1], [2], True, logs)
    assert [r["status"] for r in prog.replicas] == [UNKNOWN_PARTITION]
    assert not prog.known


def test_a_level_replica_is_in_sync_only_once_the_isr_lists_it():
    logs = flatten_logs(
        {
            1: (_logdir("/a", {TP: ReplicaLogInfo(10 * MB, 0, False)}),),
            3: (_logdir("/a", {TP: ReplicaLogInfo(10 * MB, 0, False)}),),
        }
    )
    waiting = partition_progress(("orders", 0), [1], [3], True, logs, isr=[1])
    assert [r["status"] for r in waiting.replicas] == [CAUGHT_UP]
    joined = partition_progress(("orders", 0), [1], [3], True, logs, isr=[1, 3])
    assert [r["status"] for r in joined.replicas] == [IN_SYNC]
    unknown = partition_progress(("orders", 0), [1], [3], True, logs)  # ISR not read: never "In sync"
    assert [r["status"] for r in unknown.replicas] == [CAUGHT_UP]


def test_messages_behind_is_estimated_from_the_leaders_offsets_when_kafka_reports_lag_0():
    # Kafka reports offset lag 0 for a follower catching up: the count comes from the leader
    # (log start 1,000, end 11,000: 10,000 records in 10 MB), 6 MB behind -> ~6,000 messages.
    logs = flatten_logs(
        {
            1: (_logdir("/a", {TP: ReplicaLogInfo(10 * MB, 0, False)}),),
            4: (_logdir("/a", {TP: ReplicaLogInfo(4 * MB, 0, False)}),),
        }
    )
    prog = partition_progress(("orders", 0), [1], [4], True, logs, offsets={("orders", 0): [1000, 11000]})
    assert [r["status"] for r in prog.replicas] == ["Behind: ~6,000 messages / 6.0 MiB"]
    without = partition_progress(("orders", 0), [1], [4], True, logs)
    assert [r["status"] for r in without.replicas] == ["Behind: 6.0 MiB"]  # no offsets: bytes only, no guess


def test_estimator_edge_cases():
    assert messages_behind(5 * MB, 10 * MB, (0, 100)) == 50
    assert messages_behind(1, 10 * MB, (0, 100)) == 1  # behind by some bytes is at least one message
    assert messages_behind(5 * MB, 0, (0, 100)) is None  # empty leader: no ratio
    assert messages_behind(5 * MB, 10 * MB, (100, 100)) is None  # no records (all deleted)
    assert messages_behind(0, 10 * MB, (0, 100)) is None
    assert messages_behind(5 * MB, 10 * MB, None) is None


def test_after_kafka_finished_the_bytes_come_from_the_new_replicas():
    # Completion seen late (the console was down): the original replicas no longer host the
    # partition; the moved bytes are the full log the new replicas hold, not 0 B of 0 B.
    logs = flatten_logs(
        {
            1: (_logdir("/a", {}),),
            2: (_logdir("/a", {}),),
            4: (_logdir("/a", {TP: ReplicaLogInfo(77 * MB, 0, False)}),),
            5: (_logdir("/a", {TP: ReplicaLogInfo(77 * MB, 0, False)}),),
        }
    )
    prog = partition_progress(("orders", 0), [1, 2], [4, 5], False, logs, isr=[4, 5])
    assert (prog.bytes_total, prog.bytes_done) == (2 * 77 * MB, 2 * 77 * MB)
    assert [r["status"] for r in prog.replicas] == [IN_SYNC, IN_SYNC]


def test_rate_is_smoothed_over_the_window_and_the_eta_follows_it():
    window = 30.0
    samples, rate = smoothed_rate([], 1000.0, 0, window)
    assert rate is None  # one sample: measuring
    # fetch-sized steps: 0, 12 MB, 0, 12 MB ... per second (6 MB/s on average)
    done = 0
    rates = []
    for i in range(1, 61):
        done += 12 * MB if i % 2 else 0
        samples, rate = smoothed_rate(samples, 1000.0 + i, done, window)
        if rate is not None:
            rates.append(rate)
    assert rates and all(5.5 * MB <= r <= 7.5 * MB for r in rates[5:]), [r / MB for r in rates]
    assert max(t for t, _ in samples) - min(t for t, _ in samples) <= window + 1  # old samples dropped
    assert eta_seconds(60 * MB, rates[-1]) == 60 * MB / rates[-1]
    assert eta_seconds(0, None) == 0.0 and eta_seconds(5, None) is None and eta_seconds(5, 0.0) is None


def test_a_gap_longer_than_the_window_starts_the_rate_over():
    samples, _ = smoothed_rate([[0.0, 0.0], [10.0, 10 * MB]], 20.0, 20 * MB, 30.0)
    assert len(samples) == 3
    samples, rate = smoothed_rate(samples, 500.0, 500 * MB, 30.0)  # 8 minutes without a poll
    assert rate is None and samples == [[500.0, float(500 * MB)]]


def test_staleness_after_three_missed_polls_and_a_bar_that_never_goes_back():
    assert not staleness(None, 1.5)
    assert not staleness(2.0, 1.5)
    assert not staleness(4.5, 1.5)
    assert staleness(6.0, 1.5)
    assert at_least(40, 38) == 40 and at_least(40, 41) == 41 and at_least(0, 250) == 100


def test_a_finished_move_is_read_from_metadata_that_shows_the_target_in_the_isr(monkeypatch):
    """Seen on real Kafka 4.1: a broker still showing the move in progress answers replicas = target
    (an added replica is listed) with the old ISR; that view must not freeze "Caught up, joining ISR"
    on a finished move. The verify step asks again until the target is in the ISR."""
    from console.kafka.types import PartitionMetadata, TopicMetadata
    from console.reassignment import poll

    answers = [
        PartitionMetadata(0, 1, (1, 2), (1,)),  # a lagging broker: the move still under way
        PartitionMetadata(0, 1, (1, 2), (1, 2)),  # the finished move
    ]

    class Gateway:
        calls = 0

        def describe_topics(self, names):
            part = answers[min(self.calls, len(answers) - 1)]
            self.calls += 1
            return {"t": TopicMetadata("t", (part,))}

    monkeypatch.setattr(poll, "VERIFY_RETRY_S", 0)
    gw = Gateway()
    parts = poll._settled_replicas(gw, [("t", 0, [1, 2])])
    assert parts[("t", 0)].isr == (1, 2) and gw.calls == 2
    rows = [[1, IN_SYNC], [2, CAUGHT_UP]]
    mark_in_sync(rows, parts[("t", 0)].isr)
    assert rows[1][1] == IN_SYNC


def test_a_cycles_entry_in_one_pass_equals_the_entry_shown_and_its_isr_check():
    """``shown_entry`` (the poller's one pass) = ``live_entry(...).shown(previous)`` and
    ``caught_up`` of its replicas, over brokers down, replicas missing, level, behind and ahead."""
    import random

    from console.reassignment.progress import caught_up, live_entry, shown_entry

    rng = random.Random(19)
    for _ in range(3000):
        brokers = list(range(1, 7))
        original = rng.sample(brokers, rng.randint(1, 3))
        target = rng.sample(brokers, rng.randint(1, 4))
        tp = ("t", rng.randint(0, 3))
        logs = {}
        for b in brokers:
            roll = rng.random()
            if roll < 0.1:
                logs[b] = None  # broker did not answer
            elif roll < 0.2:
                continue  # broker not asked
            else:
                held = {}
                if rng.random() < 0.8:
                    held[tp] = (rng.choice([0, 10, 500, 1000, 1000, 1500]), rng.choice([0, 0, 7]))
                logs[b] = held
        offsets = rng.choice([None, {tp: [0, 100]}, {tp: [5, 5]}])
        previous = rng.choice([0, 30, 100])
        reference = live_entry(tp, original, target, logs, offsets)
        entry, level = shown_entry(tp, original, target, logs, offsets, previous)
        assert entry == reference.shown(previous) and type(entry) is type(reference)
        assert level == caught_up(reference.replicas)
