"""The figures of the brokers pages that need no I/O: counts per broker from the metadata, a log
dir's sizes, and a memo that computes something once per metadata snapshot."""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain

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
    return value


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


def count_by_broker(topics) -> dict[int, Counts]:
    """Per broker id, the counts above, in one pass over the metadata (pure)."""
    parts = [p for t in topics for p in t.partitions]
    replicas = Counter(chain.from_iterable(p.replicas for p in parts))
    leaders = Counter(p.leader for p in parts if p.leader >= 0)
    under: Counter[int] = Counter()
    out: Counter[int] = Counter()
    offline: Counter[int] = Counter()
    for p in parts:
        if len(p.isr) >= len(p.replicas) and p.leader >= 0:
            continue  # the healthy majority costs nothing more
        if len(p.isr) < len(p.replicas):
            under.update(p.replicas)
            out.update(r for r in p.replicas if r not in p.isr)
        if p.leader < 0:
            offline.update(p.replicas)
    return {
        b: Counts(replicas[b], leaders[b], under[b], out[b], offline[b])
        for b in sorted(set(replicas) | set(leaders))
    }


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
