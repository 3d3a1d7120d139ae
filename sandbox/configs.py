"""Topic and broker config definitions (captured from Apache Kafka 4.1), resolution and validation.

``data/kafka41_configs.json`` holds every topic/broker config Kafka 4.1 describes: name, type,
default, read-only, sensitive, broker synonyms and documentation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sandbox.state import ClusterState, Node, Topic

# ConfigSource codes (DescribeConfigs v1+)
TOPIC_CONFIG, DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC_BROKER, DEFAULT, BROKER_LOGGER = 1, 2, 3, 4, 5, 6
# ConfigType codes (DescribeConfigs v3+)
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = 1, 2, 3, 4, 5, 6, 7, 8, 9
TYPE_NAMES = {INT: "INT", SHORT: "SHORT", LONG: "LONG", DOUBLE: "DOUBLE"}
LOG_LEVELS = ("DEBUG", "ERROR", "FATAL", "INFO", "TRACE", "WARN")


@dataclass(frozen=True, slots=True)
class ConfigDef:
    """One config key as Kafka describes it."""

    name: str
    type: int
    default: str | None
    doc: str
    read_only: bool = False
    sensitive: bool = False
    synonyms: tuple[str, ...] = ()


_TYPE_NAMES = {
    1: "boolean",
    2: "string",
    3: "int",
    4: "short",
    5: "long",
    6: "double",
    7: "list",
    8: "class",
    9: "password",
}


def describe_doc(d: ConfigDef) -> str:
    """A short documentation line of our own (the sandbox does not carry Kafka's documentation text)."""
    if d.doc:
        return d.doc
    default = "none" if d.default is None else f"'{d.default}'"
    return f"{d.name}: a {_TYPE_NAMES.get(d.type, 'value')} setting, default {default} (see Apache Kafka's documentation)."


def _load() -> tuple[dict[str, ConfigDef], dict[str, ConfigDef], list[str]]:
    raw = json.loads((Path(__file__).parent / "data" / "kafka41_configs.json").read_text())
    topic = {n: ConfigDef(n, t, d, doc, synonyms=tuple(s)) for n, t, d, s, doc in raw["topic"]}
    broker = {n: ConfigDef(n, t, d, doc, ro, sens) for n, t, ro, sens, d, doc in raw["broker"]}
    return topic, broker, raw["loggers"]


TOPIC_DEFS, BROKER_DEFS, LOGGERS = _load()
THROTTLE_RATE_DOC = (
    "Bytes per second this broker may spend replicating the {} listed in each topic's "
    "{}.replication.throttled.replicas. Dynamic only."
)
# broker configs that exist only as dynamic configs (described only once set)
DYNAMIC_ONLY = {
    "leader.replication.throttled.rate": ConfigDef(
        "leader.replication.throttled.rate", LONG, None, THROTTLE_RATE_DOC.format("leaders", "leader")
    ),
    "follower.replication.throttled.rate": ConfigDef(
        "follower.replication.throttled.rate", LONG, None, THROTTLE_RATE_DOC.format("followers", "follower")
    ),
    "replica.alter.log.dirs.io.max.bytes.per.second": ConfigDef(
        "replica.alter.log.dirs.io.max.bytes.per.second",
        LONG,
        None,
        "Bytes per second this broker may spend copying replicas from one of its log "
        "directories to another. Dynamic only.",
    ),
}
ENUMS = {
    "cleanup.policy": ("compact", "delete"),
    "compression.type": ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "message.timestamp.type": ("CreateTime", "LogAppendTime"),
}
AT_LEAST = {
    "retention.ms": -1,
    "segment.bytes": 1048576,
    "segment.ms": 1,
    "min.insync.replicas": 1,
    "max.message.bytes": 0,
    "delete.retention.ms": 0,
    "file.delete.delay.ms": 0,
    "flush.messages": 1,
    "flush.ms": 0,
    "index.interval.bytes": 0,
    "segment.index.bytes": 4,
    "segment.jitter.ms": 0,
    "min.compaction.lag.ms": 0,
    "max.compaction.lag.ms": 1,
    "local.retention.ms": -2,
    "local.retention.bytes": -2,
    "message.timestamp.before.max.ms": 0,
    "message.timestamp.after.max.ms": 0,
    "leader.replication.throttled.rate": 0,
    "follower.replication.throttled.rate": 0,
    "num.io.threads": 1,
    "num.network.threads": 1,
    "message.max.bytes": 0,
}
THROTTLED_REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def static_broker_configs(st: ClusterState, node: Node) -> dict[str, str]:
    """Static (server.properties) values of a node, as Kafka would report them."""
    cfg = {
        "node.id": str(node.node_id),
        "broker.id": str(node.node_id),
        "log.dirs": ",".join(node.log_dirs) or node.log_dir,
        "process.roles": "controller" if node.is_controller else "broker",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.bootstrap.servers": ",".join(
            f"{c.host}:{c.port}" for c in st.controllers.values()
        ),
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "offsets.topic.replication.factor": str(min(3, max(1, len(st.brokers)))),
        "transaction.state.log.replication.factor": str(min(3, max(1, len(st.brokers)))),
        "group.initial.rebalance.delay.ms": "0",
    }
    if not node.is_controller:
        cfg.update(st.static_configs)
    if node.is_controller:
        cfg["listeners"] = f"CONTROLLER://{node.host}:{node.port}"
    else:
        cfg["listeners"] = cfg["advertised.listeners"] = f"PLAINTEXT://{node.host}:{node.port}"
        cfg["inter.broker.listener.name"] = "PLAINTEXT"
    if node.rack:
        cfg["broker.rack"] = node.rack
    return cfg


def _node(st: ClusterState, node_id: int) -> Node | None:
    return st.brokers.get(node_id) or st.controllers.get(node_id)


# Kafka's DynamicBrokerConfig.brokerConfigSynonyms: keys that set the same thing in other units.
BROKER_SYNONYMS = {
    **dict.fromkeys(("log.roll.ms", "log.roll.hours"), ("log.roll.ms", "log.roll.hours")),
    **dict.fromkeys(
        ("log.roll.jitter.ms", "log.roll.jitter.hours"), ("log.roll.jitter.ms", "log.roll.jitter.hours")
    ),
    "log.flush.interval.ms": ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    **dict.fromkeys(
        ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
        ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    ),
}


def broker_layers(
    st: ClusterState, node_id: int, name: str, *, maps: bool = False
) -> list[tuple[str, str | None, int]]:
    """(name, value, source) synonyms of a broker config, as Kafka's ConfigHelper lists them.

    Source by source (per-broker, cluster default, static, built-in default), each over the key's
    synonyms in Kafka's order, from the key itself on: log.retention.ms set per broker lists
    log.retention.hours (default) after it, and an unset log.retention.ms lists nothing. ``maps``: as
    the broker's dynamic config maps hold them (a describe's synonyms), else its current config.
    """
    names = BROKER_SYNONYMS.get(name, (name,))
    node = _node(st, node_id)
    defaults = {
        n: d.default for n in names if (d := BROKER_DEFS.get(n)) is not None and d.default is not None
    }
    sources = (
        (st.applied_broker_configs(str(node_id), maps=maps), DYNAMIC_BROKER),
        (st.applied_broker_configs("", maps=maps), DYNAMIC_DEFAULT),
        (static_broker_configs(st, node) if node is not None else {}, STATIC_BROKER),
        (defaults, DEFAULT),
    )
    out: list[tuple[str, str | None, int]] = [(n, m[n], src) for m, src in sources for n in names if n in m]
    while out and out[0][0] != name:  # Kafka drops the synonyms before the key's own first entry
        out.pop(0)
    return out


def broker_value(st: ClusterState, node_id: int, name: str) -> str | None:
    """Effective value of a broker config on ``node_id``."""
    layers = broker_layers(st, node_id, name)
    return layers[0][1] if layers else None


def topic_layers(
    st: ClusterState,
    topic: Topic,
    name: str,
    node_id: int,
    brokers: dict[str, list[tuple[str, str | None, int]]] | None = None,
) -> list[tuple[str, str | None, int]]:
    """(name, value, source) synonyms of a topic config: override, then broker synonyms.

    ``brokers``: the node's broker layers already worked out, by synonym, filled in here (one
    DescribeConfigs of every topic asks the same broker configs for each topic: at 20,000 topics
    they were worked out again for every topic and config)."""
    out: list[tuple[str, str | None, int]] = []
    if name in topic.configs:
        out.append((name, topic.configs[name], TOPIC_CONFIG))
    d = TOPIC_DEFS[name]
    for syn in d.synonyms:
        if brokers is None:
            out.extend(broker_layers(st, node_id, syn))
            continue
        got = brokers.get(syn)
        if got is None:
            got = brokers[syn] = broker_layers(st, node_id, syn)
        out.extend(got)
    return out


def topic_value(st: ClusterState, topic: Topic, name: str, node_id: int) -> tuple[str | None, int]:
    """Effective (value, source) of a topic config."""
    layers = topic_layers(st, topic, name, node_id)
    if layers:
        return layers[0][1], layers[0][2]
    return TOPIC_DEFS[name].default, DEFAULT


def _type_error(name: str, value: str, typ: int) -> str | None:
    try:
        if typ in (INT, SHORT, LONG):
            int(value.strip())
        elif typ == DOUBLE:
            float(value.strip())
        elif typ == BOOLEAN and value.strip().lower() not in ("true", "false"):
            return (
                f"Invalid value {value} for configuration {name}: Expected value to be either true or false"
            )
    except ValueError:
        return f"Invalid value {value} for configuration {name}: Not a number of type {TYPE_NAMES[typ]}"
    return None


def validate_value(name: str, value: str, typ: int) -> str | None:
    """Kafka's ConfigDef parse/validator message for a bad value, or None when valid."""
    err = _type_error(name, value, typ)
    if err:
        return err
    if name in ENUMS:
        items = [v.strip() for v in value.split(",") if v.strip()] if typ == LIST else [value]
        for it in items:
            if it not in ENUMS[name]:
                return (
                    f"Invalid value {value} for configuration {name}: String must be one of: "
                    f"{', '.join(ENUMS[name])}"
                )
    if name in AT_LEAST and typ in (INT, SHORT, LONG, DOUBLE):
        if float(value) < AT_LEAST[name]:
            return f"Invalid value {value} for configuration {name}: Value must be at least {AT_LEAST[name]}"
    if name == "min.cleanable.dirty.ratio" and not 0 <= float(value) <= 1:
        bound = "be no more than 1" if float(value) > 1 else "be at least 0"
        return f"Invalid value {float(value)!r} for configuration {name}: Value must {bound}"
    if name in THROTTLED_REPLICAS:
        items = [v.strip() for v in value.split(",") if v.strip()]
        ok = value.strip() in ("", "*") or all(
            len(p := it.split(":")) == 2 and p[0].isdigit() and p[1].isdigit() for it in items
        )
        if not ok:
            return (
                f"Invalid value [{', '.join(v.strip() for v in value.split(','))}] for configuration "
                f"{name}: {name} must be the literal '*' "
                "or a list of replicas in the following format: [partitionId]:[brokerId],"
                "[partitionId]:[brokerId],..."
            )
    return None


def validate_topic_config(name: str, value: str | None) -> str | None:
    """Message for an invalid topic config (unknown key, null, bad value), None when valid."""
    d = TOPIC_DEFS.get(name)
    if d is None:
        return f"Unknown topic config name: {name}"
    if value is None:
        return f"Null value not supported for topic configs: {name}"
    return validate_value(name, value, d.type)


def broker_def(name: str) -> ConfigDef | None:
    """Definition of a broker config (static or dynamic-only)."""
    return BROKER_DEFS.get(name) or DYNAMIC_ONLY.get(name)


def validate_broker_config(name: str, value: str | None) -> str | None:
    """Message for a broker config that cannot be set dynamically or has a bad value."""
    d = broker_def(name)
    if d is None:
        return None  # Kafka accepts unknown broker keys
    if d.read_only:
        return f"Cannot update these configs dynamically: Set({name})"
    if value is None:
        return None
    return validate_value(name, value, d.type)


def validate_logger_level(name: str, value: str | None) -> str | None:
    """BROKER_LOGGER levels must be one of Kafka's log levels."""
    if value is not None and value not in LOG_LEVELS:
        return (
            f"Cannot set the log level of {name} to {value} as it is not a supported log level. "
            f"Valid log levels are {', '.join(LOG_LEVELS)}"
        )
    return None
