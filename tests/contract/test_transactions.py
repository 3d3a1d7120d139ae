"""Transactions (KIP-98, transaction protocol version 1 as librdkafka speaks it) and KIP-664's admin
reads, the same on the sandbox and on a real Kafka 4.1: a confluent-kafka transactional producer
writes to two partitions and commits its group's offsets inside the transaction, a second
transaction is aborted; a read_committed consumer sees only the committed records; ListOffsets and
Fetch answer the last stable offset and the aborted transaction; ListTransactions,
DescribeTransactions and DescribeProducers (kafka-python's protocol classes over its own
connections, as ``kafka-transactions.sh list / describe / describe-producers`` ask) answer the
transaction's state, producer id and epoch, timeout, partitions and the producer's sequence and
open-transaction offset. Only this test's uniquely named topic, transactional id and group are used.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import TopicPartition as KpPartition
from kafka.protocol.admin.transactions import (
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    ListTransactionsRequest,
)
from kafka.protocol.consumer import FetchRequest, ListOffsetsRequest
from kafka.protocol.metadata import FindCoordinatorRequest, MetadataRequest
from kafka.protocol.producer import InitProducerIdRequest, ProduceRequest
from kafka.protocol.producer.transaction import EndTxnRequest
from kafka.record.memory_records import MemoryRecordsBuilder

from bench.raw_clients import KpRaw

from .conftest import eventually

pytestmark = [pytest.mark.contract]

TIMEOUT_MS = 600_000  # far above the test's length (the sandbox's clock runs faster than real time)


def _offsets_partition(group: str) -> int:
    """__consumer_offsets partition of an ASCII group id: Utils.abs(String.hashCode) % 50, as Kafka's
    partitionFor (Utils.abs is Math.abs, with Integer.MIN_VALUE -> 0)."""
    h = 0
    for ch in group:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if h == -(1 << 31) else abs(h)) % 50


class Raw:
    def __init__(self, bootstrap: str) -> None:
        self.kp = KpRaw(bootstrap)

    def send(self, request: Any, node: int | None = None) -> Any:
        return self.kp.send(request, node)

    def brokers(self) -> list[int]:
        return sorted(b.node_id for b in self.send(MetadataRequest(topics=[])).brokers)

    def leader(self, topic: str, index: int) -> int:
        answer = self.send(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)]))
        return next(p.leader_id for t in answer.topics if t.name == topic for p in t.partitions if p.partition_index == index)  # fmt: skip

    def coordinator(self, tid: str) -> int:
        answer = self.send(FindCoordinatorRequest(key=tid, key_type=1, coordinator_keys=[tid]))
        coordinators = getattr(answer, "coordinators", None)
        return coordinators[0].node_id if coordinators else answer.node_id

    def describe(self, tid: str) -> Any:
        answer = self.send(DescribeTransactionsRequest(transactional_ids=[tid]), self.coordinator(tid))
        return answer.transaction_states[0]

    def listed(self, code: int = 0, **filters: Any) -> dict[str, tuple[int, str]]:
        """ListTransactions asked of every broker (each lists the ids it coordinates), merged; every
        answer must carry ``code``."""
        out: dict[str, tuple[int, str]] = {}
        for b in self.brokers():
            req = ListTransactionsRequest(
                state_filters=filters.get("states", []),
                producer_id_filters=filters.get("pids", []),
                duration_filter=-1,
                transactional_id_pattern=filters.get("pattern"),
            )
            answer = self.send(req, b)
            assert answer.error_code == code
            out.update(
                {s.transactional_id: (s.producer_id, s.transaction_state) for s in answer.transaction_states}
            )
        return out

    def producers(self, topic: str, index: int) -> dict[int, Any]:
        req = DescribeProducersRequest(
            topics=[DescribeProducersRequest.TopicRequest(name=topic, partition_indexes=[index])]
        )
        part = self.send(req, self.leader(topic, index)).topics[0].partitions[0]
        assert part.error_code == 0
        return {s.producer_id: s for s in part.active_producers}

    def latest(self, topic: str, index: int, isolation: int) -> int:
        lo = ListOffsetsRequest
        req = lo(
            replica_id=-1,
            isolation_level=isolation,
            topics=[
                lo.ListOffsetsTopic(
                    name=topic,
                    partitions=[
                        lo.ListOffsetsTopic.ListOffsetsPartition(partition_index=index, timestamp=-1)
                    ],
                )
            ],  # fmt: skip
        )
        part = self.send(req, self.leader(topic, index)).topics[0].partitions[0]
        assert part.error_code == 0
        return part.offset

    def fetch_committed(self, topic: str, index: int) -> Any:
        """A READ_COMMITTED Fetch from offset 0 (by topic id: kafka-python asks with v13+)."""
        meta = self.send(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)]))
        topic_id = next(t.topic_id for t in meta.topics if t.name == topic)
        fr = FetchRequest
        req = fr(
            replica_id=-1,
            max_wait_ms=0,
            min_bytes=1,
            max_bytes=1 << 20,
            isolation_level=1,
            topics=[
                fr.FetchTopic(
                    topic=topic,
                    topic_id=topic_id,
                    partitions=[
                        fr.FetchTopic.FetchPartition(
                            partition=index, fetch_offset=0, partition_max_bytes=1 << 20
                        )
                    ],
                )
            ],  # fmt: skip
        )
        part = self.send(req, self.leader(topic, index)).responses[0].partitions[0]
        assert part.error_code == 0
        return part


def _consume(endpoints: Any, topic: str, isolation: str, expect: int) -> list[str]:
    cons = Consumer(
        endpoints.client_config(
            **{
                "group.id": f"ct-txn-reader-{uuid.uuid4().hex[:8]}",
                "isolation.level": isolation,
                "enable.auto.commit": False,
            }
        )  # fmt: skip
    )
    cons.assign([TopicPartition(topic, i, 0) for i in range(2)])
    got: list[str] = []
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline and len(got) < expect:
            m = cons.poll(0.2)
            if m is not None and not m.error():
                got.append(m.value().decode())
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            m = cons.poll(0.1)
            if m is not None and not m.error():
                got.append(m.value().decode())
    finally:
        cons.close()
    return sorted(got)


def test_transactions_commit_abort_and_the_admin_reads(endpoints: Any, topics: Any) -> None:
    topic = topics.create(partitions=2, replication_factor=3)
    tid, group = f"ct-txn-{uuid.uuid4().hex[:10]}", f"ct-txn-group-{uuid.uuid4().hex[:8]}"
    raw = Raw(endpoints.bootstrap_servers)
    producer = Producer(
        endpoints.client_config(**{"transactional.id": tid, "transaction.timeout.ms": TIMEOUT_MS})
    )
    producer.init_transactions(30)
    empty = raw.describe(tid)
    assert (empty.error_code, empty.transaction_state, empty.producer_epoch, list(empty.topics)) == (
        0,
        "Empty",
        0,
        [],
    )
    pid = empty.producer_id
    assert empty.transaction_timeout_ms == TIMEOUT_MS
    assert raw.listed(pids=[pid]) == {tid: (pid, "Empty")}
    # v2's id pattern matches the whole id ("" is no filter); one that does not compile is refused
    assert raw.listed(pattern=tid) == raw.listed(pattern=tid[:-3] + ".*") == {tid: (pid, "Empty")}
    assert tid not in raw.listed(pattern=tid[:-3])
    assert tid in raw.listed(pattern="")
    assert raw.listed(code=128, pattern="[") == {}  # INVALID_REGULAR_EXPRESSION
    assert raw.describe(tid + "-never-used").error_code == 105  # TRANSACTIONAL_ID_NOT_FOUND

    producer.begin_transaction()
    for i in range(5):
        producer.produce(topic, value=f"committed-{i}".encode(), partition=i % 2)
    member = Consumer(endpoints.client_config(**{"group.id": group}))
    producer.send_offsets_to_transaction([TopicPartition(topic, 0, 2)], member.consumer_group_metadata(), 30)
    producer.flush(30)

    ongoing = raw.describe(tid)
    assert (ongoing.transaction_state, ongoing.producer_id, ongoing.producer_epoch) == ("Ongoing", pid, 0)
    assert ongoing.transaction_start_time_ms > 0
    assert {(t.topic, tuple(sorted(t.partitions))) for t in ongoing.topics} == {
        (topic, (0, 1)),
        ("__consumer_offsets", (_offsets_partition(group),)),
    }
    assert raw.listed(pids=[pid]) == {tid: (pid, "Ongoing")}
    assert tid in raw.listed(states=["Ongoing"])
    state = raw.producers(topic, 0)[pid]
    # three records on partition 0 (sequences 0-2), the transaction opened at offset 0, no marker yet
    assert (state.producer_epoch, state.last_sequence, state.current_txn_start_offset, state.coordinator_epoch) == (0, 2, 0, -1)  # fmt: skip
    assert state.last_timestamp > 0
    assert raw.latest(topic, 0, 1) == 0 and raw.latest(topic, 0, 0) == 3  # LSO held at the open transaction
    # kafka-python's KIP-664 admin calls (what the console can use: confluent-kafka's AdminClient has none)
    admin = raw.kp.admin
    listing = [t for ts in admin.list_transactions(producer_id_filters=[pid]).values() for t in ts]
    assert [(t.transactional_id, t.producer_id, t.state.value) for t in listing] == [(tid, pid, "Ongoing")]
    description = admin.describe_transactions([tid])[tid]
    assert (description.state.value, description.producer_id, description.coordinator_id) == ("Ongoing", pid, raw.coordinator(tid))  # fmt: skip
    assert {(tp.topic, tp.partition) for tp in description.topic_partitions} == {
        (topic, 0),
        (topic, 1),
        ("__consumer_offsets", _offsets_partition(group)),
    }
    producers = admin.describe_producers([KpPartition(topic, 1)])[KpPartition(topic, 1)].active_producers
    assert [(s.producer_id, s.last_sequence, s.current_transaction_start_offset) for s in producers] == [
        (pid, 1, 0)
    ]

    producer.commit_transaction(30)
    # commit_transaction returns once PrepareCommit is written; Kafka writes the markers after
    done = eventually(lambda: raw.describe(tid), lambda d: d.transaction_state == "CompleteCommit")
    assert (done.transaction_state, done.producer_epoch, list(done.topics)) == ("CompleteCommit", 0, [])
    assert tid not in raw.listed(states=["Ongoing"])
    state = eventually(lambda: raw.producers(topic, 0)[pid], lambda s: s.current_txn_start_offset == -1)
    assert state.current_txn_start_offset == -1 and state.coordinator_epoch >= 0
    assert raw.latest(topic, 0, 1) == raw.latest(topic, 0, 0) == 4  # three records and the COMMIT marker
    assert (
        eventually(lambda: member.committed([TopicPartition(topic, 0)], 10)[0].offset, lambda o: o == 2) == 2
    )
    member.close()

    producer.begin_transaction()
    for i in range(4):
        producer.produce(topic, value=f"aborted-{i}".encode(), partition=i % 2)
    producer.flush(30)
    producer.abort_transaction(30)
    assert eventually(lambda: raw.describe(tid), lambda d: d.transaction_state == "CompleteAbort").transaction_state == "CompleteAbort"  # fmt: skip
    part = eventually(lambda: raw.fetch_committed(topic, 0), lambda p: p.last_stable_offset == 7)
    assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(pid, 4)]
    assert part.last_stable_offset == part.high_watermark == 7

    committed = [f"committed-{i}" for i in range(5)]
    assert _consume(endpoints, topic, "read_committed", 5) == committed
    assert _consume(endpoints, topic, "read_uncommitted", 9) == sorted(
        committed + [f"aborted-{i}" for i in range(4)]
    )


def test_a_transactional_batch_for_a_partition_not_added(endpoints: Any, topics: Any) -> None:
    """KIP-890's verification, by Produce version: v≤10 INVALID_TXN_STATE with Kafka's words, v11
    TRANSACTION_ABORTABLE, v12+ (transaction version 2 finalized) adds the partition itself."""
    topic = topics.create(partitions=1, replication_factor=3)
    raw = Raw(endpoints.bootstrap_servers)
    leader = raw.leader(topic, 0)
    pr = ProduceRequest
    answers = {}
    for version in (9, 11, 12):
        tid = f"ct-txn-verify-{uuid.uuid4().hex[:10]}"
        coordinator = raw.coordinator(tid)
        init = raw.send(
            InitProducerIdRequest(transactional_id=tid, transaction_timeout_ms=TIMEOUT_MS), coordinator
        )
        assert (init.error_code, init.producer_epoch) == (0, 0)
        batch = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 16, transactional=True,
                                     producer_id=init.producer_id, producer_epoch=0, base_sequence=0)  # fmt: skip
        batch.append(timestamp=None, key=None, value=b"verify", headers=[])
        batch.close()
        req = pr(
            version=version,
            transactional_id=tid,
            acks=-1,
            timeout_ms=10_000,
            topic_data=[
                pr.TopicProduceData(
                    name=topic,
                    partition_data=[
                        pr.TopicProduceData.PartitionProduceData(index=0, records=bytes(batch.buffer()))
                    ],
                )
            ],  # fmt: skip
        )
        part = raw.send(req, leader).responses[0].partition_responses[0]
        answers[version] = (part.error_code, part.error_message)
        if version == 12:
            described = raw.describe(tid)
            assert described.transaction_state == "Ongoing"
            assert [(t.topic, list(t.partitions)) for t in described.topics] == [(topic, [0])]
            end = EndTxnRequest(version=5, transactional_id=tid, producer_id=init.producer_id, producer_epoch=0, committed=False)  # fmt: skip
            ended = raw.send(end, coordinator)
            assert (ended.error_code, ended.producer_id, ended.producer_epoch) == (0, init.producer_id, 1)
    assert answers == {9: (48, "Partition was not added to the transaction"), 11: (120, None), 12: (0, None)}
