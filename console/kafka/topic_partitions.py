"""DescribeTopicPartitions (API 75, KIP-966): topics' partitions a page at a time, with the eligible
leader replicas (ELR) Metadata does not carry; what ``kafka-topics.sh --describe`` asks Kafka 4.

A broker answers at most ``min(max.request.partition.size.limit, the asked limit)`` partitions
(2,000 by default) and a cursor to the first partition it left out; the next page starts there.
``describe_topic_partitions`` follows the cursor to the end, so a caller gets whole topics
whatever the page size, with no answer larger than a page (a 5M-partition cluster is 2,500 small
answers where one Metadata answer is ~215 MB). A cluster that does not serve the API (before
Kafka 3.8) answers UNSUPPORTED_VERSION: the caller reads Metadata instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafka.protocol.admin import DescribeTopicPartitionsRequest

from .base import GatewayBase
from .errors import KafkaOperationError, topic_error

__all__ = ["DescribedPartition", "DescribedTopic", "TopicPartitionsMixin"]

PAGE_LIMIT = 2000  # Kafka's default for the request's ResponsePartitionLimit (and the broker's cap)
_Topic = DescribeTopicPartitionsRequest.TopicRequest
_Cursor = DescribeTopicPartitionsRequest.Cursor


@dataclass(frozen=True)
class DescribedPartition:
    """One partition as DescribeTopicPartitions answers it (-1: no leader; ELR lists empty when
    ``eligible.leader.replicas.version`` is 0)."""

    id: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    eligible_leader_replicas: tuple[int, ...]
    last_known_elr: tuple[int, ...]
    offline_replicas: tuple[int, ...]


@dataclass(frozen=True)
class DescribedTopic:
    name: str
    topic_id: str | None
    internal: bool
    partitions: tuple[DescribedPartition, ...]


class TopicPartitionsMixin(GatewayBase):
    """describe_topic_partitions."""

    def describe_topic_partitions(
        self, names: Sequence[str] | None = None, *, page_limit: int = PAGE_LIMIT
    ) -> dict[str, DescribedTopic | KafkaOperationError]:
        """The named topics (None: every topic) page by page to the end, by name; a topic Kafka
        does not know is its error (UNKNOWN_TOPIC_OR_PARTITION). Raises KafkaOperationError when a
        page cannot be read (UNSUPPORTED_VERSION: the cluster predates KIP-966)."""
        self._require_brokers("describing topic partitions")
        if page_limit < 1:
            raise ValueError("page_limit must be at least 1")
        asked = [] if names is None else [_Topic(name=n) for n in dict.fromkeys(names)]
        if names is not None and not asked:
            return {}
        found: dict[str, tuple[str | None, bool, list[DescribedPartition]]] = {}
        errors: dict[str, KafkaOperationError] = {}
        cursor = None
        while True:
            answer = self._kp.send(
                DescribeTopicPartitionsRequest(
                    topics=asked, response_partition_limit=page_limit, cursor=cursor
                )
            )
            for t in answer.topics:
                err = topic_error(t.error_code, t.name)
                if err is not None:
                    errors[t.name] = err
                    continue
                _, _, parts = found.setdefault(
                    t.name, (str(t.topic_id) if t.topic_id else None, bool(t.is_internal), [])
                )
                parts.extend(_partition(p) for p in t.partitions)
            following = answer.next_cursor
            if following is None:
                break
            step = (following.topic_name, following.partition_index)
            if cursor is not None and step <= (cursor.topic_name, cursor.partition_index):
                raise KafkaOperationError(
                    -1,
                    "UNKNOWN_SERVER_ERROR",
                    f"DescribeTopicPartitions did not advance past {step[0]}-{step[1]}",
                    False,
                )
            cursor = _Cursor(topic_name=step[0], partition_index=step[1])
        out: dict[str, DescribedTopic | KafkaOperationError] = {
            name: DescribedTopic(name, tid, internal, tuple(sorted(parts, key=lambda p: p.id)))
            for name, (tid, internal, parts) in sorted(found.items())
        }
        out.update((name, err) for name, err in errors.items() if name not in out)
        return out


def _partition(p) -> DescribedPartition:
    return DescribedPartition(
        p.partition_index,
        p.leader_id,
        p.leader_epoch,
        tuple(p.replica_nodes),
        tuple(p.isr_nodes),
        tuple(p.eligible_leader_replicas or ()),
        tuple(p.last_known_elr or ()),
        tuple(p.offline_replicas or ()),
    )
