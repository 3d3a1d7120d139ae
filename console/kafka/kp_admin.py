"""The librdkafka calls of the gateway, over kafka-python, for connections librdkafka cannot make.

The PyPI confluent-kafka wheel is built without GSSAPI ("No provider for SASL mechanism GSSAPI"),
so a Kerberos connection sends its whole-cluster Metadata and DeleteTopics through kafka-python
(with the same Kerberos login) instead of the AdminClient. The Metadata answer is shaped like
confluent-kafka's ``ClusterMetadata`` so the readers (cluster.py, health.py, poll_reads.py) need no
second branch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.admin import DeleteTopicsRequest
from kafka.protocol.metadata import MetadataRequest

from .errors import KafkaOperationError, from_code
from .types import OK, Ok

__all__ = ["whole_metadata", "delete_topics"]


@dataclass(frozen=True)
class _Error:
    """A topic's error as confluent-kafka's ``KafkaError`` offers it (``.code()``)."""

    value: int

    def code(self) -> int:
        return self.value


@dataclass(frozen=True)
class BrokerMetadata:
    id: int
    host: str
    port: int


@dataclass(frozen=True)
class PartitionMetadata:
    id: int
    leader: int
    replicas: list[int]
    isrs: list[int]
    error: _Error | None = None


@dataclass(frozen=True)
class TopicMetadata:
    topic: str
    partitions: dict[int, PartitionMetadata] = field(default_factory=dict)
    error: _Error | None = None


@dataclass(frozen=True)
class ClusterMetadata:
    cluster_id: str | None
    controller_id: int
    brokers: dict[int, BrokerMetadata]
    topics: dict[str, TopicMetadata]


def whole_metadata(kp: Any) -> ClusterMetadata:
    """Every topic's Metadata from any broker, in confluent-kafka's ``ClusterMetadata`` shape."""
    response = kp.send(MetadataRequest(topics=None, allow_auto_topic_creation=False))
    brokers = {b.node_id: BrokerMetadata(b.node_id, b.host, b.port) for b in response.brokers}
    topics = {}
    for t in response.topics:
        parts = {
            p.partition_index: PartitionMetadata(
                p.partition_index,
                p.leader_id,
                list(p.replica_nodes),
                list(p.isr_nodes),
                _Error(p.error_code) if p.error_code else None,
            )
            for p in t.partitions
        }
        topics[t.name] = TopicMetadata(t.name, parts, _Error(t.error_code) if t.error_code else None)
    controller = response.controller_id if response.controller_id is not None else -1
    return ClusterMetadata(response.cluster_id, controller, brokers, topics)


def delete_topics(kp: Any, names: list[str], timeout_s: float) -> dict[str, Ok | KafkaOperationError]:
    """DeleteTopics in one request (sent to the controller through any broker); per-topic result."""
    request = DeleteTopicsRequest(
        topics=[DeleteTopicsRequest.DeleteTopicState(name=n) for n in names],
        topic_names=list(names),
        timeout_ms=int(timeout_s * 1000),
    )
    try:
        response = kp.send(request)
    except KafkaOperationError as err:
        return dict.fromkeys(names, err)
    out: dict[str, Ok | KafkaOperationError] = {}
    for r in response.responses:
        out[r.name] = from_code(r.error_code, getattr(r, "error_message", None)) or OK
    for name in names:
        out.setdefault(name, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "no answer for this topic"))
    return out
