"""DeleteRecords (API key 21) on the wire, as Kafka 4.1's leaders answer it (ReplicaManager
.deleteRecordsOnLocalLog, Partition.deleteRecordsOnLeader, UnifiedLog.maybeIncrementLogStartOffset),
and what ListOffsets and Fetch answer about the moved log start afterwards."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import DeleteRecordsRequest, DeleteRecordsResponse
from kafka.protocol.producer import ProduceRequest
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from console.kafka.record_read import fetch_request
from console.kafka.topics import list_offsets_request

from .conftest import call

T, P = DeleteRecordsRequest.DeleteRecordsTopic, DeleteRecordsRequest.DeleteRecordsTopic.DeleteRecordsPartition


def address(cluster, node: int) -> str:
    n = cluster.state.brokers[node]
    return f"{n.host}:{n.port}"


def leader_of(cluster, topic: str, partition: int = 0) -> int:
    return cluster.state.topics[topic].partitions[partition].leader


def produce_batch(cluster, topic: str, partition: int, count: int) -> None:
    """One record batch of ``count`` records (so a log start can fall inside a batch)."""
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i in range(count):
        builder.append(timestamp=1_700_000_000_000 + i, key=None, value=f"v{i}".encode(), headers=[])
    builder.close()
    data = ProduceRequest.TopicProduceData
    request = ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout_ms=5000,
        topic_data=[
            data(
                name=topic,
                partition_data=[data.PartitionProduceData(index=partition, records=bytes(builder.buffer()))],
            )
        ],
    )
    answer = call(address(cluster, leader_of(cluster, topic, partition)), request, 9)
    assert answer.responses[0].partition_responses[0].error_code == 0


def delete(
    cluster, node: int, topic: str, offsets: dict[int, int], version: int = 2
) -> list[tuple[int, int, int]]:
    request = DeleteRecordsRequest(
        topics=[T(name=topic, partitions=[P(partition_index=p, offset=o) for p, o in offsets.items()])],
        timeout_ms=5000,
    )
    answer = call(address(cluster, node), request, version, response_cls=DeleteRecordsResponse)
    return [(r.partition_index, r.error_code, r.low_watermark) for t in answer.topics for r in t.partitions]


def earliest(cluster, topic: str, partition: int = 0) -> int:
    answer = call(
        address(cluster, leader_of(cluster, topic, partition)),
        list_offsets_request({topic: [partition]}, -2, "READ_UNCOMMITTED", 5),
        7,
    )
    return answer.topics[0].partitions[0].offset


@pytest.mark.parametrize("version", [0, 1, 2])
def test_it_moves_the_log_start_and_answers_the_low_watermark(cluster, version):
    cluster.create_topic("dr", partitions=1, replication_factor=3)
    produce_batch(cluster, "dr", 0, 10)
    leader = leader_of(cluster, "dr")
    assert delete(cluster, leader, "dr", {0: 4}, version) == [(0, 0, 4)]
    assert earliest(cluster, "dr") == 4
    assert delete(cluster, leader, "dr", {0: 2}, version) == [
        (0, 0, 4)
    ]  # at or below the start: nothing moves
    assert delete(cluster, leader, "dr", {0: -1}, version) == [(0, 0, 10)]  # -1: the high watermark
    assert earliest(cluster, "dr") == 10


def test_a_log_start_inside_a_batch_reads_as_kafka_reads_it(cluster):
    cluster.create_topic("mid", partitions=1)
    produce_batch(cluster, "mid", 0, 10)
    leader = leader_of(cluster, "mid")
    assert delete(cluster, leader, "mid", {0: 6}) == [(0, 0, 6)]
    # below the start: OFFSET_OUT_OF_RANGE, without the bounds
    below = (
        call(address(cluster, leader), fetch_request("mid", [(0, 5, 1 << 20)], 1 << 20), 11)
        .responses[0]
        .partitions[0]
    )
    assert (below.error_code, below.log_start_offset) == (1, -1)
    # at the start: the whole batch holding it comes back (the consumer skips what is below its position)
    at = (
        call(address(cluster, leader), fetch_request("mid", [(0, 6, 1 << 20)], 1 << 20), 11)
        .responses[0]
        .partitions[0]
    )
    batch = MemoryRecords(bytes(at.records)).next_batch()
    assert (at.error_code, at.log_start_offset, at.high_watermark, batch.base_offset) == (0, 6, 10, 0)
    assert [r.offset for r in batch] == list(range(10))


def test_it_refuses_what_kafka_refuses_and_changes_nothing(cluster):
    cluster.create_topic("refuse", partitions=2, replication_factor=2)
    cluster.create_topic("compacted", partitions=1, configs={"cleanup.policy": "compact"})
    produce_batch(cluster, "refuse", 0, 5)
    leader = leader_of(cluster, "refuse")
    follower = next(b for b in cluster.state.topics["refuse"].partitions[0].replicas if b != leader)
    assert delete(cluster, leader, "refuse", {0: 6}) == [(0, 1, -1)]  # above the high watermark
    assert delete(cluster, leader, "refuse", {0: -2}) == [(0, 1, -1)]  # negative, not -1
    assert delete(cluster, follower, "refuse", {0: 2}) == [(0, 6, -1)]  # NOT_LEADER_OR_FOLLOWER
    assert delete(cluster, leader, "refuse", {9: 1}) == [(9, 3, -1)]  # no such partition
    assert delete(cluster, leader, "nope", {0: 1}) == [(0, 3, -1)]  # no such topic
    assert delete(cluster, leader_of(cluster, "compacted"), "compacted", {0: 0}) == [
        (0, 44, -1)
    ]  # POLICY_VIOLATION
    assert earliest(cluster, "refuse") == 0


def test_an_internal_topic_is_refused(cluster):
    cluster.create_topic("__consumer_offsets", partitions=1)
    assert delete(cluster, leader_of(cluster, "__consumer_offsets"), "__consumer_offsets", {0: 0}) == [
        (0, 17, -1)
    ]


def test_whole_segments_below_the_start_leave_every_replica(cluster):
    cluster.create_topic("seg", partitions=1, replication_factor=3, configs={"segment.bytes": "1048576"})
    p = cluster.state.topics["seg"].partitions[0]
    with cluster.state.lock:  # 10 MiB in 1,000 records, on every replica
        p.end_offset = 1000
        p.sizes = {b: 10 * 1048576.0 for b in p.replicas}
    assert delete(cluster, p.leader, "seg", {0: 250}) == [(0, 0, 250)]
    # a quarter of the records: 2.5 MiB, of which the two whole 1 MiB segments are deleted
    assert p.sizes == {b: 8 * 1048576.0 for b in p.replicas}
