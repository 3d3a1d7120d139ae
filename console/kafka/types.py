"""Plain, frozen result and request types returned and accepted by the gateway.

Enumerations are plain upper-case strings with Kafka's names (``"TOPIC"``, ``"LITERAL"``,
``"READ"``, ``"ALLOW"``, ``"SET"``...), so callers never import a Kafka client.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any, NamedTuple, TypeVar

from .errors import KafkaOperationError

T = TypeVar("T")

#: A per-resource outcome of a batch call: the result, or the error for that resource.
Result = T | KafkaOperationError


@dataclass(frozen=True)
class Ok:
    """Success without a payload (e.g. a topic deleted, a binding created)."""


OK = Ok()


@dataclass(frozen=True)
class BrokerInfo:
    id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True)
class ClusterInfo:
    cluster_id: str | None
    controller_id: int | None
    brokers: tuple[BrokerInfo, ...]
    #: "broker" when talking to brokers, "controller" in KIP-919 direct-to-controller mode
    endpoint_type: str = "broker"


@dataclass(frozen=True)
class PartitionMetadata:
    id: int
    leader: int  # -1 when there is no leader
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)

    @property
    def offline(self) -> bool:
        return self.leader < 0

    @property
    def preferred_leader(self) -> int | None:
        return self.replicas[0] if self.replicas else None


class TopicHealth(NamedTuple):
    """A topic's partition counts, read without building its ``PartitionMetadata``."""

    partitions: int
    replication_factor: int
    under_replicated: int
    offline: int
    #: each partition's ISR size, only when some partition is under-replicated or offline
    isr_sizes: tuple[int, ...] = ()


def _fill(topic: TopicMetadata, *values: Any) -> None:
    for slot, value in zip(TopicMetadata.__slots__, values, strict=True):
        object.__setattr__(topic, slot, value)


class TopicMetadata:
    """A topic's metadata: frozen, compared and hashed by its fields like the other types.

    A whole-cluster fetch makes its topics with :meth:`deferred`: each keeps the client's answer and
    builds its ``PartitionMetadata`` on the first read of ``partitions`` (building 100,000 up front
    cost several times the fetch); :meth:`health` counts without building them.
    """

    __slots__ = ("name", "internal", "topic_id", "_partitions", "_source", "_reader")

    def __init__(
        self,
        name: str,
        partitions: tuple[PartitionMetadata, ...] = (),
        internal: bool = False,
        topic_id: str | None = None,
    ) -> None:
        _fill(self, name, internal, topic_id, tuple(partitions), None, None)

    @classmethod
    def deferred(
        cls,
        name: str,
        source: Any,
        reader: Any,
        internal: bool = False,
        topic_id: str | None = None,
    ) -> TopicMetadata:
        """A topic whose partitions ``reader`` (a ``deferred.PartitionReader``) reads from ``source`` when
        first asked for."""
        self = cls.__new__(cls)
        _fill(self, name, internal, topic_id, None, source, reader)
        return self

    @property
    def partitions(self) -> tuple[PartitionMetadata, ...]:
        parts = self._partitions
        if parts is None:
            source = self._source
            reader = self._reader
            if source is None or reader is None:  # another thread converted it since the first read
                return self._partitions  # (it sets _partitions before clearing the other two)
            parts = reader.partitions(source)
            object.__setattr__(self, "_partitions", parts)
            object.__setattr__(self, "_source", None)  # the client's answer is no longer needed
            object.__setattr__(self, "_reader", None)
        return parts

    def health(self) -> TopicHealth:
        """Partition count, replication factor, under-replicated and offline partitions."""
        source = self._source
        reader = self._reader
        if source is not None and reader is not None:
            return reader.health(source)
        parts = self.partitions
        under = offline = 0
        for p in parts:
            if p.leader < 0:
                offline += 1
            if len(p.isr) < len(p.replicas):
                under += 1
        isr_sizes = tuple(len(p.isr) for p in parts) if under or offline else ()
        rf = len(parts[0].replicas) if parts else 0
        return TopicHealth(len(parts), rf, under, offline, isr_sizes)

    @property
    def replication_factor(self) -> int:
        parts = self.partitions
        return len(parts[0].replicas) if parts else 0

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field '{name}'")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field '{name}'")

    def _key(self) -> tuple:
        return (self.name, self.partitions, self.internal, self.topic_id)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self):
        return (TopicMetadata, (self.name, self.partitions, self.internal, self.topic_id))

    def __repr__(self) -> str:
        return (
            f"TopicMetadata(name={self.name!r}, partitions={self.partitions!r}, "
            f"internal={self.internal!r}, topic_id={self.topic_id!r})"
        )


@dataclass(frozen=True)
class ClusterMetadata:
    """A full metadata snapshot from one fetch."""

    cluster_id: str | None
    controller_id: int | None
    brokers: tuple[BrokerInfo, ...]
    topics: tuple[TopicMetadata, ...]  # or a console.kafka.deferred.DeferredTopics (a read-only sequence)


@dataclass(frozen=True)
class TopicSummary:
    topic_count: int
    partition_count: int
    under_replicated: int
    offline: int
    internal_topics: int


@dataclass(frozen=True)
class NewTopic:
    """A topic to create: ``partitions`` + ``replication_factor``, or ``replica_assignment``.

    ``partitions``/``replication_factor`` of -1 mean "the broker default".
    """

    name: str
    partitions: int = -1
    replication_factor: int = -1
    replica_assignment: tuple[tuple[int, ...], ...] | None = None
    configs: dict[str, str] = field(default_factory=dict, hash=False, compare=True)


@dataclass(frozen=True)
class NewPartitions:
    """Grow ``topic`` to ``total_count`` partitions (optionally placing the new ones)."""

    topic: str
    total_count: int
    assignment: tuple[tuple[int, ...], ...] | None = None


class TopicPartition(NamedTuple):
    """A partition of a topic. A named tuple: built by the 10,000s per poll, and equal to the
    plain ``(topic, partition)`` keys the areas use."""

    topic: str
    partition: int


@dataclass(frozen=True)
class ConfigResource:
    """``type`` is TOPIC, BROKER (name "" = cluster-wide default) or BROKER_LOGGER."""

    type: str
    name: str


@dataclass(frozen=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: str


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str | None  # None when sensitive (never returned by Kafka)
    source: str  # DEFAULT_CONFIG, STATIC_BROKER_CONFIG, DYNAMIC_BROKER_CONFIG, ...
    read_only: bool
    sensitive: bool
    default: bool
    synonyms: tuple[ConfigSynonym, ...] = ()
    documentation: str | None = None
    type: str | None = None


@dataclass(frozen=True)
class ConfigChange:
    """One incremental alter operation: SET, DELETE, APPEND or SUBTRACT."""

    name: str
    op: str = "SET"
    value: str | None = None


@dataclass(frozen=True)
class AclBinding:
    resource_type: str  # TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN
    resource_name: str
    pattern_type: str  # LITERAL, PREFIXED
    principal: str
    host: str
    operation: str  # READ, WRITE, ... ALL
    permission: str  # ALLOW, DENY


@dataclass(frozen=True)
class AclBindingFilter:
    """None fields match anything; pattern_type may be ANY or MATCH too."""

    resource_type: str = "ANY"
    resource_name: str | None = None
    pattern_type: str = "ANY"
    principal: str | None = None
    host: str | None = None
    operation: str = "ANY"
    permission: str = "ANY"


@dataclass(frozen=True)
class PartitionReassignment:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


class ReplicaLogInfo(NamedTuple):
    """One replica in a DescribeLogDirs answer (a named tuple: 10,000s per poll)."""

    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True)
class LogDirInfo:
    path: str
    error: KafkaOperationError | None
    replicas: dict[TopicPartition, ReplicaLogInfo] = field(hash=False)
    total_bytes: int | None = None
    usable_bytes: int | None = None


@dataclass(frozen=True)
class PartitionOffsets:
    offset: int
    timestamp: int | None = None
    leader_epoch: int | None = None


@dataclass(frozen=True)
class QuorumReplica:
    id: int
    log_end_offset: int
    lag: int
    last_fetch_timestamp: int | None
    last_caught_up_timestamp: int | None


@dataclass(frozen=True)
class QuorumInfo:
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[QuorumReplica, ...]
    observers: tuple[QuorumReplica, ...]
    #: controller endpoints (KIP-853), id -> "host:port" listeners
    nodes: dict[int, tuple[str, ...]] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class FeatureInfo:
    name: str
    supported_min: int | None
    supported_max: int | None
    finalized_min: int | None
    finalized_max: int | None


@dataclass(frozen=True)
class GroupMember:
    """A member of a consumer group. ``assignment`` is decoded from the consumer protocol's bytes
    (classic groups) or read from ConsumerGroupDescribe (KIP-848 groups, which also say the
    target assignment the member is moving to and what it subscribes to)."""

    member_id: str
    client_id: str
    host: str
    instance_id: str | None = None
    assignment: tuple[TopicPartition, ...] = ()
    target_assignment: tuple[TopicPartition, ...] | None = None
    subscribed_topics: tuple[str, ...] = ()
    member_epoch: int | None = None


@dataclass(frozen=True)
class GroupDescription:
    """One consumer group as its coordinator describes it.

    ``group_type`` is "classic" (DescribeGroups) or "consumer" (KIP-848, ConsumerGroupDescribe);
    ``assignor`` is the classic group's protocol (range, cooperative-sticky...) or the consumer
    group's server-side assignor (uniform, range).
    """

    group_id: str
    group_type: str
    state: str
    protocol_type: str
    assignor: str
    coordinator: int
    members: tuple[GroupMember, ...] = ()
    epoch: int | None = None

    @property
    def empty(self) -> bool:
        return not self.members
