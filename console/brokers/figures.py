"""The figures of the brokers pages that need no I/O: counts per broker from the metadata, a log
dir's sizes, and a memo that computes something once per metadata snapshot."""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

from console.kafka.deferred import placement
from console.kafka.errors import KafkaOperationError
from console.kafka.types import LogDirInfo

# -- per-snapshot derived data -----------------------------------------------------------------------

_derived: dict[tuple[int, str], tuple[weakref.ref, object]] = {}
_derived_lock = threading.Lock()


def per_snapshot(snap, what: str, compute: Callable[[], object]):
    """``compute()`` once per metadata snapshot (dropped with the snapshot)."""
    key = (id(snap), what)
    hit = _derived.get(key)
    if hit is not None and hit[0]() is snap:
        return hit[1]
    value = compute()
    with _derived_lock:
        for stale in [k for k, (ref, _) in _derived.items() if ref() is None]:
            _derived.pop(stale, None)
        _derived[key] = (weakref.ref(snap), value)
    weakref.finalize(snap, _drop, key)  # gone with its snapshot, not at the next call for any cluster
    return value


def _drop(key: tuple[int, str]) -> None:
    with _derived_lock:
        hit = _derived.get(key)
        if hit is not None and hit[0]() is None:
            del _derived[key]


def forget(snap, what: str) -> None:
    """Drop what ``per_snapshot`` kept for ``what`` (e.g. a failed read, to be retried)."""
    with _derived_lock:
        _derived.pop((id(snap), what), None)


@dataclass(frozen=True)
class Counts:
    replicas: int = 0  # partitions with a replica on the broker
    leaders: int = 0
    under_replicated: int = 0  # partitions it hosts whose ISR is smaller than their replicas
    out_of_isr: int = 0  # its own replicas that are not in their partition's ISR
    offline: int = 0  # partitions it hosts that have no leader


_first, _second = itemgetter(0), itemgetter(1)


def count_by_broker(topics) -> dict[int, Counts]:
    """Per broker id, the counts above (pure).

    A whole-cluster read's topics come with them (``DeferredTopics.broker_counts``): the Metadata
    decoder counted them in its one pass over Kafka's answer (``console/kafka/_metadata.c``), where
    walking 1,000,000 partitions' placement here cost 0.5-0.8 s of the Brokers page. Otherwise, one
    pass over the metadata: a healthy topic (no under-replicated or offline partition, as its ``health()`` says without
    reading its partitions) adds only replicas and leaders, read as placement (``placement``:
    straight from a deferred topic's packed answer, no ``PartitionMetadata``): at 1,000,000
    partitions building them all cost ~9 s of the Brokers page. An unhealthy topic's partitions
    are read in full."""
    counted = getattr(topics, "broker_counts", None)
    if counted is not None:
        return {b: Counts(*c) for b, *c in counted}
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    under: Counter[int] = Counter()
    out: Counter[int] = Counter()
    offline: Counter[int] = Counter()
    for t in topics:
        health = t.health()
        if not (health.under_replicated or health.offline):
            placed = placement(t, range(health.partitions)).values()
            replicas.update(chain.from_iterable(map(_second, placed)))  # C iterators: no frame per item
            leaders.update(map(_first, placed))
            continue
        for p in t.partitions:
            replicas.update(p.replicas)
            if p.leader >= 0:
                leaders[p.leader] += 1
            else:
                offline.update(p.replicas)
            if len(p.isr) < len(p.replicas):
                under.update(p.replicas)
                out.update(r for r in p.replicas if r not in p.isr)
    return {
        b: Counts(replicas[b], leaders[b], under[b], out[b], offline[b])
        for b in sorted(set(replicas) | set(leaders))
    }


def partition_count(topics) -> int:
    """Partitions in the metadata, from each topic's counts (no partition read)."""
    return sum(t.health().partitions for t in topics)


# -- log dirs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogDir:
    path: str
    error: KafkaOperationError | None
    total_bytes: int | None  # the disk's size (DescribeLogDirs v4+, Kafka 3.3+)
    usable_bytes: int | None  # free space Kafka can use
    replicas: int | None = None  # replicas in this dir (broker page only)
    data_bytes: int | None = None  # their size (broker page only)

    @property
    def used_bytes(self) -> int | None:
        """The file system's space in use or reserved (by anything, not only Kafka): size − usable."""
        if self.total_bytes is None or self.usable_bytes is None:
            return None
        return max(0, self.total_bytes - self.usable_bytes)

    @property
    def used_percent(self) -> float | None:
        used = self.used_bytes
        return None if used is None or not self.total_bytes else round(100 * used / self.total_bytes, 1)


def log_dir(d: LogDirInfo, with_replicas: bool) -> LogDir:
    if not with_replicas:
        return LogDir(d.path, d.error, d.total_bytes, d.usable_bytes)
    current = [r for r in d.replicas.values() if not r.is_future]
    return LogDir(d.path, d.error, d.total_bytes, d.usable_bytes, len(current), sum(r.size for r in current))
