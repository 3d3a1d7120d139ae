"""Paced reassignments, the pure part: which queued partitions go next, the rates per broker, and
which throttles a finished partition gives back (no Django, no I/O).

A partition counts against every broker it adds or removes (as Cruise Control's per-broker
concurrency counts a replica movement against its source and its destination); a partition that
only changes the order of its replicas involves no broker and is never held back. The queue is
taken in its stable order (the plan's), skipping a partition whose brokers are all busy for one
that fits, so a busy broker never holds up moves elsewhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from console.reassignment import planner

# The largest N that means anything: more partitions per broker than Kafka would move at once.
MAX_MOVES_PER_BROKER = 10_000


class PacingInvalid(ValueError):
    """Pacing an operator must correct (raised as the area's refusals by the actions)."""


@dataclass(frozen=True)
class Pacing:
    """What a move asks for beyond its plan: the leader and follower rates (None: the single
    throttle), per-broker overrides of both, and at most ``max_moves`` partitions in flight per broker."""

    leader: int | None = None
    follower: int | None = None
    brokers: Mapping[int, int] = field(default_factory=dict)
    max_moves: int | None = None

    @property
    def empty(self) -> bool:
        return self.leader is None and self.follower is None and not self.brokers and self.max_moves is None

    def as_json(self) -> dict:
        return {
            "leader": self.leader,
            "follower": self.follower,
            "brokers": {str(b): v for b, v in sorted(self.brokers.items())},
            "max_moves": self.max_moves,
        }

    @classmethod
    def from_json(cls, value: Mapping | None) -> Pacing:
        value = value or {}
        return cls(
            leader=value.get("leader"),
            follower=value.get("follower"),
            brokers={int(b): int(v) for b, v in (value.get("brokers") or {}).items()},
            max_moves=value.get("max_moves"),
        )


def check_max_moves(value: object) -> int | None:
    """None (not paced) or a whole number of partitions from 1 to MAX_MOVES_PER_BROKER."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise PacingInvalid(f"Max moves per broker must be a whole number, not {value!r}.")
    if value < 1:
        raise PacingInvalid(
            f"Max moves per broker must be at least 1 (got {value}); leave it empty to move every partition at once."
        )
    if value > MAX_MOVES_PER_BROKER:
        raise PacingInvalid(f"Max moves per broker is at most {MAX_MOVES_PER_BROKER} (got {value}).")
    return value


def check_rate(value: object, label: str) -> int | None:
    """None or a positive whole number of bytes/s (the limits are the throttle's, checked by the caller)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PacingInvalid(f"The {label} must be a positive whole number of bytes/s, not {value!r}.")
    return value


def parse_broker_rates(text: str, scale: float = 1.0) -> dict[int, int]:
    """``"3=5, 4=10"`` (broker=rate, rate times ``scale`` bytes/s) as {broker: bytes/s}."""
    out: dict[int, int] = {}
    for item in text.replace(";", ",").replace("\n", ",").split(","):
        item = item.strip()
        if not item:
            continue
        broker, sep, rate = (x.strip() for x in item.partition("="))
        if not sep or not broker.isdigit():
            raise PacingInvalid(f"'{item}' is not broker=rate (e.g. 3=5).")
        try:
            value = float(rate)
        except ValueError:
            raise PacingInvalid(f"'{item}': the rate is not a number.") from None
        if value <= 0 or value != value:
            raise PacingInvalid(f"'{item}': the rate must be positive.")
        if int(broker) in out:
            raise PacingInvalid(f"Broker {broker} is given twice.")
        out[int(broker)] = int(value * scale)
    return out


def check_overrides(brokers: Mapping[int, int], involved: Iterable[int]) -> None:
    """Every per-broker override names a broker the move involves (else it would throttle nothing)."""
    stray = sorted(set(brokers) - set(involved))
    if stray:
        raise PacingInvalid(
            f"Per-broker throttle for broker(s) {', '.join(map(str, stray))} that this move does not involve "
            f"(it involves {', '.join(map(str, sorted(set(involved)))) or 'none'})."
        )


def rates_of(broker: int, default: int | None, pacing: Pacing) -> tuple[int | None, int | None]:
    """(leader rate, follower rate) of a broker: its override, else the direction's rate, else the throttle."""
    own = pacing.brokers.get(broker)
    if own is not None:
        return own, own
    leader = pacing.leader if pacing.leader is not None else default
    follower = pacing.follower if pacing.follower is not None else default
    return leader, follower


# ---- the queue --------------------------------------------------------------------------------


class Queued(NamedTuple):
    """A partition of the plan: its key (the row id), original and target replicas."""

    key: int
    original: Sequence[int]
    target: Sequence[int]


def counted_brokers(original: Sequence[int], target: Sequence[int]) -> frozenset[int]:
    """The brokers a partition's move adds or removes: those it counts against."""
    return frozenset(set(original) ^ set(target))


def in_flight_per_broker(moving: Iterable[tuple[Sequence[int], Sequence[int]]]) -> Counter:
    """{broker: partitions in flight that add or remove a replica there}."""
    counts: Counter = Counter()
    for original, target in moving:
        counts.update(counted_brokers(original, target))
    return counts


def next_batch(
    queued: Sequence[Queued], moving: Iterable[tuple[Sequence[int], Sequence[int]]], limit: int, most: int
) -> list[int]:
    """The keys of the queued partitions to submit now, in queue order: each fits under ``limit``
    in flight on every broker it counts against (given ``moving`` and those chosen before it); at
    most ``most`` (one AlterPartitionReassignments request)."""
    counts = in_flight_per_broker(moving)
    chosen: list[int] = []
    for q in queued:
        if len(chosen) >= most:
            break
        brokers = counted_brokers(q.original, q.target)
        if all(counts[b] < limit for b in brokers):
            counts.update(brokers)
            chosen.append(q.key)
    return chosen


# ---- throttles a finished partition gives back ------------------------------------------------


def wanted_entries(open_moves: Mapping[planner.TP, planner.Move]) -> dict[tuple[str, str], set[str]]:
    """{(topic, "leader"|"follower"): the partition:broker entries the open partitions still need}."""
    out: dict[tuple[str, str], set[str]] = {}
    for topic, value in planner.leader_throttles(open_moves).items():
        out[(topic, "leader")] = set(planner.throttle_entries(value))
    for topic, value in planner.follower_throttles(open_moves).items():
        out[(topic, "follower")] = set(planner.throttle_entries(value))
    return out


def entries_to_give_back(added: Iterable[str], still_wanted: set[str]) -> list[str]:
    """Of the entries the console added to a throttled-replicas list, those no open partition needs."""
    return [e for e in added if e not in still_wanted]


def brokers_to_release(
    rate_brokers: Iterable[int], open_moves: Mapping[planner.TP, planner.Move]
) -> set[int]:
    """Brokers whose rates can go back: no open (in flight or queued) partition involves them."""
    return set(rate_brokers) - planner.brokers_involved(open_moves)
