"""Transactions' APIs: the producer's (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
TxnOffsetCommit, EndTxn), the partition leader's WriteTxnMarkers, and KIP-664's admin reads
(ListTransactions, DescribeTransactions, DescribeProducers).

The rules are ``sandbox.transactions``'; this module decodes, checks who is asked (the coordinator
of an id or group is the broker FindCoordinator names, a partition's requests go to its leader)
and answers with Kafka 4.1's versions and error codes. No authorizer, as everywhere in the sandbox:
Kafka checks TRANSACTIONAL_ID WRITE/DESCRIBE, CLUSTER_ACTION for WriteTxnMarkers.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin.transactions import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse
from kafka.protocol.producer.transaction import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)

from sandbox import transactions as tx
from sandbox.apis import RequestContext, api
from sandbox.handlers.coordinator import coordinator
from sandbox.state import ClusterState

GROUP_METADATA_TOPIC = "__consumer_offsets"


def _old_fenced(code: int, version: int, below: int) -> int:
    """Kafka answers PRODUCER_FENCED as INVALID_PRODUCER_EPOCH to versions that predate it."""
    return tx.INVALID_PRODUCER_EPOCH if code == tx.PRODUCER_FENCED and version < below else code


def _not_coordinator(ctx: RequestContext, key: str) -> bool:
    return coordinator(ctx.state, key) != ctx.node.node_id


def _exists(st: ClusterState, topic: str, index: int) -> bool:
    return st.partition(topic, index) is not None


@api(InitProducerIdRequest, 0, 5)
def init_producer_id(ctx: RequestContext, req: Any) -> Any:
    """A producer id for an idempotent producer, or a transactional id's producer id with its epoch bumped."""
    st, v = ctx.state, ctx.version

    def answer(code: int, pid: int = -1, epoch: int = -1) -> Any:
        code = _old_fenced(code, v, 4)
        return InitProducerIdResponse(version=v, throttle_time_ms=0, error_code=code, producer_id=pid, producer_epoch=epoch)  # fmt: skip

    if req.transactional_id is None:
        st.next_producer_id += 1
        return answer(0, st.next_producer_id, 0)
    if req.transactional_id and _not_coordinator(ctx, req.transactional_id):
        return answer(tx.NOT_COORDINATOR)
    tx.expire(st)
    exp_pid = req.producer_id if v >= 3 else -1
    exp_epoch = req.producer_epoch if v >= 3 else -1
    return answer(
        *tx.init_producer_id(st, req.transactional_id, req.transaction_timeout_ms, exp_pid, exp_epoch)
    )


@api(AddPartitionsToTxnRequest, 0, 5)
def add_partitions_to_txn(ctx: RequestContext, req: Any) -> Any:
    """Add partitions to a transaction (v0-3, the client's); v4+ is the brokers' batched form
    (several transactions, ``verify_only`` answering whether the partitions are already in)."""
    st, v = ctx.state, ctx.version
    rs = AddPartitionsToTxnResponse
    tx.expire(st)
    if v <= 3:
        results = _add_one(ctx, req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
                           req.v3_and_below_producer_epoch, req.v3_and_below_topics, False,
                           rs.AddPartitionsToTxnTopicResult)  # fmt: skip
        return rs(version=v, throttle_time_ms=0, results_by_topic_v3_and_below=results)
    out = []
    for t in req.transactions:
        out.append(
            rs.AddPartitionsToTxnResult(
                transactional_id=t.transactional_id,
                topic_results=_add_one(
                    ctx,
                    t.transactional_id,
                    t.producer_id,
                    t.producer_epoch,
                    t.topics,
                    t.verify_only,
                    rs.AddPartitionsToTxnResult.AddPartitionsToTxnTopicResult,
                ),  # fmt: skip
            )
        )
    return rs(version=v, throttle_time_ms=0, error_code=0, results_by_transaction=out)


def _add_one(ctx: RequestContext, tid: str, pid: int, epoch: int, topics: Any, verify_only: bool, tr: Any) -> list[Any]:  # fmt: skip
    st, v = ctx.state, ctx.version
    wanted = [(t.name, i) for t in topics for i in t.partitions]
    errors: dict[tuple[str, int], int] = {}
    missing = [tp for tp in wanted if not _exists(st, *tp)]
    if missing:
        errors = {
            tp: tx.UNKNOWN_TOPIC_OR_PARTITION if tp in missing else tx.OPERATION_NOT_ATTEMPTED
            for tp in wanted
        }
    elif tid and _not_coordinator(ctx, tid):
        errors = dict.fromkeys(wanted, tx.NOT_COORDINATOR)
    else:
        code, m = tx.check_producer(st, tid, pid, epoch)
        if m is not None and verify_only:
            errors = {
                tp: 0 if tp in m.partitions and m.state == "Ongoing" else tx.INVALID_TXN_STATE
                for tp in wanted
            }
        else:
            if m is not None:
                code = tx.add_partitions(st, m, wanted)
            errors = dict.fromkeys(wanted, _old_fenced(code, v, 2))
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for (name, index), code in errors.items():
        by_topic.setdefault(name, []).append((index, code))
    return [
        tr(
            name=name,
            results_by_partition=[
                tr.AddPartitionsToTxnPartitionResult(partition_index=i, partition_error_code=c)
                for i, c in parts
            ],
        )
        for name, parts in by_topic.items()
    ]


@api(AddOffsetsToTxnRequest, 0, 4)
def add_offsets_to_txn(ctx: RequestContext, req: Any) -> Any:
    """Add a group's __consumer_offsets partition to the transaction (TxnOffsetCommit follows)."""
    st, v = ctx.state, ctx.version
    tx.expire(st)
    if req.transactional_id and _not_coordinator(ctx, req.transactional_id):
        code = tx.NOT_COORDINATOR
    else:
        code, m = tx.check_producer(st, req.transactional_id, req.producer_id, req.producer_epoch)
        if m is not None:
            code = tx.add_partitions(st, m, [(GROUP_METADATA_TOPIC, tx.offsets_partition(req.group_id))])
    return AddOffsetsToTxnResponse(version=v, throttle_time_ms=0, error_code=_old_fenced(code, v, 2))


@api(TxnOffsetCommitRequest, 0, 5)
def txn_offset_commit(ctx: RequestContext, req: Any) -> Any:
    """Offsets committed inside a transaction: kept pending, visible to OffsetFetch once it commits."""
    st, v = ctx.state, ctx.version
    rs = TxnOffsetCommitResponse
    tx.expire(st)
    code = 0
    if _not_coordinator(ctx, req.group_id):
        code = tx.NOT_COORDINATOR
    else:
        m = tx.coordinator_of(st).txns.get(req.transactional_id or "")
        if m is None or m.producer_id != req.producer_id:
            code = tx.INVALID_PRODUCER_ID_MAPPING
        elif m.producer_epoch != req.producer_epoch:
            code = tx.INVALID_PRODUCER_EPOCH
        elif (
            m.state != "Ongoing"
            or (GROUP_METADATA_TOPIC, tx.offsets_partition(req.group_id)) not in m.partitions
        ):
            code = tx.INVALID_TXN_STATE
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            c = code or (0 if _exists(st, t.name, p.partition_index) else tx.UNKNOWN_TOPIC_OR_PARTITION)
            if c == 0:
                pending = m.pending_offsets.setdefault(req.group_id, {})  # type: ignore[union-attr]
                leader_epoch = p.committed_leader_epoch if v >= 2 else -1
                pending[(t.name, p.partition_index)] = (
                    p.committed_offset,
                    leader_epoch,
                    p.committed_metadata or "",
                )
            parts.append(rs.TxnOffsetCommitResponseTopic.TxnOffsetCommitResponsePartition(partition_index=p.partition_index, error_code=c))  # fmt: skip
        topics.append(rs.TxnOffsetCommitResponseTopic(name=t.name, partitions=parts))
    return rs(version=v, throttle_time_ms=0, topics=topics)


@api(EndTxnRequest, 0, 5)
def end_txn(ctx: RequestContext, req: Any) -> Any:
    """Commit or abort: markers to every partition of the transaction. v5+ is transaction version 2
    (the epoch is bumped at each end and answered)."""
    st, v = ctx.state, ctx.version
    tx.expire(st)
    pid = epoch = -1
    if req.transactional_id and _not_coordinator(ctx, req.transactional_id):
        code = tx.NOT_COORDINATOR
    else:
        code, m = tx.check_producer(st, req.transactional_id, req.producer_id, req.producer_epoch)
        if m is not None:
            tv2 = v >= 5 and int(st.features.get("transaction.version", 0)) >= 2
            code = tx.end_txn(st, m, req.committed, tv2)
            if code == 0:
                pid, epoch = m.producer_id, m.producer_epoch
    return EndTxnResponse(version=v, throttle_time_ms=0, error_code=_old_fenced(code, v, 2), producer_id=pid, producer_epoch=epoch)  # fmt: skip


@api(WriteTxnMarkersRequest, 1, 1)
def write_txn_markers(ctx: RequestContext, req: Any) -> Any:
    """Markers written to partitions this broker leads (the coordinator's, or an admin's
    ``abortTransaction`` closing a hanging transaction)."""
    st, v = ctx.state, ctx.version
    rs = WriteTxnMarkersResponse.WritableTxnMarkerResult
    out = []
    for mk in req.markers:
        topics = []
        for t in mk.topics:
            parts = []
            for i in t.partition_indexes:
                p = st.partition(t.name, i)
                if p is None:
                    code = tx.UNKNOWN_TOPIC_OR_PARTITION
                elif p.leader != ctx.node.node_id:
                    code = tx.NOT_LEADER_OR_FOLLOWER
                else:
                    code = tx.write_marker(st, p, mk.producer_id, mk.producer_epoch, mk.transaction_result, mk.coordinator_epoch)  # fmt: skip
                parts.append(rs.WritableTxnMarkerTopicResult.WritableTxnMarkerPartitionResult(partition_index=i, error_code=code))  # fmt: skip
            topics.append(rs.WritableTxnMarkerTopicResult(name=t.name, partitions=parts))
        out.append(rs(producer_id=mk.producer_id, topics=topics))
    return WriteTxnMarkersResponse(version=v, markers=out)


@api(ListTransactionsRequest, 0, 2)
def list_transactions(ctx: RequestContext, req: Any) -> Any:
    """The transactions this broker coordinates, filtered by state, producer id, duration (v1) and id pattern (v2)."""
    st, v = ctx.state, ctx.version
    tx.expire(st)
    live = st.live_brokers()
    duration = req.duration_filter if v >= 1 else -1
    pattern = req.transactional_id_pattern if v >= 2 else None
    try:
        unknown, found = tx.list_transactions(
            st,
            lambda tid: coordinator(st, tid, live) == ctx.node.node_id,
            list(req.state_filters or ()),
            list(req.producer_id_filters or ()),
            duration,
            pattern or None,
        )
    except ValueError:  # an id pattern that does not compile: INVALID_REGULAR_EXPRESSION, nothing listed
        return ListTransactionsResponse(version=v, throttle_time_ms=0, error_code=tx.INVALID_REGULAR_EXPRESSION,
                                        unknown_state_filters=[], transaction_states=[])  # fmt: skip
    ts = ListTransactionsResponse.TransactionState
    return ListTransactionsResponse(
        version=v,
        throttle_time_ms=0,
        error_code=0,
        unknown_state_filters=unknown,
        transaction_states=[
            ts(transactional_id=m.transactional_id, producer_id=m.producer_id, transaction_state=m.state)
            for m in found
        ],
    )


@api(DescribeTransactionsRequest, 0, 0)
def describe_transactions(ctx: RequestContext, req: Any) -> Any:
    """Each id's state, timeout, start time, producer id/epoch and partitions (at its coordinator)."""
    st, v = ctx.state, ctx.version
    tx.expire(st)
    ts = DescribeTransactionsResponse.TransactionState
    out = []
    for tid in req.transactional_ids:
        m = tx.coordinator_of(st).txns.get(tid)
        code = tx.NOT_COORDINATOR if _not_coordinator(ctx, tid) else (0 if m is not None and m.state != "Dead" else tx.TRANSACTIONAL_ID_NOT_FOUND)  # fmt: skip
        if code or m is None:
            out.append(ts(error_code=code, transactional_id=tid, transaction_state="", transaction_timeout_ms=0,
                          transaction_start_time_ms=-1, producer_id=-1, producer_epoch=-1, topics=[]))  # fmt: skip
            continue
        by_topic: dict[str, list[int]] = {}
        for name, index in sorted(m.partitions):
            by_topic.setdefault(name, []).append(index)
        out.append(
            ts(
                error_code=0,
                transactional_id=tid,
                transaction_state=m.state,
                transaction_timeout_ms=m.timeout_ms,
                transaction_start_time_ms=m.start_ms,
                producer_id=m.producer_id,
                producer_epoch=m.producer_epoch,
                topics=[ts.TopicData(topic=name, partitions=parts) for name, parts in by_topic.items()],
            )
        )
    return DescribeTransactionsResponse(version=v, throttle_time_ms=0, transaction_states=out)


@api(DescribeProducersRequest, 0, 0)
def describe_producers(ctx: RequestContext, req: Any) -> Any:
    """The active producers of partitions this broker holds a replica of (ProducerStateManager's
    entries; any replica answers, as Kafka's ReplicaManager.activeProducerState: a follower here has
    the leader's producer state, the sandbox does not keep one per replica)."""
    st, v = ctx.state, ctx.version
    tx.expire(st)
    rs = DescribeProducersResponse.TopicResponse
    pr = rs.PartitionResponse
    out = []
    for t in req.topics:
        parts = []
        for i in t.partition_indexes:
            p = st.partition(t.name, i)
            code, message, active = 0, None, []
            if t.name not in st.topics:  # the topic's error, worded (KafkaApis' ApiError)
                code, message = (
                    tx.UNKNOWN_TOPIC_OR_PARTITION,
                    "This server does not host this topic-partition.",
                )
            elif p is None:
                code = tx.UNKNOWN_TOPIC_OR_PARTITION
            elif ctx.node.node_id not in p.replicas:
                code = tx.NOT_LEADER_OR_FOLLOWER
            elif p.txns is not None:
                active = [
                    pr.ProducerState(
                        producer_id=e.producer_id,
                        producer_epoch=e.producer_epoch,
                        last_sequence=e.last_sequence,
                        last_timestamp=e.last_timestamp,
                        coordinator_epoch=e.coordinator_epoch,
                        current_txn_start_offset=e.txn_start_offset,
                    )
                    for e in sorted(p.txns.producers.values(), key=lambda e: e.producer_id)
                ]
            parts.append(
                pr(partition_index=i, error_code=code, error_message=message, active_producers=active)
            )
        out.append(rs(name=t.name, partitions=parts))
    return DescribeProducersResponse(version=v, throttle_time_ms=0, topics=out)
