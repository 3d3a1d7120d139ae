"""Progress arithmetic on DescribeLogDirs answers shaped as the gateway returns them (KIP-179 states)."""

from __future__ import annotations

from console.kafka import KafkaOperationError, TopicPartition
from console.kafka.types import LogDirInfo, ReplicaLogInfo
from console.reassignment.progress import (
    IN_SYNC,
    NOT_HOSTED,
    UNKNOWN_BROKER,
    UNKNOWN_PARTITION,
    flatten_logs,
    partition_progress,
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
    prog = partition_progress(("orders", 0), [1, 2], [2, 4, 5, 6], True, logs)
    states = {r["broker"]: r["status"] for r in prog.replicas}
    assert states[2] == IN_SYNC
    assert states[4] == "Behind: ~600 messages / 6.0 MB"
    assert states[5] == NOT_HOSTED
    assert states[6] == UNKNOWN_BROKER
    assert (prog.bytes_total, prog.bytes_done) == (3 * 10 * MB, 4 * MB)  # three new replicas copy 10 MB each


def test_a_partition_no_broker_hosts_is_unknown():
    logs = flatten_logs({1: (_logdir("/a", {}),), 2: (_logdir("/a", {}),)})
    prog = partition_progress(("gone", 3), [1], [2], True, logs)
    assert [r["status"] for r in prog.replicas] == [UNKNOWN_PARTITION]
    assert not prog.known
