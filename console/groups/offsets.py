"""Log offsets of many partitions for the groups area (lag, reset bounds): ListOffsets per partition
leader, leaders from the caller's metadata of the topics or the topic area's cached metadata, asked
again with fresh leaders where they are stale."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, TopicMetadata, TopicPartition
from console.topics import cache as metadata_cache

# A stale leader in the cached metadata: ask again with fresh leaders.
_ASK_AGAIN = frozenset({"NOT_LEADER_OR_FOLLOWER", "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE"})


def log_offsets(
    cluster,
    tps: Iterable[TopicPartition],
    spec: str | int = "latest",
    topics: Mapping[str, TopicMetadata] | None = None,
) -> dict[TopicPartition, int | None]:
    """Offsets by ``spec`` (earliest, latest, a timestamp in ms: -1 there when no record is that
    new); None where Kafka could not answer. See ``log_offsets_each``."""
    return log_offsets_each(cluster, tps, [spec], topics)[0]


def log_offsets_each(
    cluster,
    tps: Iterable[TopicPartition],
    specs: list[str | int],
    topics: Mapping[str, TopicMetadata] | None = None,
) -> list[dict[TopicPartition, int | None]]:
    """``log_offsets`` for several specs at once (e.g. a reset's log start and end): the requests
    of every spec are in flight together. Leaders come from ``topics`` (the metadata of the topics
    asked about, when the caller holds it) or else the cached metadata of the whole cluster;
    partitions they do not know, or whose leader moved, are asked again with fresh leaders.

    The keys are ``(topic, partition)`` tuples, equal to (and hashed like) the TopicPartitions
    asked for: the list page reads 100,000 of them, so nothing is built per partition twice.
    """
    by_topic: dict[str, list[int]] = {}
    for topic, partition in tps:
        by_topic.setdefault(topic, []).append(partition)
    if not by_topic:
        return [{} for _ in specs]
    gw = gateway_for(cluster)
    by_leader: dict[int, dict[str, list[int]]] = {}
    unknown: list[TopicPartition] = []
    if topics is None:
        try:
            topics = metadata_cache.get_snapshot(cluster).by_name
        except KafkaOperationError:
            topics = {}
    for topic, partitions in by_topic.items():
        meta = topics.get(topic)
        leader_of = {p.id: p.leader for p in meta.partitions} if meta is not None else {}
        for partition in dict.fromkeys(partitions):
            leader = leader_of.get(partition, -1)
            if leader >= 0:
                by_leader.setdefault(leader, {}).setdefault(topic, []).append(partition)
            else:
                unknown.append(TopicPartition(topic, partition))
    answers = gw.offsets_by_leader(by_leader, specs) if by_leader else [({}, {}) for _ in specs]
    out = []
    for spec, (offsets, errors) in zip(specs, answers, strict=True):
        got: dict = offsets
        again = unknown + [TopicPartition(*tp) for tp, err in errors.items() if err.name in _ASK_AGAIN]
        for tp in errors:
            got[tp] = None
        if again:
            for tp, v in gw.list_offsets(again, spec).items():
                got[tp] = None if isinstance(v, KafkaOperationError) else v.offset
        out.append(got)
    return out
