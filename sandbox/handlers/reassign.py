"""AlterPartitionReassignments, ListPartitionReassignments (KIP-455), DescribeLogDirs, ElectLeaders."""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)

from sandbox import logdirs, replication
from sandbox.apis import RequestContext, api, fast_factory
from sandbox.handlers.topics import TopicError, validate_assignment
from sandbox.state import ClusterState, Partition

DISK_TOTAL_BYTES = 1 << 40
MSG_NOT_NEEDED = "Leader election not needed for topic partition."
MSG_PREFERRED_NA = "The preferred leader was not available."
MSG_ELIGIBLE_NA = "Eligible topic partition leaders are not available."


def _original(p: Partition) -> list[int]:
    """Replicas before the ongoing reassignment (current replicas minus adding)."""
    return [b for b in p.replicas if b not in p.adding]


def cancel(st: ClusterState, p: Partition) -> None:
    """Revert an ongoing reassignment as Kafka does (PartitionReassignmentRevert): the current replica
    list without the adding brokers, which is the original set, not always in the original order."""
    orig = _original(p)
    isr = [b for b in p.isr if b in orig]
    p.isr = isr or [b for b in orig if st.brokers[b].up][:1] or orig[:1]
    for b in p.adding:
        p.sizes.pop(b, None)
    st.set_replicas(p, orig)
    p.adding, p.removing = [], []
    if p.leader not in orig:
        replication.elect(st, p)
    p.partition_epoch += 1
    st.touch(p.topic)


def reassign(st: ClusterState, topic: str, p: Partition, target: list[int]) -> None:
    """Start (or replace) a reassignment towards ``target``; finish at once if nothing to copy."""
    orig = _original(p)
    if target == orig:
        if p.adding or p.removing:
            cancel(st, p)
        return
    # As Kafka's controller (PartitionReassignmentReplicas): adding and removing in ascending order
    # (sets), the replicas the target followed by the removing brokers; a cancel drops the adding
    # ones from that list, so the original brokers can come back in another order.
    p.adding = sorted(b for b in target if b not in orig)
    p.removing = sorted(b for b in orig if b not in target)
    st.set_replicas(p, target + p.removing)
    p.isr = [b for b in p.isr if b in p.replicas]
    for b in list(p.sizes):
        if b not in p.replicas:
            del p.sizes[b]
    for b in p.adding:
        p.sizes.setdefault(b, 0.0)
    p.partition_epoch += 1
    st.catching_up.add((topic, p.index))
    replication.maybe_complete_reassignment(st, p)
    st.touch(p.topic)


@api(AlterPartitionReassignmentsRequest, 0, 1, controller=True)
def alter_partition_reassignments(ctx: RequestContext, req: Any) -> Any:
    """Start, replace or cancel (replicas=null) reassignments, with a result per partition."""
    st = ctx.state
    ar = AlterPartitionReassignmentsResponse
    rt = ar.ReassignableTopicResponse
    out = []
    for t in req.topics:
        parts = []
        topic = st.topics.get(t.name)
        for rp in t.partitions:
            code, msg = 0, None
            try:
                if topic is None:
                    raise TopicError(3, f"Unable to find a topic named {t.name}.")
                if not 0 <= rp.partition_index < len(topic.partitions):
                    raise TopicError(3, f"Unable to find partition {t.name}:{rp.partition_index}.")
                p = topic.partitions[rp.partition_index]
                if rp.replicas is None:
                    if not p.adding and not p.removing:
                        raise TopicError(85, None)
                    cancel(st, p)
                else:
                    target = list(rp.replicas)
                    validate_assignment(st, [target])
                    orig = _original(p)
                    if not req.allow_replication_factor_change and len(target) != len(orig):
                        raise TopicError(
                            38, f"The replication factor is changed from {len(orig)} to {len(target)}"
                        )
                    reassign(st, t.name, p, target)
            except TopicError as exc:
                code, msg = exc.code, exc.message
            parts.append(
                rt.ReassignablePartitionResponse(
                    partition_index=rp.partition_index, error_code=code, error_message=msg
                )
            )
        out.append(rt(name=t.name, partitions=parts))
    return ar(
        version=ctx.version,
        throttle_time_ms=0,
        allow_replication_factor_change=req.allow_replication_factor_change,
        error_code=0,
        error_message=None,
        responses=out,
    )


@api(ListPartitionReassignmentsRequest, 0, 0, controller=True)
def list_partition_reassignments(ctx: RequestContext, req: Any) -> Any:
    """Ongoing reassignments (all, or of the listed partitions; unknown ones are omitted)."""
    st = ctx.state
    lr = ListPartitionReassignmentsResponse
    ot = lr.OngoingTopicReassignment
    wanted: list[tuple[str, list[int] | None]]
    if req.topics is None:
        wanted = [(name, None) for name in st.topics]
    else:
        wanted = [(t.name, list(t.partition_indexes)) for t in req.topics]
    out = []
    for name, idxs in wanted:
        topic = st.topics.get(name)
        if topic is None:
            continue
        parts = []
        if idxs is None:
            candidates = topic.partitions
        else:  # the asked partitions only, by index (partitions are kept in index order)
            n = len(topic.partitions)
            candidates = [topic.partitions[i] for i in dict.fromkeys(idxs) if 0 <= i < n]
        for p in candidates:
            if p.adding or p.removing:
                parts.append(
                    ot.OngoingPartitionReassignment(
                        partition_index=p.index,
                        replicas=list(p.replicas),
                        adding_replicas=list(p.adding),
                        removing_replicas=list(p.removing),
                    )
                )
        if parts:
            out.append(ot(name=name, partitions=parts))
    return lr(version=ctx.version, throttle_time_ms=0, error_code=0, error_message=None, topics=out)


@api(DescribeLogDirsRequest, 1, 4)
def describe_log_dirs(ctx: RequestContext, req: Any) -> Any:
    """This broker's log dirs (one unless the cluster has more, ``sandbox/logdirs.py``): the size of
    each replica in each dir (offset lag as Kafka: 0), a future replica of a move between dirs with
    ``is_future_key`` and its lag behind the current replica; an offline dir: KAFKA_STORAGE_ERROR."""
    st, node = ctx.state, ctx.node
    dr = DescribeLogDirsResponse
    dt = dr.DescribeLogDirsResult.DescribeLogDirsTopic
    wanted = None if req.topics is None else {t.topic: set(t.partitions) for t in req.topics}
    results = []
    for path, code, topics, used in logdirs.describe(st, node, wanted):
        offline = code != 0
        results.append(
            dr.DescribeLogDirsResult(
                error_code=code,
                log_dir=path,
                topics=[
                    dt(
                        name=name,
                        partitions=[
                            _log_dir_partition(
                                partition_index=i, partition_size=size, offset_lag=lag, is_future_key=fut
                            )
                            for i, size, lag, fut in parts
                        ],
                    )
                    for name, parts in topics.items()
                ],
                total_bytes=-1 if offline else DISK_TOTAL_BYTES,
                usable_bytes=-1 if offline else max(0, DISK_TOTAL_BYTES - int(used)),
                is_cordoned=False,
            )
        )
    return dr(version=ctx.version, throttle_time_ms=0, error_code=0, results=results)


_log_dir_partition = fast_factory(
    DescribeLogDirsResponse.DescribeLogDirsResult.DescribeLogDirsTopic.DescribeLogDirsPartition
)


def _elect_one(st: ClusterState, p: Partition, unclean: bool) -> tuple[int, str | None]:
    if not unclean:
        pref = p.preferred
        if p.leader == pref:
            return 84, MSG_NOT_NEEDED
        if pref not in p.isr or not st.brokers[pref].up:
            return 80, MSG_PREFERRED_NA
        p.leader = pref
    else:
        if p.leader >= 0:
            return 84, MSG_NOT_NEEDED
        live_isr = [b for b in p.replicas if b in p.isr and st.brokers[b].up]
        live = [b for b in p.replicas if st.brokers[b].up]
        if not live_isr and not live:
            return 83, MSG_ELIGIBLE_NA
        p.leader = (live_isr or live)[0]
        if not live_isr:
            p.isr = [p.leader]
    p.leader_epoch += 1
    p.partition_epoch += 1
    st.touch(p.topic)
    return 0, None


@api(ElectLeadersRequest, 0, 2, controller=True)
def elect_leaders(ctx: RequestContext, req: Any) -> Any:
    """Preferred (0) or unclean (1) leader election per partition, or for every partition."""
    st = ctx.state
    unclean = ctx.version >= 1 and req.election_type == 1
    er = ElectLeadersResponse.ReplicaElectionResult
    pr = er.PartitionResult
    out = []
    if req.topic_partitions is None:
        for name, topic in st.topics.items():
            results = []
            for p in topic.partitions:
                code, msg = _elect_one(st, p, unclean)
                if code != 84:
                    results.append(pr(partition_id=p.index, error_code=code, error_message=msg))
            out.append(er(topic=name, partition_result=results))
    else:
        for tp in req.topic_partitions:
            topic = st.topics.get(tp.topic)
            results = []
            for i in tp.partitions:
                if topic is None:
                    code, msg = 3, f"No such topic as {tp.topic}"
                elif not 0 <= i < len(topic.partitions):
                    code, msg = 3, f"No such partition as {tp.topic}-{i}"
                else:
                    code, msg = _elect_one(st, topic.partitions[i], unclean)
                results.append(pr(partition_id=i, error_code=code, error_message=msg))
            out.append(er(topic=tp.topic, partition_result=results))
    return ElectLeadersResponse(
        version=ctx.version, throttle_time_ms=0, error_code=0, replica_election_results=out
    )
