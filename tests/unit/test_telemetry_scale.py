"""The snapshot's columns look up each topic's sizes on the brokers that hold its replicas, not on
every broker that answered: at 1M partitions (19,810 topics on 200 brokers) the per-topic walk over
every broker's answer was 4M look-ups, growing with topics x brokers instead of with the replicas.
Counted, not timed. The values are the same either way (``test_telemetry_columns.py`` has every
awkward case)."""

from __future__ import annotations

from array import array
from datetime import UTC, datetime

from console.kafka.health import BrokerLogDirs, LogDirUsage, PartitionLayout
from console.telemetry import snapshots as telemetry

NOW = datetime(2026, 5, 4, 12, 5, tzinfo=UTC)
BROKERS, TOPICS, RF = 60, 40, 2


class CountedSizes(dict):
    """A broker's ``{topic: sizes}`` that counts the look-ups of a topic."""

    lookups = 0

    def get(self, key, default=None):
        CountedSizes.lookups += 1
        return super().get(key, default)


def estate() -> telemetry.RawSnapshot:
    """TOPICS topics of one partition each, on RF of BROKERS brokers (leader first), every broker
    answering its replicas' sizes."""
    held: dict[int, dict[str, int]] = {b: {} for b in range(1, BROKERS + 1)}
    topics = []
    for t in range(TOPICS):
        name = f"t{t:03d}"
        replicas = [(t + k) % BROKERS + 1 for k in range(RF)]
        for k, b in enumerate(replicas):
            held[b][name] = 1000 * t + k
        topics.append((name, [(0, replicas[0], replicas, replicas)]))
    layout = PartitionLayout.build(range(1, BROKERS + 1), topics)
    log_dirs = {
        b: BrokerLogDirs(
            (LogDirUsage("/d", None, sum(sizes.values())),),
            CountedSizes({name: array("q", [size]) for name, size in sizes.items()}),
        )
        for b, sizes in held.items()
    }
    return telemetry.RawSnapshot(layout, {}, {}, log_dirs, {}, {})


def test_sizes_are_looked_up_per_replica_not_per_topic_and_broker():
    raw = estate()
    CountedSizes.lookups = 0
    tables = telemetry.build_tables(raw, NOW)
    # one look-up per broker holding a replica of the topic (its leader among them); the walk over
    # every broker that answered made TOPICS x BROKERS = 2,400
    assert CountedSizes.lookups == TOPICS * RF
    rows = tables["partitions"].to_pylist()
    assert [r["replica_sizes"] for r in rows] == [[1000 * t + k for k in range(RF)] for t in range(TOPICS)]
    assert [r["size_bytes"] for r in rows] == [1000 * t for t in range(TOPICS)]
