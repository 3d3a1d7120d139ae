"""The topics of a whole-cluster metadata read, each made when first read.

``KafkaGateway.list_topics_metadata`` answers a ``ClusterMetadata`` whose ``topics`` is a
``DeferredTopics``: the names sorted up front, each ``TopicMetadata`` made on first read from the
client's own answer (``TopicMetadata.deferred``), its ``PartitionMetadata`` built only when read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from .types import PartitionMetadata, TopicHealth, TopicMetadata


class PartitionReader(Protocol):
    """Reads a deferred topic's partitions out of a Kafka client's own answer (``console.kafka`` only)."""

    def partitions(self, source: Any) -> tuple[PartitionMetadata, ...]: ...

    def health(self, source: Any) -> TopicHealth: ...

    def counts(self, source: Any) -> tuple[int, int, int]: ...  # partitions, under-replicated, offline

    def placement(self, source: Any, ids: set[int]) -> dict[int, tuple[int, tuple[int, ...]]]: ...

    def hosted(self, source: Any, broker: int) -> tuple[PartitionMetadata, ...]: ...


def placement(topic: TopicMetadata, ids: Iterable[int]) -> dict[int, tuple[int, tuple[int, ...]]]:
    """``{partition id: (leader, replicas)}`` of the asked partitions the topic has.

    A deferred topic's are read straight out of the client's answer: a plan naming 100 of a
    topic's 1,000 partitions builds no ``PartitionMetadata`` at all.
    """
    want = set(ids)
    source, reader = topic._source, topic._reader
    if source is not None and reader is not None:
        return reader.placement(source, want)
    return {p.id: (p.leader, p.replicas) for p in topic.partitions if p.id in want}


def hosted_by(topic: TopicMetadata, broker: int) -> tuple[PartitionMetadata, ...]:
    """The topic's partitions with a replica on ``broker``, by id. A deferred topic's are picked out
    of the client's answer first: a broker page at 1M partitions builds only its own partitions."""
    source, reader = topic._source, topic._reader
    if source is not None and reader is not None:
        return reader.hosted(source, broker)
    return tuple(p for p in topic.partitions if broker in p.replicas)


class DeferredTopics(Sequence):
    """The topics of a whole-cluster fetch, sorted by name, each ``TopicMetadata`` made when first read.

    A read-only sequence (``len``, index, slice, iterate, compare with a tuple) plus ``by_name``, a
    read-only mapping. Only the names are sorted up front; a page that shows 50 of 20,000 topics
    makes 50 ``TopicMetadata`` (and, through ``TopicMetadata.deferred``, no ``PartitionMetadata``
    it does not read). Safe to share between threads: a topic made twice at once is made equal.
    """

    __slots__ = ("names", "internal_names", "broker_counts", "_sources", "_reader", "_made", "_all")

    def __init__(
        self,
        names: list[str],
        sources: dict[str, Any],
        reader: PartitionReader,
        internal: frozenset[str],
        broker_counts: tuple[tuple[int, int, int, int, int, int], ...] | None = None,
    ) -> None:
        self.names = names  # sorted
        self.internal_names = internal  # the names that are Kafka's internal topics (may list absent ones)
        # (broker, replicas, leaders, under-replicated, out of ISR, offline) over every partition,
        # by broker, as the decoder counted them while reading the answer; None when not counted
        self.broker_counts = broker_counts
        self._sources = sources
        self._reader = reader
        self._made: dict[str, TopicMetadata] = {}
        self._all: tuple[TopicMetadata, ...] | None = None

    def get(self, name: str, default: Any = None) -> TopicMetadata | Any:
        topic = self._made.get(name)
        if topic is None:
            source = self._sources.get(name)
            if source is None:
                return default
            made = TopicMetadata.deferred(name, source, self._reader, name in self.internal_names)
            topic = self._made.setdefault(name, made)
        return topic

    @property
    def by_name(self) -> Mapping[str, TopicMetadata]:
        return _TopicsByName(self)

    def tally(self) -> tuple[int, int, int, list[tuple[str, TopicHealth]]]:
        """Partitions, under-replicated and offline partitions over every topic, and ``(name,
        health)`` of the topics with either, by name: the decoder's per-topic counts summed, a
        ``TopicHealth`` made only for those topics (at 1M partitions the overview's counts cost
        ~30 ms when every topic's health was made)."""
        counts, sources = self._reader.counts, self._sources
        partitions = under = offline = 0
        flagged = []
        for name in self.names:
            n, u, o = counts(sources[name])
            partitions += n
            if u or o:
                under += u
                offline += o
                flagged.append(name)
        health = self._reader.health
        return partitions, under, offline, [(name, health(sources[name])) for name in flagged]

    def _every(self) -> tuple[TopicMetadata, ...]:
        if self._all is None:
            get = self.get
            self._all = tuple(get(n) for n in self.names)
        return self._all

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._every()[index]
        return self.get(self.names[index])

    def __iter__(self) -> Iterator[TopicMetadata]:
        return iter(self._every())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DeferredTopics | tuple):
            return self._every() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._every())

    def __reduce__(self):
        return (tuple, (self._every(),))

    def __repr__(self) -> str:
        return f"DeferredTopics({len(self.names)} topics)"


class _TopicsByName(Mapping):
    """``DeferredTopics.by_name``: name -> TopicMetadata, made on lookup."""

    __slots__ = ("_topics",)

    def __init__(self, topics: DeferredTopics) -> None:
        self._topics = topics

    def __getitem__(self, name: str) -> TopicMetadata:
        topic = self._topics.get(name)
        if topic is None:
            raise KeyError(name)
        return topic

    def get(self, name: str, default: Any = None) -> TopicMetadata | Any:
        return self._topics.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self._topics._sources

    def __iter__(self) -> Iterator[str]:
        return iter(self._topics.names)

    def __len__(self) -> int:
        return len(self._topics.names)
