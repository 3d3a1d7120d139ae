"""Demo data: a realistic small estate of topics, configs, ACLs, consumer groups with lag, and data."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from kafka.record.memory_records import MemoryRecordsBuilder

from sandbox import replication
from sandbox.state import Batch

if TYPE_CHECKING:
    from sandbox.cluster import SandboxCluster

# name, partitions, replication factor, topic configs, synthetic bytes/s
TOPICS: list[tuple[str, int, int, dict[str, str], float]] = [
    (
        "__consumer_offsets",
        50,
        3,
        {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"},
        2_000,
    ),
    ("orders", 12, 3, {"retention.ms": "604800000", "min.insync.replicas": "2"}, 400_000),
    (
        "payments.events",
        6,
        3,
        {"min.insync.replicas": "2", "cleanup.policy": "delete", "retention.ms": "1209600000"},
        150_000,
    ),
    ("inventory.snapshots", 6, 3, {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.2"}, 50_000),
    (
        "logs.app",
        24,
        2,
        {"retention.ms": "86400000", "compression.type": "zstd", "segment.bytes": "268435456"},
        1_500_000,
    ),
    ("team-a.clicks", 6, 3, {"retention.ms": "259200000"}, 250_000),
    ("team-a.audit", 3, 3, {"cleanup.policy": "compact,delete"}, 5_000),
    ("team-b.notifications", 4, 2, {}, 20_000),
    ("legacy.unused", 1, 1, {}, 0),
]
# (resource type, name, pattern type, principal, host, operation, permission)
ACLS = [
    (2, "team-a.", 4, "User:alice", "*", 3, 3),
    (2, "team-a.", 4, "User:alice", "*", 4, 3),
    (3, "team-a.", 4, "User:alice", "*", 3, 3),
    (2, "orders", 3, "User:orders-service", "*", 4, 3),
    (2, "orders", 3, "User:billing", "*", 3, 3),
    (3, "billing", 3, "User:billing", "*", 3, 3),
    (2, "payments.events", 3, "User:bob", "*", 3, 2),
    (2, "*", 3, "User:monitoring", "10.0.0.5", 8, 3),
    (4, "kafka-cluster", 3, "User:ops", "*", 7, 3),
]


def _seed_records(cluster: SandboxCluster, topic: str, count: int) -> None:
    """Real JSON records so a console consumer reading recent messages sees something."""
    t = cluster.state.topics[topic]
    for i in range(count):
        p = t.partitions[i % len(t.partitions)]
        builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 16, offset=p.end_offset)
        value = {"order_id": 100000 + i, "amount": round(10 + (i * 7.31) % 490, 2), "currency": "EUR"}
        builder.append(
            timestamp=int(cluster.state.now_ms),
            key=f"order-{i}".encode(),
            value=json.dumps(value).encode(),
            headers=[],
        )
        builder.close()
        data = bytes(builder.buffer())
        p.keep(Batch(p.end_offset, p.end_offset, data))
        replication.append(p, len(data), 1)


def load_demo(cluster: SandboxCluster) -> None:
    """Populate a running (or not yet started) cluster with the demo estate."""
    brokers = len(cluster.state.brokers)
    for name, parts, rf, cfg, rate in TOPICS:
        if name in cluster.state.topics:
            continue
        cluster.create_topic(name, parts, min(rf, brokers), cfg)
        cluster.state.topics[name].synthetic_bytes_per_s = rate
    with cluster.state.lock:
        cluster.state.acls.extend(a for a in _acl_bindings() if a not in cluster.state.acls)
        cluster.state.broker_configs[""]["log.cleaner.threads"] = "2"
        cluster.state.broker_configs.setdefault("1", {})["num.io.threads"] = "16"
        replication.tick(cluster.state, 600.0)  # ten virtual minutes of traffic
        _seed_records(cluster, "orders", 200)
    orders = cluster.state.topics["orders"]
    cluster.add_group(
        "billing",
        {
            "billing-1": [("orders", p) for p in range(0, 6)],
            "billing-2": [("orders", p) for p in range(6, 12)],
        },
        {("orders", p.index): max(0, p.end_offset - 150 * (p.index + 1)) for p in orders.partitions},
        consume_ratio=1.0,
    )
    clicks = cluster.state.topics["team-a.clicks"]
    cluster.add_group(
        "team-a.sessionizer",
        {"sessionizer-1": [("team-a.clicks", p.index) for p in clicks.partitions]},
        {("team-a.clicks", p.index): p.end_offset - 5 for p in clicks.partitions},
        consume_ratio=0.97,  # falls slowly behind
    )
    cluster.add_group(
        "analytics-batch",
        {},
        {("logs.app", p.index): p.end_offset // 2 for p in cluster.state.topics["logs.app"].partitions},
    )


def _acl_bindings() -> list:
    from sandbox.state import AclBinding

    return [AclBinding(*a) for a in ACLS]
