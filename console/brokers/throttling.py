"""Replication throttles in effect per broker: its rates, and the topics whose throttled-replicas
configs name it. Read through the reassignment area's reader (``throttles.current_values``), over
every topic and broker, once per metadata snapshot; ``throttles_by_broker`` is the pure part."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from console.brokers.figures import forget, per_snapshot
from console.brokers.query import parse_broker_id
from console.clusters.actions import gateway_for
from console.formatting import human_config_value
from console.kafka import ConfigResource, KafkaOperationError
from console.kafka.deferred import placement
from console.reassignment import planner
from console.reassignment import throttles as reassign_throttles

# -- what is in effect -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThrottledTopic:
    """A topic whose throttled-replicas configs name this broker (``*``: every replica)."""

    topic: str
    leader: tuple[int, ...] = ()  # partitions whose replica here is throttled as a leader (source)
    follower: tuple[int, ...] = ()  # ... as a follower (a replica being copied here)
    leader_all: bool = False
    follower_all: bool = False

    def leader_covers(self, partition: int) -> bool:
        return self.leader_all or partition in self.leader

    def follower_covers(self, partition: int) -> bool:
        return self.follower_all or partition in self.follower

    @property
    def leader_text(self) -> str:
        return "all" if self.leader_all else ", ".join(map(str, self.leader))

    @property
    def follower_text(self) -> str:
        return "all" if self.follower_all else ", ".join(map(str, self.follower))


@dataclass(frozen=True)
class BrokerThrottles:
    """The replication throttles in effect on one broker."""

    leader_rate: str | None = None  # leader.replication.throttled.rate (a per-broker override), bytes/s
    follower_rate: str | None = None
    topics: tuple[ThrottledTopic, ...] = ()
    error: KafkaOperationError | None = None  # this broker's rates could not be read

    @property
    def active(self) -> bool:
        return bool(self.leader_rate or self.follower_rate or self.topics)

    @property
    def limits(self) -> bool:
        """Whether replication is slowed here: Kafka throttles only the listed replicas, and only
        at a rate set on the broker (without one the limit is Long.MAX_VALUE)."""
        listed_leader = any(t.leader or t.leader_all for t in self.topics)
        listed_follower = any(t.follower or t.follower_all for t in self.topics)
        return bool((self.leader_rate and listed_leader) or (self.follower_rate and listed_follower))

    @property
    def leader_rate_text(self) -> str | None:
        return _rate_text(reassign_throttles.LEADER_RATE, self.leader_rate)

    @property
    def follower_rate_text(self) -> str | None:
        return _rate_text(reassign_throttles.FOLLOWER_RATE, self.follower_rate)

    def topic(self, name: str) -> ThrottledTopic | None:
        return next((t for t in self.topics if t.topic == name), None)


def _rate_text(config: str, value: str | None) -> str | None:
    return None if value is None else (human_config_value(config, value) or value)


@dataclass(frozen=True)
class ThrottleState:
    """Every broker's throttles, read once per snapshot."""

    by_broker: dict[int, BrokerThrottles] = field(default_factory=dict)
    error: KafkaOperationError | None = None  # the topics' throttles could not be read at all

    def of(self, broker: int) -> BrokerThrottles:
        return self.by_broker.get(broker) or BrokerThrottles()


def _entries(value: str | None) -> tuple[bool, dict[int, set[int]]]:
    """A throttled-replicas value: ("*" given, {broker: partitions})."""
    every, named = False, {}
    for item in planner.throttle_entries(value):
        if item == "*":
            every = True
            continue
        partition, _, broker = item.partition(":")
        try:
            named.setdefault(int(broker), set()).add(int(partition))
        except ValueError:
            continue  # not "partition:broker": Kafka would not have accepted it; ignore
    return every, named


def throttles_by_broker(
    values: Mapping[tuple[ConfigResource, str], str | None],
    hosts: Mapping[str, set[int]] | _Hosts,
    errors: Mapping[ConfigResource, KafkaOperationError] | None = None,
    broker_ids: Iterable[int] = (),
) -> dict[int, BrokerThrottles]:
    """Per broker: its rates and the topics naming it (pure).

    ``values`` is the reassignment area's reader output ``{(resource, config): override or None}``;
    ``hosts`` maps a topic to the brokers hosting it (for ``*``). A cluster-wide default rate
    (``BROKER ""``) is in effect on each of ``broker_ids`` without a rate of its own.
    """
    defaults = {
        config: value
        for (res, config), value in values.items()
        if res.type == "BROKER" and res.name == "" and value is not None
    }
    rates: dict[int, dict[str, str]] = {b: dict(defaults) for b in broker_ids} if defaults else {}
    per_topic: dict[int, dict[str, dict[str, object]]] = {}
    for (res, config), value in values.items():
        if value is None:
            continue
        if res.type == "BROKER" and config in reassign_throttles.RATE_CONFIGS:
            broker = parse_broker_id(res.name)
            if broker is not None:
                rates.setdefault(broker, {})[config] = value
        elif res.type == "TOPIC" and config in reassign_throttles.REPLICA_CONFIGS:
            role = "leader" if config == reassign_throttles.LEADER_REPLICAS else "follower"
            every, named = _entries(value)
            brokers = set(named) | (hosts.get(res.name, set()) if every else set())
            for broker in brokers:
                slot = per_topic.setdefault(broker, {}).setdefault(res.name, {})
                if every:
                    slot[f"{role}_all"] = True
                slot[role] = tuple(sorted(named.get(broker, ())))
    broker_errors = {
        b: err
        for res, err in (errors or {}).items()
        if res.type == "BROKER" and (b := parse_broker_id(res.name)) is not None
    }
    out = {}
    for broker in sorted(set(rates) | set(per_topic) | set(broker_errors)):
        r = rates.get(broker, {})
        topics = tuple(
            ThrottledTopic(name, **slot)  # type: ignore[arg-type]
            for name, slot in sorted(per_topic.get(broker, {}).items())
        )
        out[broker] = BrokerThrottles(
            r.get(reassign_throttles.LEADER_RATE),
            r.get(reassign_throttles.FOLLOWER_RATE),
            topics,
            broker_errors.get(broker),
        )
    return out


class _Hosts:
    """The brokers hosting a topic of the snapshot, read (as placement, no ``PartitionMetadata``)
    only for the topics whose throttled-replicas value is ``*``: walking every partition's replicas
    of a 1,000,000-partition cluster for the few such topics cost seconds of the Brokers page."""

    def __init__(self, snap) -> None:
        self._by_name = snap.by_name

    def get(self, name: str, default: set[int] | None = None) -> set[int] | None:
        topic = self._by_name.get(name)
        if topic is None:
            return default
        placed = placement(topic, range(topic.health().partitions)).values()
        return {broker for _, replicas in placed for broker in replicas}


def _read_throttles(cluster, snap, broker_ids: list[int]) -> ThrottleState:
    gw = gateway_for(cluster)
    resources = [ConfigResource("TOPIC", name) for name in snap.names]
    resources += [ConfigResource("BROKER", str(b)) for b in broker_ids]
    resources.append(ConfigResource("BROKER", ""))  # the cluster-wide default rates
    errors: dict[ConfigResource, KafkaOperationError] = {}
    try:
        values = reassign_throttles.current_values(
            gw,
            resources,
            reassign_throttles.REPLICA_CONFIGS + reassign_throttles.RATE_CONFIGS,
            strict=False,
            errors=errors,
        )
    except KafkaOperationError as exc:
        return ThrottleState(error=exc)
    topic_errors = [e for res, e in errors.items() if res.type == "TOPIC"]
    state = ThrottleState(
        throttles_by_broker(values, _Hosts(snap), errors, broker_ids),
        # a topic deleted since the snapshot is no error; anything else is said once
        next((e for e in topic_errors if e.name != "UNKNOWN_TOPIC_OR_PARTITION"), None),
    )
    return state


def throttle_state(cluster, snap, broker_ids: list[int]) -> ThrottleState:
    """The throttles of every broker, read once per metadata snapshot (a failed read is retried)."""
    key = "throttles:" + ",".join(map(str, broker_ids))
    state = per_snapshot(snap, key, lambda: _read_throttles(cluster, snap, broker_ids))
    if state.error is not None:
        forget(snap, key)
    return state
