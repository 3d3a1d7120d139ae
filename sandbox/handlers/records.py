"""DeleteRecords (KIP-107): move partitions' log start offsets forward, as Kafka 4.1's leaders do.

Kafka's ``ReplicaManager.deleteRecordsOnLocalLog`` and ``Partition.deleteRecordsOnLeader``, in order:
an internal topic is refused (INVALID_TOPIC_EXCEPTION), an unknown topic or partition is
UNKNOWN_TOPIC_OR_PARTITION, a broker that does not lead the partition answers NOT_LEADER_OR_FOLLOWER,
a topic whose ``cleanup.policy`` lacks ``delete`` is POLICY_VIOLATION, ``-1`` means the high
watermark, a negative offset or one above the high watermark is OFFSET_OUT_OF_RANGE
(``UnifiedLog.maybeIncrementLogStartOffset``), and an offset at or below the current log start changes
nothing. The answer's ``low_watermark`` is the partition's log start after the request (the sandbox
keeps one log start per partition, which every replica shares: followers follow at once, so Kafka's
wait for the replicas' low watermark is already over). The sandbox enforces no ACLs, so
TOPIC_AUTHORIZATION_FAILED (Kafka's DELETE on the topic) never comes.

Kafka deletes a segment only once all of it is below the log start (its next segment's base offset
at or below it), not at the request: the sandbox takes away the leader's and replicas' bytes in whole
``segment.bytes`` pieces of the records below the new start, and drops kept batches wholly below it.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import DeleteRecordsRequest, DeleteRecordsResponse

from sandbox.apis import RequestContext, api
from sandbox.configs import topic_value
from sandbox.state import ClusterState, Partition, Topic

HIGH_WATERMARK = -1  # DeleteRecordsRequest.HIGH_WATERMARK
UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE = 3, 6, 1
INVALID_TOPIC_EXCEPTION, POLICY_VIOLATION = 17, 44


def _delete(ctx: RequestContext, t: Topic | None, index: int, offset: int) -> tuple[int, int]:
    """(error code, low watermark) of one partition, the log start moved when Kafka would move it."""
    if t is not None and t.internal:
        return INVALID_TOPIC_EXCEPTION, -1
    if t is None or not 0 <= index < len(t.partitions):
        return UNKNOWN_TOPIC_OR_PARTITION, -1
    p = t.partitions[index]
    if p.leader != ctx.node.node_id:
        return NOT_LEADER_OR_FOLLOWER, -1
    policy = topic_value(ctx.state, t, "cleanup.policy", ctx.node.node_id)[0] or "delete"
    if "delete" not in policy:
        return POLICY_VIOLATION, -1
    wanted = p.end_offset if offset == HIGH_WATERMARK else offset
    if wanted < 0 or wanted > p.end_offset:
        return OFFSET_OUT_OF_RANGE, -1
    if wanted > p.log_start_offset:
        _move_log_start(ctx.state, t, p, wanted)
    return 0, p.log_start_offset


def _move_log_start(state: ClusterState, t: Topic, p: Partition, offset: int) -> None:
    """The log start at ``offset`` on every replica; whole segments below it leave the disk."""
    segment = float(topic_value(state, t, "segment.bytes", p.leader)[0] or 1 << 30)
    held = p.end_offset - p.log_start_offset
    gone = (offset - p.log_start_offset) / held if held > 0 else 0.0
    for broker, size in p.sizes.items():
        below = size * gone
        p.sizes[broker] = max(0.0, size - (below // segment) * segment)
    p.log_start_offset = offset
    while p.batches and p.batches[0].last_offset < offset:
        p.batches.popleft()


@api(DeleteRecordsRequest, 0, 2)
def delete_records(ctx: RequestContext, req: Any) -> Any:
    """Each named partition's records below its offset deleted (its log start moved forward)."""
    st = ctx.state
    tr = DeleteRecordsResponse.DeleteRecordsTopicResult
    out = []
    for dt in req.topics:
        t = st.topics.get(dt.name)
        parts = []
        for dp in dt.partitions:
            code, low = _delete(ctx, t, dp.partition_index, dp.offset)
            parts.append(
                tr.DeleteRecordsPartitionResult(
                    partition_index=dp.partition_index, low_watermark=low, error_code=code
                )
            )
        out.append(tr(name=dt.name, partitions=parts))
    return DeleteRecordsResponse(version=ctx.version, throttle_time_ms=0, topics=out)
