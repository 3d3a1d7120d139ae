"""What the cluster overview ranks, as plain data: topics with partition problems, the most lagging
groups, the fullest brokers (pure; no Django, no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from console.kafka.types import TopicHealth

#: How many topics, groups and brokers each list of the overview shows (the rest: its page's link).
SHOWN = 10


@dataclass(frozen=True)
class TopicProblem:
    """A topic with partitions that are offline, under-replicated or under its min ISR.
    ``under_min_isr`` is None while the topic's ``min.insync.replicas`` is not known."""

    topic: str
    partitions: int
    offline: int
    under_replicated: int
    under_min_isr: int | None

    @property
    def rank(self) -> tuple:
        """Worst first: offline, then under min ISR, then under-replicated partitions."""
        return (-self.offline, -(self.under_min_isr or 0), -self.under_replicated, self.topic)


@dataclass(frozen=True)
class Problems:
    """The topics with problems, worst first (at most ``SHOWN``), and how many there are in all."""

    topics: tuple[TopicProblem, ...] = ()
    count: int = 0
    min_isr_unknown: int = 0  # shown topics whose min ISR is not known yet

    @property
    def more(self) -> int:
        return self.count - len(self.topics)


def under_min_isr(health: TopicHealth, min_isr: int | None) -> int | None:
    """Partitions whose ISR is shorter than ``min_isr`` (None when the minimum is unknown). A topic
    without offline or under-replicated partitions (no ``isr_sizes``) has every ISR as long as its
    replicas: under its minimum only when the minimum is above its replication factor."""
    if min_isr is None:
        return None
    if not health.isr_sizes:
        return health.partitions if health.replication_factor < min_isr else 0
    return sum(1 for size in health.isr_sizes if size < min_isr)


def problems(
    found: list[tuple[str, TopicHealth]], min_isr: Mapping[str, int | None], shown: int = SHOWN
) -> Problems:
    """The unhealthy topics ranked, each with its partitions under min ISR where the minimum is known."""
    rows = sorted(
        (
            TopicProblem(
                name, h.partitions, h.offline, h.under_replicated, under_min_isr(h, min_isr.get(name))
            )
            for name, h in found
        ),
        key=lambda p: p.rank,
    )
    top = tuple(rows[:shown])
    return Problems(top, len(rows), sum(1 for p in top if p.under_min_isr is None))


def min_isr_of(config: Mapping[str, str | None] | None) -> int | None:
    """A topic's ``min.insync.replicas`` from its configs (None when unknown or not a number)."""
    value = (config or {}).get("min.insync.replicas")
    return int(value) if value is not None and str(value).isdigit() else None


def most_lagging(rows: Iterable, shown: int = SHOWN) -> list:
    """The groups with lag, most first (rows with ``lag`` and ``group``)."""
    return sorted((r for r in rows if r.lag > 0), key=lambda r: (-r.lag, r.group))[:shown]


def fullest(rows: Iterable, shown: int = SHOWN) -> list:
    """The brokers whose volumes are fullest first (rows with ``used_ratio``, ``size_bytes``); those
    that do not report their volume after them, by bytes held."""
    return sorted(rows, key=lambda r: (r.used_ratio is None, -(r.used_ratio or 0), -r.size_bytes))[:shown]


def lagging_voters(voters: Iterable, leader: int | None, threshold: float) -> list:
    """The quorum's voters (``QuorumReplica``) other than the leader whose log is behind the leader's
    by more than ``threshold`` records (the ``quorum_lag`` rule's), most behind first."""
    return sorted((v for v in voters if v.id != leader and v.lag > threshold), key=lambda v: (-v.lag, v.id))
