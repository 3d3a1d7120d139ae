"""Transactions in the sandbox (KIP-98 with transaction protocol version 1, KIP-664's admin APIs):
a confluent-kafka transactional producer and read_committed consumers against the coordinator and
partition state of ``sandbox.transactions``; the coordinator's refusals with Kafka 4.1's codes over
the wire; the timeout abort on the virtual clock; a hanging transaction found by comparing
DescribeProducers with ListTransactions and closed by WriteTxnMarkers, as ``kafka-transactions.sh
find-hanging`` / ``abort`` do. The cluster's clock is stopped (``speed=0``): only ``advance`` ages
a transaction.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.protocol.admin.transactions import (
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    ListTransactionsRequest,
)
from kafka.protocol.consumer import FetchRequest, ListOffsetsRequest
from kafka.protocol.metadata import FindCoordinatorRequest
from kafka.protocol.producer import InitProducerIdRequest, ProduceRequest
from kafka.protocol.producer.transaction import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    TxnOffsetCommitRequest,
    WriteTxnMarkersRequest,
)
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from sandbox import SandboxCluster, control, transactions
from sandbox.testing import hanging_transaction, running_sandbox
from tests.sandbox.conftest import call

TOPIC = "txn-t"


@pytest.fixture(scope="module")
def world() -> Iterator[SandboxCluster]:
    """3 brokers, a stopped clock, topic ``txn-t`` (2 partitions, RF 3)."""
    with running_sandbox(brokers=3, controllers=1, speed=0) as c:
        admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
        for f in admin.create_topics([NewTopic(TOPIC, 2, 3)]).values():
            f.result()
        yield c


def _node(c: SandboxCluster, node_id: int) -> str:
    n = c.state.brokers[node_id]
    return f"{n.host}:{n.port}"


def _txn_coordinator(c: SandboxCluster, tid: str) -> str:
    answer = call(c.bootstrap_servers.split(",")[0], FindCoordinatorRequest(key=tid, key_type=1), 3)
    assert answer.error_code == 0
    return f"{answer.host}:{answer.port}"


def _leader(c: SandboxCluster, topic: str, index: int) -> str:
    return _node(c, c.state.topics[topic].partitions[index].leader)


def _producer(c: SandboxCluster, tid: str, **extra: Any) -> Producer:
    p = Producer({"bootstrap.servers": c.bootstrap_servers, "transactional.id": tid, "linger.ms": 0, **extra})
    p.init_transactions(10)
    return p


def _consume(c: SandboxCluster, topic: str, partitions: int, isolation: str, expect: int) -> list[str]:
    cons = Consumer(
        {
            "bootstrap.servers": c.bootstrap_servers,
            "group.id": f"reader-{isolation}-{time.monotonic_ns()}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    cons.assign([TopicPartition(topic, i, 0) for i in range(partitions)])
    got: list[str] = []
    deadline = time.monotonic() + 10
    try:
        while time.monotonic() < deadline and len(got) < expect:
            m = cons.poll(0.2)
            if m is not None and not m.error():
                got.append(m.value().decode())
        end = time.monotonic() + 0.5  # nothing more arrives
        while time.monotonic() < end:
            m = cons.poll(0.1)
            if m is not None and not m.error():
                got.append(m.value().decode())
    finally:
        cons.close()
    return sorted(got)


def _describe(c: SandboxCluster, tid: str) -> Any:
    answer = call(_txn_coordinator(c, tid), DescribeTransactionsRequest(transactional_ids=[tid]), 0)
    return answer.transaction_states[0]


def _list(c: SandboxCluster, version: int = 1, **filters: Any) -> dict[str, tuple[int, str]]:
    """ListTransactions asked of every broker (as the admin client does), merged."""
    out: dict[str, tuple[int, str]] = {}
    for b in c.state.live_brokers():
        req = ListTransactionsRequest(
            state_filters=filters.get("states", []),
            producer_id_filters=filters.get("pids", []),
            duration_filter=filters.get("duration", -1),
            transactional_id_pattern=filters.get("pattern"),
        )
        answer = call(_node(c, b), req, version)
        assert answer.error_code == 0
        out.update(
            {s.transactional_id: (s.producer_id, s.transaction_state) for s in answer.transaction_states}
        )
    return out


def _producers(c: SandboxCluster, topic: str, index: int) -> list[Any]:
    req = DescribeProducersRequest(
        topics=[DescribeProducersRequest.TopicRequest(name=topic, partition_indexes=[index])]
    )
    part = call(_leader(c, topic, index), req, 0).topics[0].partitions[0]
    assert part.error_code == 0
    return part.active_producers


def _offsets(c: SandboxCluster, topic: str, index: int, isolation: int, timestamp: int = -1) -> int:
    lo = ListOffsetsRequest
    req = lo(
        replica_id=-1,
        isolation_level=isolation,
        topics=[
            lo.ListOffsetsTopic(
                name=topic,
                partitions=[
                    lo.ListOffsetsTopic.ListOffsetsPartition(partition_index=index, timestamp=timestamp)
                ],
            )
        ],  # fmt: skip
    )
    part = call(_leader(c, topic, index), req, 5).topics[0].partitions[0]
    assert part.error_code == 0
    return part.offset


def _fetch(c: SandboxCluster, topic: str, index: int, isolation: int) -> Any:
    fr = FetchRequest
    req = fr(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=isolation,
        topics=[
            fr.FetchTopic(
                topic=topic,
                partitions=[
                    fr.FetchTopic.FetchPartition(partition=index, fetch_offset=0, partition_max_bytes=1 << 20)
                ],
            )
        ],  # fmt: skip
    )
    return call(_leader(c, topic, index), req, 11).responses[0].partitions[0]


def _txn_batch(pid: int, epoch: int, value: bytes = b"raw") -> bytes:
    b = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 16, transactional=True,
                             producer_id=pid, producer_epoch=epoch, base_sequence=0)  # fmt: skip
    b.append(timestamp=None, key=None, value=value, headers=[])
    b.close()
    return bytes(b.buffer())


def _produce(
    c: SandboxCluster, tid: str | None, topic: str, index: int, records: bytes, version: int = 9
) -> Any:
    pr = ProduceRequest
    req = pr(
        transactional_id=tid,
        acks=-1,
        timeout_ms=5000,
        topic_data=[
            pr.TopicProduceData(
                name=topic,
                partition_data=[pr.TopicProduceData.PartitionProduceData(index=index, records=records)],
            )
        ],  # fmt: skip
    )
    return call(_leader(c, topic, index), req, version).responses[0].partition_responses[0]


def _init(c: SandboxCluster, tid: str, timeout_ms: int = 60_000, version: int = 4, **kw: Any) -> Any:
    req = InitProducerIdRequest(transactional_id=tid, transaction_timeout_ms=timeout_ms, **kw)
    return call(_txn_coordinator(c, tid), req, version)


def _add(c: SandboxCluster, tid: str, pid: int, epoch: int, parts: list[tuple[str, int]], version: int = 3) -> dict[tuple[str, int], int]:  # fmt: skip
    ar = AddPartitionsToTxnRequest
    by_topic: dict[str, list[int]] = {}
    for t, i in parts:
        by_topic.setdefault(t, []).append(i)
    req = ar(
        v3_and_below_transactional_id=tid,
        v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[ar.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
    )
    answer = call(_txn_coordinator(c, tid), req, version)
    return {
        (t.name, r.partition_index): r.partition_error_code
        for t in answer.results_by_topic_v3_and_below
        for r in t.results_by_partition
    }


def _end(c: SandboxCluster, tid: str, pid: int, epoch: int, commit: bool, version: int = 3) -> int:
    req = EndTxnRequest(transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit)
    return call(_txn_coordinator(c, tid), req, version).error_code


def test_a_committed_transaction_is_read_and_an_aborted_one_skipped(world: SandboxCluster) -> None:
    p = _producer(world, "tx-visible")
    p.begin_transaction()
    for i in range(6):
        p.produce(TOPIC, value=f"committed-{i}".encode(), partition=i % 2)
    group = Consumer({"bootstrap.servers": world.bootstrap_servers, "group.id": "tx-group"})
    p.send_offsets_to_transaction([TopicPartition(TOPIC, 0, 3)], group.consumer_group_metadata(), 10)
    p.flush()
    # while it is open: the records are above the last stable offset, the group's offset is pending
    assert _offsets(world, TOPIC, 0, 1) < _offsets(world, TOPIC, 0, 0)
    described = _describe(world, "tx-visible")
    assert described.transaction_state == "Ongoing"
    assert {(t.topic, tuple(t.partitions)) for t in described.topics} == {
        (TOPIC, (0, 1)),
        ("__consumer_offsets", (transactions.offsets_partition("tx-group"),)),
    }
    p.commit_transaction(10)
    assert group.committed([TopicPartition(TOPIC, 0)], 5)[0].offset == 3
    group.close()
    assert _offsets(world, TOPIC, 0, 1) == _offsets(world, TOPIC, 0, 0)

    p.begin_transaction()
    for i in range(4):
        p.produce(TOPIC, value=f"aborted-{i}".encode(), partition=i % 2)
    p.flush()
    p.abort_transaction(10)
    assert _describe(world, "tx-visible").transaction_state == "CompleteAbort"

    committed = [f"committed-{i}" for i in range(6)]
    assert _consume(world, TOPIC, 2, "read_committed", 6) == committed
    assert _consume(world, TOPIC, 2, "read_uncommitted", 10) == sorted(
        committed + [f"aborted-{i}" for i in range(4)]
    )
    # the aborted transaction is named to a READ_COMMITTED fetch only; the markers are control batches
    pid = _describe(world, "tx-visible").producer_id
    part = _fetch(world, TOPIC, 0, 1)
    assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(pid, 4)]
    assert _fetch(world, TOPIC, 0, 0).aborted_transactions is None
    batches = MemoryRecords(part.records)
    kinds = []
    while (b := batches.next_batch()) is not None:
        kinds.append((b.base_offset, b.is_transactional, b.is_control_batch))
    assert kinds == [
        (0, True, False),
        (3, True, True),
        (4, True, False),
        (6, True, True),
    ]  # data, COMMIT, data, ABORT


def test_the_coordinator_refuses_as_kafka_does(world: SandboxCluster) -> None:
    assert _init(world, "tx-refuse", timeout_ms=0).error_code == 50  # INVALID_TRANSACTION_TIMEOUT
    assert _init(world, "tx-refuse", timeout_ms=900_001).error_code == 50
    assert _init(world, "", timeout_ms=1000).error_code == 42  # INVALID_REQUEST
    first = _init(world, "tx-refuse")
    assert (first.error_code, first.producer_epoch) == (0, 0)
    pid = first.producer_id
    assert _init(world, "tx-refuse").producer_epoch == 1  # the epoch is bumped, the id kept
    assert _init(world, "tx-refuse").producer_id == pid
    assert _end(world, "tx-refuse", pid, 2, True) == 48  # INVALID_TXN_STATE: nothing to end
    assert _add(world, "tx-refuse", pid + 77, 2, [(TOPIC, 0)]) == {
        (TOPIC, 0): 49
    }  # INVALID_PRODUCER_ID_MAPPING
    assert _add(world, "tx-refuse", pid, 1, [(TOPIC, 0)]) == {(TOPIC, 0): 90}  # PRODUCER_FENCED
    assert _add(world, "tx-refuse", pid, 1, [(TOPIC, 0)], version=1) == {
        (TOPIC, 0): 47
    }  # older: INVALID_PRODUCER_EPOCH
    assert _add(world, "tx-refuse", pid, 2, [(TOPIC, 0), ("no-such-topic", 0)]) == {
        (TOPIC, 0): 55,  # OPERATION_NOT_ATTEMPTED
        ("no-such-topic", 0): 3,
    }
    # a transactional batch for a partition not added: Kafka's verification refuses it
    refused = _produce(world, "tx-refuse", TOPIC, 1, _txn_batch(pid, 2))
    assert (refused.error_code, refused.error_message) == (48, "Partition was not added to the transaction")
    assert _add(world, "tx-refuse", pid, 2, [(TOPIC, 1)]) == {(TOPIC, 1): 0}
    assert _produce(world, None, TOPIC, 1, _txn_batch(pid, 2)).error_code == 53  # no transactional id
    assert _produce(world, "tx-refuse", TOPIC, 1, _txn_batch(pid, 2)).error_code == 0
    assert _end(world, "tx-refuse", pid, 2, False) == 0
    assert _end(world, "tx-refuse", pid, 2, False) == 0  # a retried abort
    assert _end(world, "tx-refuse", pid, 2, True) == 48
    # a new InitProducerId while a transaction is open aborts it first (CONCURRENT_TRANSACTIONS), then bumps again
    assert _add(world, "tx-refuse", pid, 2, [(TOPIC, 1)]) == {(TOPIC, 1): 0}
    assert _produce(world, "tx-refuse", TOPIC, 1, _txn_batch(pid, 2)).error_code == 0
    assert _init(world, "tx-refuse").error_code == 51
    assert _describe(world, "tx-refuse").transaction_state == "CompleteAbort"
    again = _init(world, "tx-refuse")
    assert (again.error_code, again.producer_id, again.producer_epoch) == (0, pid, 4)
    assert _end(world, "tx-refuse", pid, 2, True) == 90  # the fenced epoch
    assert _end(world, "tx-refuse", pid, 2, True, version=1) == 47
    # TxnOffsetCommit needs AddOffsetsToTxn first
    tc = TxnOffsetCommitRequest
    req = tc(transactional_id="tx-refuse", group_id="tx-g2", producer_id=pid, producer_epoch=4,
             topics=[tc.TxnOffsetCommitRequestTopic(name=TOPIC, partitions=[tc.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=1)])])  # fmt: skip
    group_coordinator = call(
        world.bootstrap_servers.split(",")[0], FindCoordinatorRequest(key="tx-g2", key_type=0), 3
    )
    where = f"{group_coordinator.host}:{group_coordinator.port}"
    assert call(where, req, 3).topics[0].partitions[0].error_code == 48
    add = AddOffsetsToTxnRequest(
        transactional_id="tx-refuse", producer_id=pid, producer_epoch=4, group_id="tx-g2"
    )
    assert call(_txn_coordinator(world, "tx-refuse"), add, 3).error_code == 0
    assert call(where, req, 3).topics[0].partitions[0].error_code == 0
    assert _end(world, "tx-refuse", pid, 4, True) == 0
    assert world.state.groups["tx-g2"].offsets[(TOPIC, 0)] == 1
    # a broker that is not the coordinator says so
    other = next(
        b for b in world.state.live_brokers() if _node(world, b) != _txn_coordinator(world, "tx-refuse")
    )
    req = InitProducerIdRequest(transactional_id="tx-refuse", transaction_timeout_ms=1000)
    assert call(_node(world, other), req, 4).error_code == 16


def test_an_open_transaction_older_than_its_timeout_is_aborted(world: SandboxCluster) -> None:
    p = _producer(world, "tx-timeout", **{"transaction.timeout.ms": 5000})
    p.begin_transaction()
    p.produce(TOPIC, value=b"too-slow", partition=1)
    p.flush()
    before = _describe(world, "tx-timeout")
    assert (before.transaction_state, before.transaction_timeout_ms) == ("Ongoing", 5000)
    assert _offsets(world, TOPIC, 1, 1) < _offsets(world, TOPIC, 1, 0)
    world.advance(4.0)
    assert _describe(world, "tx-timeout").transaction_state == "Ongoing"  # not yet
    world.advance(1.5)
    after = _describe(world, "tx-timeout")
    assert (after.transaction_state, after.producer_epoch) == ("CompleteAbort", before.producer_epoch + 1)
    assert _offsets(world, TOPIC, 1, 1) == _offsets(world, TOPIC, 1, 0)
    with pytest.raises(KafkaException):
        p.commit_transaction(10)  # the producer was fenced


def test_list_transactions_filters(world: SandboxCluster) -> None:
    ongoing = _init(world, "tx-list-a")
    _add(world, "tx-list-a", ongoing.producer_id, ongoing.producer_epoch, [(TOPIC, 0)])
    _init(world, "tx-list-b")
    listed = _list(world)
    assert listed["tx-list-a"] == (ongoing.producer_id, "Ongoing")
    assert listed["tx-list-b"][1] == "Empty"
    assert set(_list(world, states=["Ongoing"])) >= {"tx-list-a"}
    assert "tx-list-b" not in _list(world, states=["Ongoing"])
    assert set(_list(world, pids=[ongoing.producer_id])) == {"tx-list-a"}
    assert set(_list(world, version=2, pattern="tx-list-.*")) == {"tx-list-a", "tx-list-b"}
    assert "tx-list-a" not in _list(world, duration=60_000, states=["Ongoing"])
    world.advance(30.0)
    assert "tx-list-a" in _list(world, duration=20_000, states=["Ongoing"])
    answer = call(
        _node(world, 1), ListTransactionsRequest(state_filters=["Nonsense"], producer_id_filters=[]), 0
    )
    assert list(answer.unknown_state_filters) == ["Nonsense"]
    _end(world, "tx-list-a", ongoing.producer_id, ongoing.producer_epoch, False)
    unknown = _describe(world, "tx-never-seen")
    assert unknown.error_code == 105  # TRANSACTIONAL_ID_NOT_FOUND


def test_a_hanging_transaction_is_found_and_aborted(world: SandboxCluster) -> None:
    hung = hanging_transaction(world, TOPIC, 0, records=2)
    hw = _offsets(world, TOPIC, 0, 0)
    assert _offsets(world, TOPIC, 0, 1) == hung["start_offset"]  # the LSO is stuck behind it
    producers = {s.producer_id: s for s in _producers(world, TOPIC, 0)}
    state = producers[hung["producer_id"]]
    assert (state.producer_epoch, state.current_txn_start_offset, state.coordinator_epoch) == (0, hung["start_offset"], -1)  # fmt: skip
    # find-hanging: an open transaction on the partition whose producer no coordinator lists
    open_here = {pid for pid, s in producers.items() if s.current_txn_start_offset >= 0}
    listed = {pid for pid, _ in _list(world).values()}
    assert hung["producer_id"] in open_here - listed
    # abort: WriteTxnMarkers to the partition leader with the producer's epoch and coordinator epoch
    wm = WriteTxnMarkersRequest
    req = wm(markers=[wm.WritableTxnMarker(producer_id=hung["producer_id"], producer_epoch=0, transaction_result=False,
                                           topics=[wm.WritableTxnMarker.WritableTxnMarkerTopic(name=TOPIC, partition_indexes=[0])],
                                           coordinator_epoch=state.coordinator_epoch)])  # fmt: skip
    assert call(_leader(world, TOPIC, 1), req, 1).markers[0].topics[0].partitions[0].error_code in (0, 6)
    answer = call(_leader(world, TOPIC, 0), req, 1)
    assert answer.markers[0].topics[0].partitions[0].error_code == 0
    assert _offsets(world, TOPIC, 0, 1) == _offsets(world, TOPIC, 0, 0) == hw + 1
    after = {s.producer_id: s for s in _producers(world, TOPIC, 0)}[hung["producer_id"]]
    assert after.current_txn_start_offset == -1
    part = _fetch(world, TOPIC, 0, 1)  # READ_COMMITTED: the hanging records are an aborted transaction now
    assert (hung["producer_id"], hung["start_offset"]) in [
        (a.producer_id, a.first_offset) for a in part.aborted_transactions
    ]
    assert part.last_stable_offset == part.high_watermark == hw + 1


def test_the_control_socket_makes_a_hanging_transaction() -> None:
    with running_sandbox(brokers=1, controllers=1, speed=0) as c:
        admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
        admin.create_topics([NewTopic("hang", 1, 1)])["hang"].result()
        server = control.ControlServer(c).start()
        try:
            before = time.time() * 1000
            answer = control.send(server.address, "hang-txn", ["hang", 0, 3, 1_200_000])
            assert answer["ok"] and answer["start_offset"] == 0
            assert _offsets(c, "hang", 0, 1) == 0 and _offsets(c, "hang", 0, 0) == 3
            # a lookup by time finds them for READ_UNCOMMITTED only (Kafka bounds it by the LSO)
            assert _offsets(c, "hang", 0, 0, timestamp=0) == 0
            assert _offsets(c, "hang", 0, 1, timestamp=0) == -1
            (state,) = _producers(c, "hang", 0)  # 20 minutes old: find-hanging's defaults flag it
            assert (state.producer_id, state.last_sequence) == (answer["producer_id"], 2)
            assert before - 1_200_000 - 5_000 < state.last_timestamp <= time.time() * 1000 - 1_200_000
            assert control.send(server.address, "hang-txn", ["hang", 5])["ok"] is False
        finally:
            server.stop()


def test_kafka_python_transactions_and_read_committed(world: SandboxCluster) -> None:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KpPartition

    admin = AdminClient({"bootstrap.servers": world.bootstrap_servers})
    admin.create_topics([NewTopic("txn-kp", 2, 3)])["txn-kp"].result()
    producer = KafkaProducer(bootstrap_servers=world.bootstrap_servers, transactional_id="tx-kafka-python")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send("txn-kp", b"kp-committed-0", partition=0)
        producer.send("txn-kp", b"kp-committed-1", partition=1)
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send("txn-kp", b"kp-aborted", partition=0)
        producer.flush()
        producer.abort_transaction()
    finally:
        producer.close()
    seen = {}
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = KafkaConsumer(bootstrap_servers=world.bootstrap_servers, isolation_level=isolation,
                                 auto_offset_reset="earliest", consumer_timeout_ms=1500)  # fmt: skip
        consumer.assign([KpPartition("txn-kp", 0), KpPartition("txn-kp", 1)])
        seen[isolation] = sorted(m.value.decode() for m in consumer)
        consumer.close()
    assert seen["read_committed"] == ["kp-committed-0", "kp-committed-1"]
    assert seen["read_uncommitted"] == ["kp-aborted", "kp-committed-0", "kp-committed-1"]


def test_the_group_partition_is_kafkas() -> None:
    # Java: "hello".hashCode() == 99162322; "polygenelubricants".hashCode() == Integer.MIN_VALUE
    assert transactions.java_hash("hello") == 99162322
    assert transactions.offsets_partition("hello") == 99162322 % 50
    assert transactions.java_hash("polygenelubricants") == -(1 << 31)
    assert transactions.offsets_partition("polygenelubricants") == 0  # Utils.abs(MIN_VALUE) is 0
    negative = transactions.java_hash("tx-group-negative")
    assert negative < 0 and transactions.offsets_partition("tx-group-negative") == -negative % 50


def test_a_transaction_version_2_produce_adds_its_partition(world: SandboxCluster) -> None:
    # Kafka 4.1 with transaction.version 2 finalized: a Produce of v12+ adds the partition itself
    init = _init(world, "tx-tv2")
    pid, epoch = init.producer_id, init.producer_epoch
    assert _produce(world, "tx-tv2", TOPIC, 0, _txn_batch(pid, epoch), version=10).error_code == 48
    assert (
        _produce(world, "tx-tv2", TOPIC, 0, _txn_batch(pid, epoch), version=11).error_code == 120
    )  # TRANSACTION_ABORTABLE
    assert _produce(world, "tx-tv2", TOPIC, 0, _txn_batch(pid, epoch), version=12).error_code == 0
    described = _describe(world, "tx-tv2")
    assert described.transaction_state == "Ongoing"
    assert [(t.topic, list(t.partitions)) for t in described.topics] == [(TOPIC, [0])]
    # EndTxn v5 (TV2) bumps the epoch at the end and answers it
    req = EndTxnRequest(transactional_id="tx-tv2", producer_id=pid, producer_epoch=epoch, committed=True)
    answer = call(_txn_coordinator(world, "tx-tv2"), req, 5)
    assert (answer.error_code, answer.producer_id, answer.producer_epoch) == (0, pid, epoch + 1)
    assert _describe(world, "tx-tv2").transaction_state == "CompleteCommit"
