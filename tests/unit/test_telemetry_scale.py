"""The snapshot's replica sizes are written into one array aligned with the partition layout as
each broker's DescribeLogDirs answer is read (``health.ReplicaSizes``), not kept as a map per
(broker, topic) until the tables are built: at 1M partitions (19,810 topics on 200 brokers) those
maps held ~1 GB in the batch worker. Measured by allocation, not timed; the values are checked
against every replica (``test_telemetry_columns.py`` has every awkward case)."""

from __future__ import annotations

import tracemalloc

import pytest

from console.kafka import KafkaOperationError
from console.kafka.health import PartitionLayout, ReplicaSizes
from tests.unit.log_dirs_answers import answer, encoded, log_dir

BROKERS, TOPICS, PARTITIONS, RF = 60, 400, 10, 3


def estate() -> tuple[PartitionLayout, dict[int, bytes], dict[tuple[str, int, int], int]]:
    """TOPICS x PARTITIONS partitions on RF of BROKERS brokers, each broker's answer encoded, and
    every replica's size ``{(topic, partition, broker): size}``."""
    held: dict[int, list] = {b: [] for b in range(1, BROKERS + 1)}
    want = {}
    topics = []
    for t in range(TOPICS):
        name = f"t{t:03d}"
        parts = []
        for p in range(PARTITIONS):
            replicas = [(t * 7 + p + k * 20) % BROKERS + 1 for k in range(RF)]
            for b in replicas:
                size = want[(name, p, b)] = 1_000_000 * t + 1000 * p + b
                held[b].append((name, p, size, 0, False))
            parts.append((p, replicas[0], replicas, replicas))
        topics.append((name, parts))
    layout = PartitionLayout.build(range(1, BROKERS + 1), topics)
    answers = {b: encoded(4, [log_dir("/d", records)]) for b, records in held.items()}
    return layout, answers, want


def test_every_replicas_size_lands_in_its_slot_without_a_map_per_broker_and_topic():
    layout, answers, want = estate()
    sizes = ReplicaSizes(layout)
    tracemalloc.start()
    try:
        for b, data in answers.items():
            sizes.reduce(b, answer(4, data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # one broker's answer read at a time: its 200 records as tuples (~30 KB), nothing per
    # (broker, topic) kept; the old maps were ~12,000 arrays here (>1 MB)
    assert peak < 200_000, peak
    got = {}
    for name in layout.topics:
        first, count = layout.topic_rows[name]
        for row in range(first, first + count):
            for j in range(layout.replica_offsets[row], layout.replica_offsets[row + 1]):
                got[(name, layout.partition[row], layout.replicas[j])] = sizes.values[j]
    assert got == want
    leaders = sizes.leader_sizes()
    assert list(leaders) == [sizes.values[layout.replica_offsets[row]] for row in range(len(layout))]


def test_an_unreadable_answer_puts_no_size():
    layout, answers, _ = estate()
    sizes = ReplicaSizes(layout)
    data = answers[1]
    with pytest.raises(KafkaOperationError):
        sizes.reduce(1, answer(4, data[: len(data) - 40]))  # cut inside the last topic
    assert set(sizes.values) == {-1}


def test_the_layout_unpacks_one_topic_at_a_time():
    """``partition_layout`` builds from the decoder's packed topics; unpacking them all before the
    sort held every partition as tuples and lists at once (~400 MB at 1M partitions)."""
    import marshal

    packed = {
        f"t{t:04d}": marshal.dumps(
            [
                (p, p % 30 + 1, [p % 30 + 1, (p + 1) % 30 + 1, (p + 2) % 30 + 1], [p % 30 + 1])
                for p in range(50)
            ],
            2,
        )
        for t in range(2000)
    }
    tracemalloc.start()
    try:
        layout = PartitionLayout.build(range(1, 31), packed.items(), marshal.loads)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(layout) == 100_000 and layout.replicas[:3].tolist() == [1, 2, 3]
    # the arrays themselves (~3.6 MB of int32 with growth room) and the names; every partition
    # unpacked at once was over 25 MB
    assert peak < 8_000_000, peak
