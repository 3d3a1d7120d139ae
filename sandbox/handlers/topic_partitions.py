"""DescribeTopicPartitions (API 75, KIP-966): topics' partitions a page at a time, as Kafka 4.1's
``DescribeTopicPartitionsRequestHandler`` and ``KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse``
answer it.

- Topics are answered in name order from the cursor's topic on: every topic when the request names
  none (unknown names cannot occur then), else the named ones (a name twice is answered once); a
  request naming topics must name the cursor's topic too (INVALID_REQUEST for every named topic).
- At most ``min(max.request.partition.size.limit, ResponsePartitionLimit)`` partitions are answered
  (at least one: a real 4.1 broker answers a limit of 0 or -1 with one partition and a cursor);
  the cursor's topic starts at the cursor's partition, every other at 0. ``NextCursor`` names the
  first partition left out (a topic cut in the middle), or the next topic at partition 0 when the
  limit was used up exactly; it is null when nothing is left.
- A named topic that does not exist is answered UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION
  for an illegal name) with the zero id and no partitions.
- A partition's leader is its registered leader (-1 when none), its replicas and ISR as registered,
  offline replicas those on stopped brokers, and the eligible leader replicas (ELR) empty: the
  sandbox finalizes ``eligible.leader.replicas.version`` 1 as a new 4.1 cluster does, but keeps
  the ISR as Kafka did before KIP-966 (never below one member) and models no ELR (README).
  Partition error codes are always 0 (unlike Metadata's LEADER_NOT_AVAILABLE).
- The sandbox has no topic authorizer (as for Metadata), so every topic is described and its
  authorized operations are the topic's supported ones.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse

from sandbox.apis import RequestContext, api
from sandbox.handlers.meta import LEGAL_TOPIC, ZERO_UUID
from sandbox.handlers.metacache import TOPIC_OPS
from sandbox.state import INTERNAL_TOPICS, ClusterState, Topic

UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION, INVALID_REQUEST = 3, 17, 42
BROKER_LIMIT = 2000  # max.request.partition.size.limit's default
OPERATIONS = sum(1 << op for op in TOPIC_OPS)

_Topic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
_Partition = _Topic.DescribeTopicPartitionsResponsePartition


def _limit(ctx: RequestContext) -> int:
    from sandbox.configs import broker_value

    value = broker_value(ctx.state, ctx.node.node_id, "max.request.partition.size.limit")
    return int(value) if value not in (None, "") else BROKER_LIMIT


def _partitions(st: ClusterState, t: Topic, start: int, count: int) -> tuple[list[Any], int]:
    """The topic's partitions ``start..`` (at most ``count``) and the next index (-1: none left)."""
    size = len(t.partitions)
    upper = min(size, start + count)
    brokers = st.brokers
    out = [
        _Partition(
            error_code=0,
            partition_index=p.index,
            leader_id=p.leader,
            leader_epoch=p.leader_epoch,
            replica_nodes=list(p.replicas),
            isr_nodes=list(p.isr),
            eligible_leader_replicas=[],
            last_known_elr=[],
            offline_replicas=[b for b in p.replicas if b not in brokers or not brokers[b].up],
        )
        for p in t.partitions[max(start, 0) : max(upper, 0)]  # Kafka skips indexes it does not have
    ]
    return out, (upper if upper < size else -1)


def _error(name: str, code: int) -> Any:
    return _Topic(error_code=code, name=name, topic_id=ZERO_UUID, is_internal=name in INTERNAL_TOPICS,
                  partitions=[], topic_authorized_operations=-2147483648)  # fmt: skip


def _legal(name: str) -> bool:
    return bool(name) and len(name) <= 249 and bool(LEGAL_TOPIC.match(name)) and name not in (".", "..")


@api(DescribeTopicPartitionsRequest, 0, 0)
def describe_topic_partitions(ctx: RequestContext, req: Any) -> Any:
    st = ctx.state
    cursor = req.cursor
    after = cursor.topic_name if cursor is not None else ""
    every = not req.topics
    if every:
        names = sorted(n for n in st.topics if n >= after)
    else:
        names = sorted({t.name for t in req.topics if t.name >= after})
        if cursor is not None and cursor.topic_name not in names:
            return DescribeTopicPartitionsResponse(
                throttle_time_ms=0,
                topics=[_error(t.name, INVALID_REQUEST) for t in req.topics],
                next_cursor=None,
            )
    remaining = max(1, min(_limit(ctx), req.response_partition_limit))  # 4.1 answers 0 or less as 1
    topics: list[Any] = []
    next_cursor = None
    for name in names:
        if remaining > 0:
            t = st.topics.get(name)
            if t is None:
                if not every:
                    topics.append(
                        _error(name, UNKNOWN_TOPIC_OR_PARTITION if _legal(name) else INVALID_TOPIC_EXCEPTION)
                    )
                continue
            start = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
            parts, following = _partitions(st, t, start, remaining)
            topics.append(_Topic(error_code=0, name=name, topic_id=t.topic_id, is_internal=t.internal,
                                 partitions=parts, topic_authorized_operations=OPERATIONS))  # fmt: skip
            if following != -1:
                next_cursor = DescribeTopicPartitionsResponse.Cursor(
                    topic_name=name, partition_index=following
                )
                break
            remaining -= len(parts)
        elif remaining == 0:
            next_cursor = DescribeTopicPartitionsResponse.Cursor(topic_name=name, partition_index=0)
            break
    return DescribeTopicPartitionsResponse(throttle_time_ms=0, topics=topics, next_cursor=next_cursor)
