"""Plain in-memory model of a sandbox Kafka cluster (nodes, topics, partitions, ACLs, groups).

Everything here is data plus small helpers; protocol handlers and the replication model
mutate it while holding ``ClusterState.lock``.
"""

from __future__ import annotations

import copy
import string
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from sandbox.scram_store import ScramCredentials

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
AVG_RECORD_BYTES = 1024  # used to turn synthetic byte rates into offsets
LEGAL_TOPIC_CHARS = frozenset(string.ascii_letters + string.digits + "._-")
# A follower level with the leader joins the ISR this long after (on Kafka: the leader's next
# fetch handling plus its AlterPartition round trip to the controller, typically well under 1 s)
ISR_JOIN_DELAY_S = 0.5
FETCH_RETAIN_BATCHES = 2000  # produced record batches kept per partition for Fetch


def topic_name_error(name: str | None) -> str | None:
    """Kafka's message for an illegal topic name, None when legal."""
    if not name:
        return "Topic name is invalid: the empty string is not allowed"
    if name in (".", ".."):
        return f"Topic name is invalid: '{name}' is not allowed"
    if len(name) > 249:
        return f"Topic name is invalid: the length of '{name}' is longer than the max allowed length 249"
    if not LEGAL_TOPIC_CHARS.issuperset(name):
        return (
            f"Topic name is invalid: '{name}' contains one or more characters other than "
            "ASCII alphanumerics, '.', '_' and '-'"
        )
    return None


@dataclass(slots=True)
class Node:
    """A broker (id 1..N) or a dedicated controller (id 101..)."""

    node_id: int
    port: int
    rack: str | None = None
    is_controller: bool = False
    up: bool = True
    host: str = "127.0.0.1"
    log_dir: str = ""
    # JBOD (KIP-113): a broker's log dirs (empty: just ``log_dir``) and those that failed (offline)
    log_dirs: list[str] = field(default_factory=list)
    offline_dirs: set[str] = field(default_factory=set)
    # controller quorum bookkeeping (virtual ms)
    log_end_offset: int = 0
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1


@dataclass(slots=True)
class Batch:
    """A produced record batch kept verbatim so Fetch can return it."""

    base_offset: int
    last_offset: int
    data: bytes


@dataclass(slots=True)
class Partition:
    """One partition: replica placement, ISR, leader and per-replica log sizes."""

    index: int
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    # bytes held by each replica; the leader's entry is the log size
    sizes: dict[int, float] = field(default_factory=dict)
    log_start_offset: int = 0
    end_offset: int = 0
    # reassignment in progress (KIP-455)
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)
    batches: deque[Batch] | None = None  # created on the first produce (most partitions never get one)
    # bytes copied per virtual second by each follower during the last tick (for rates)
    max_timestamp: int = -1
    topic: str = ""
    # follower -> virtual ms it caught up with the leader while still outside the ISR: Kafka adds
    # it to the ISR only after the leader's AlterPartition round trip (ISR_JOIN_DELAY_S here)
    caught_up_ms: dict[int, float] | None = None
    txns: Any = None  # sandbox.transactions.PartitionTxns: producer state, open/aborted transactions
    # JBOD (sandbox/logdirs.py): broker -> its replica's log dir, when moved or placed (else the default
    # spread), and broker -> [target dir, bytes copied] of a future replica (AlterReplicaLogDirs)
    dirs: dict[int, str] | None = None
    futures: dict[int, list[Any]] | None = None

    def keep(self, batch: Batch) -> None:
        """Keep a produced batch for Fetch (the most recent FETCH_RETAIN_BATCHES per partition)."""
        if self.batches is None:
            self.batches = deque(maxlen=FETCH_RETAIN_BATCHES)
        self.batches.append(batch)

    @property
    def preferred(self) -> int:
        """The preferred leader: the first replica."""
        return self.replicas[0]

    def leader_size(self) -> float:
        """Bytes in the leader's log (or the largest replica when offline)."""
        if self.leader >= 0:
            return self.sizes.get(self.leader, 0.0)
        return max(self.sizes.values(), default=0.0)

    def replica_offset(self, broker: int) -> int:
        """Log end offset of a replica, proportional to the bytes it holds."""
        lead = self.leader_size()
        size = self.sizes.get(broker, 0.0)
        if lead <= 0 or size >= lead:
            return self.end_offset
        return self.log_start_offset + int((self.end_offset - self.log_start_offset) * size / lead)


@dataclass(slots=True)
class Topic:
    """A topic with its id, configs overrides and partitions."""

    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, str] = field(default_factory=dict)
    synthetic_bytes_per_s: float = 0.0

    @property
    def internal(self) -> bool:
        """Internal topics are flagged in Metadata."""
        return self.name in INTERNAL_TOPICS

    @property
    def replication_factor(self) -> int:
        """RF of the first partition (Kafka reports it that way too)."""
        return len(self.partitions[0].replicas) if self.partitions else 0


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: resource pattern plus access control entry (Kafka enum codes)."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(slots=True)
class GroupMember:
    """A synthetic consumer group member."""

    member_id: str
    client_id: str
    client_host: str
    assignment: list[tuple[str, int]]


@dataclass(slots=True)
class LiveMember:
    """A member that joined through the classic group protocol (JoinGroup/SyncGroup)."""

    member_id: str
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocols: dict[str, bytes] = field(default_factory=dict)
    assignment: bytes = b""
    last_seen: float = 0.0  # time.monotonic()
    joined: bool = False  # rejoined for the pending generation
    generation: int = -1  # generation whose JoinGroup answer it got


@dataclass(slots=True)
class ConsumerMember:
    """A member of a KIP-848 consumer group (ConsumerGroupHeartbeat), as Kafka's
    ConsumerGroupMember: epochs, subscription, assigned partitions and those still to revoke
    (topic id -> partitions), its reconciliation state (MemberState)."""

    member_id: str
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    instance_id: str | None = None
    rack_id: str | None = None
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str = ""
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: str = "stable"  # stable / unrevoked_partitions / unreleased_partitions
    assigned: dict[uuid.UUID, set[int]] = field(default_factory=dict)
    pending_revocation: dict[uuid.UUID, set[int]] = field(default_factory=dict)
    last_seen: float = 0.0  # time.monotonic() of the last heartbeat (session timeout)
    revoke_deadline: float | None = None  # rebalance timeout while partitions are being revoked


@dataclass(slots=True)
class Group:
    """A consumer group: synthetic members and/or live members, committed offsets.

    ``type`` is Kafka's group type: "classic" (JoinGroup/SyncGroup, synthetic members) or
    "consumer" (KIP-848: ``consumers``, group and assignment epochs, target assignments)."""

    group_id: str
    state: str = "Stable"
    protocol_type: str = "consumer"
    protocol: str = "range"
    members: list[GroupMember] = field(default_factory=list)
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    # synthetic consumption: committed offsets follow the produced records at this ratio
    consume_ratio: float = 0.0
    seen_end: dict[tuple[str, int], int] = field(default_factory=dict)
    live: dict[str, LiveMember] = field(default_factory=dict)
    generation: int = 0
    leader: str = ""
    rebalance_started: float = 0.0
    type: str = "classic"
    consumers: dict[str, ConsumerMember] = field(default_factory=dict)
    group_epoch: int = 0
    assignment_epoch: int = 0
    targets: dict[str, dict[uuid.UUID, set[int]]] = field(default_factory=dict)
    subscribed_metadata: tuple[
        Any, ...
    ] = ()  # subscribed topics (name, id, partitions) at the last epoch bump


class ClusterState:
    """The whole cluster. Mutate only while holding ``lock``; bump ``generation`` on changes."""

    def __init__(self, cluster_id: str) -> None:
        self.lock = threading.RLock()
        self.cluster_id = cluster_id
        self.brokers: dict[int, Node] = {}
        self.controllers: dict[int, Node] = {}
        self.topics: dict[str, Topic] = {}
        self.topic_ids: dict[uuid.UUID, str] = {}
        # dynamic broker configs: "" is the cluster default, "1" broker 1, ... (as the controller committed them)
        self.broker_configs: dict[str, dict[str, str]] = {"": {}}
        # Kafka's brokers apply a committed broker config when they replay the metadata log, after the
        # controller has answered the change: this long later here (0 = at once). See commit_broker_configs.
        self.broker_config_lag_s: float = 0.0
        # (dynamic maps updated at, current config updated at, resource, configs before)
        self._unapplied: list[tuple[float, float, str, dict[str, str]]] = []
        self.logger_levels: dict[int, dict[str, str]] = {}
        self.acls: list[AclBinding] = []
        # client quotas (KIP-546): entity as sorted (type, name) pairs, name None = default -> {key: value}
        self.client_quotas: dict[tuple[tuple[str, str | None], ...], dict[str, float]] = {}
        # SCRAM credentials (KIP-554): AlterUserScramCredentials changes them, SCRAM logins read them
        self.scram_credentials = ScramCredentials()
        self.groups: dict[str, Group] = {}
        self.now_ms: float = time.time() * 1000.0  # virtual clock, epoch ms
        self.catching_up: set[tuple[str, int]] = set()  # partitions with lagging replicas
        self.dir_moves: set[tuple[str, int, int]] = set()  # (topic, partition, broker) with a future replica
        self.generation = 0  # bumped on every metadata change (cache key)
        self.all_dirty = True  # Metadata's per-topic cache must be rebuilt entirely
        self.dirty_topics: set[str] = set()  # ... or only for these topics
        self.meta_cache: Any = None  # owned by handlers.meta
        # broker -> {(topic, partition): Partition}: which replicas each broker hosts
        self._index: dict[int, dict[tuple[str, int], Partition]] | None = None
        self.bandwidth_bytes_per_s: float = 50 * 1024 * 1024
        self.static_configs: dict[str, str] = {}  # server.properties lines every broker shares
        self.isr_join_delay_s: float = ISR_JOIN_DELAY_S
        self.active_controller: int = -1
        self.quorum_epoch = 1
        self.metadata_offset = 0
        self.features: dict[str, int] = {  # finalized levels, in Kafka 4.1's order
            "group.version": 1,
            "transaction.version": 2,
            "eligible.leader.replicas.version": 1,
            "kraft.version": 1,
            "metadata.version": 27,
        }
        self.features_epoch = 1
        # KIP-853: controllers removed from the voter set (they fetch on as observers); brokers whose
        # registration was removed while stopped (UnregisterBroker; a live broker registers again at once)
        self.removed_voters: set[int] = set()
        self.unregistered_brokers: set[int] = set()
        self.next_producer_id = 1000
        self.transactions: Any = None  # sandbox.transactions.Coordinator, created on first use
        self.next_rebalance_ms: float = -1  # next automatic preferred-leader rebalance

    def __deepcopy__(self, memo: dict[int, Any]) -> ClusterState:
        """A detached copy (new lock), used to run a handler whose effects must be discarded."""
        clone = ClusterState.__new__(ClusterState)
        for key, value in self.__dict__.items():
            if key == "lock":
                clone.lock = threading.RLock()
            elif key == "meta_cache":
                clone.meta_cache = None
            else:
                clone.__dict__[key] = copy.deepcopy(value, memo)
        clone.all_dirty = True
        return clone

    def touch(self, topic: str | None = None) -> None:
        """Record a metadata change of one topic (or of everything when None)."""
        self.generation += 1
        self.metadata_offset += 1
        if topic is None:
            self.all_dirty = True
        else:
            self.dirty_topics.add(topic)

    def replicas_on(self, broker: int) -> list[Partition]:
        """Every partition a broker hosts a replica of (index kept up to date incrementally)."""
        if self._index is None:
            self._index = {}
            for t in self.topics.values():
                for p in t.partitions:
                    self.index(p, add=p.replicas)
        return list(self._index.get(broker, {}).values())

    def index(self, p: Partition, add: list[int] = (), remove: list[int] = ()) -> None:  # type: ignore[assignment]
        """Record replicas added to / removed from brokers in the per-broker index."""
        if self._index is None:
            return
        key = (p.topic, p.index)
        for b in remove:
            self._index.get(b, {}).pop(key, None)
        for b in add:
            self._index.setdefault(b, {})[key] = p

    def reset_index(self) -> None:
        """Forget the per-broker index (rebuilt on next use), e.g. after loading a state file."""
        self._index = None

    def set_replicas(self, p: Partition, replicas: list[int]) -> None:
        """Change a partition's replica list, keeping the per-broker index in step."""
        old = p.replicas
        p.replicas = replicas
        self.index(p, add=[b for b in replicas if b not in old], remove=[b for b in old if b not in replicas])

    def commit_broker_configs(self, name: str, configs: dict[str, str]) -> None:
        """The controller commits a resource's dynamic broker configs; brokers apply them lag seconds later.

        In two steps, as Kafka's DynamicBrokerConfig: the dynamic maps (a describe's synonyms and
        source) at half the lag, the broker's current config (a describe's value) at the full lag.
        """
        lag = self.broker_config_lag_s
        if lag > 0:
            now = time.monotonic()
            before = dict(self.broker_configs.get(name, {}))
            self._unapplied.append((now + lag / 2, now + lag, name, before))
        self.broker_configs[name] = configs
        self.record()

    def catch_up_broker_configs(self) -> None:
        """Every broker applies every committed broker config now."""
        self._unapplied = []

    def applied_broker_configs(self, name: str, *, maps: bool = False) -> dict[str, str]:
        """A resource's dynamic broker configs as the brokers have applied them to their current config
        (``maps``: to their dynamic config maps, which a describe's synonyms show a little earlier)."""
        if self._unapplied:
            now = time.monotonic()
            self._unapplied = [u for u in self._unapplied if u[1] > now]
            for maps_at, _, resource, before in self._unapplied:  # the oldest change not applied yet
                if resource == name and (not maps or maps_at > now):
                    return before
        return self.broker_configs.get(name, {})

    def record(self) -> None:
        """Record a change that is not visible in Metadata (configs, ACLs, features)."""
        self.metadata_offset += 1

    def live_brokers(self) -> list[int]:
        """Ids of brokers that are up, sorted."""
        return sorted(b for b, n in self.brokers.items() if n.up)

    def add_topic(
        self,
        name: str,
        assignment: list[list[int]],
        configs: dict[str, str],
        topic_id: uuid.UUID | None = None,
    ) -> Topic:
        """Create a topic with the given replica assignment (leader = first live replica)."""
        tid = topic_id or uuid.uuid4()
        parts = []
        for i, reps in enumerate(assignment):
            live = [b for b in reps if self.brokers.get(b) and self.brokers[b].up]
            parts.append(
                Partition(
                    index=i,
                    replicas=list(reps),
                    isr=live or [reps[0]],
                    leader=live[0] if live else -1,
                    sizes={b: 0.0 for b in reps},
                    topic=name,
                )
            )
        topic = Topic(name=name, topic_id=tid, partitions=parts, configs=dict(configs))
        self.topics[name] = topic
        self.topic_ids[tid] = name
        for p in parts:
            self.index(p, add=p.replicas)
        self.touch(name)
        return topic

    def remove_topic(self, name: str) -> None:
        """Delete a topic and its group offsets."""
        topic = self.topics.pop(name)
        self.topic_ids.pop(topic.topic_id, None)
        for g in self.groups.values():
            for key in [k for k in g.offsets if k[0] == name]:
                del g.offsets[key]
        for p in topic.partitions:
            self.index(p, remove=p.replicas)
        self.touch(name)

    def partition(self, topic: str, index: int) -> Partition | None:
        """Look up a partition, None when topic or index is unknown."""
        t = self.topics.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            return None
        return t.partitions[index]
