"""Pure reassignment planners: plan files, moves, throttles, validation, dry-run diff, intents.

A functional core (as in Kafka's ``ReassignPartitionsCommand``): every function takes plain
maps and returns plain maps; nothing here talks to Kafka or the database. A partition is the
tuple ``(topic, partition)``; an assignment maps partitions to replica lists (preferred leader
first). Plans built from an operator's intent are ``planner_intents.py``; the balance planner
lives in ``reassign_balance.py``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from console.uploads import UploadError, load_json

TP = tuple[str, int]
Assignment = Mapping[TP, Sequence[int]]

PLAN_VERSION = 1
INT32_MAX = 2**31 - 1  # partition numbers and broker ids are int32 in Kafka's protocol and its tool
MAX_PLAN_PARTITIONS = 200_000  # a plan file larger than this is refused before validation

# A plan file may be as large as the plan form accepts (about 200,000 partitions with log dirs).
PLAN_MAX_BYTES = 20 * 1024 * 1024


class PlanParseError(ValueError):
    """A plan file that cannot be used; ``line``/``column`` point at the problem when known."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(f"{message}{where}")
        self.line = line
        self.column = column


# ---- plan files (kafka-reassign-partitions JSON) --------------------------------------------


def parse_plan(text: str) -> dict[TP, tuple[int, ...]]:
    """Parse a kafka-reassign-partitions plan; refuse what Kafka's tool refuses, with the position."""
    if not text or not text.strip():
        raise PlanParseError("The plan is empty: paste or upload a reassignment JSON file.")
    try:
        doc = load_json(text, limit=PLAN_MAX_BYTES)  # bounded: size and nesting depth
    except UploadError as exc:
        message = f"Malformed JSON: {exc.message}" if exc.kind == "syntax" else exc.message
        raise PlanParseError(message[:1].upper() + message[1:], line=exc.line, column=exc.column) from None
    if not isinstance(doc, dict):
        raise PlanParseError('The plan must be a JSON object like {"version":1,"partitions":[...]}.')
    if doc.get("version", PLAN_VERSION) != PLAN_VERSION:
        raise PlanParseError(f"Unsupported plan version {doc.get('version')!r}: only version 1 exists.")
    entries = doc.get("partitions")
    if not isinstance(entries, list):
        raise PlanParseError('The plan needs a "partitions" list.')
    if not entries:
        raise PlanParseError("Partition reassignment list cannot be empty.")
    if len(entries) > MAX_PLAN_PARTITIONS:
        raise PlanParseError(
            f"The plan has {len(entries)} partitions; at most {MAX_PLAN_PARTITIONS} are accepted."
        )
    out: dict[TP, tuple[int, ...]] = {}
    for i, entry in enumerate(entries):
        tp, replicas = _parse_entry(i, entry)
        if tp in out:
            raise PlanParseError(
                f"Partition reassignment contains duplicate topic partitions: {tp[0]}-{tp[1]}."
            )
        out[tp] = replicas
    return out


def _parse_entry(i: int, entry: object) -> tuple[TP, tuple[int, ...]]:
    # JSON gives only these types, so ``type(x) is int`` is "an integer, not a boolean"
    if type(entry) is dict:
        topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
        if (
            type(topic) is str
            and topic
            and type(partition) is int
            and 0 <= partition <= INT32_MAX
            and type(replicas) is list
            and replicas
            and set(map(type, replicas)) == {int}
            and min(replicas) >= 0
            and max(replicas) <= INT32_MAX
            and len(set(replicas)) == len(replicas)
        ):
            log_dirs = entry.get("log_dirs")
            if log_dirs is None or (
                type(log_dirs) is list
                and len(log_dirs) == len(replicas)
                and log_dirs.count("any") == len(replicas)
            ):
                return (topic, partition), tuple(replicas)
    return _refuse_entry(i, entry)


def _refuse_entry(i: int, entry: object) -> tuple[TP, tuple[int, ...]]:
    """The careful path: say what is wrong with the entry (or return it if nothing is)."""
    where = f"partitions[{i}]"
    if not isinstance(entry, dict):
        raise PlanParseError(f"{where} must be an object with topic, partition and replicas.")
    topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
    if not isinstance(topic, str) or not topic:
        raise PlanParseError(f"{where}.topic must be a non-empty string.")
    if not _is_int(partition) or not 0 <= partition <= INT32_MAX:
        raise PlanParseError(f"{where}.partition must be an integer from 0 to {INT32_MAX}.")
    if (
        not isinstance(replicas, list)
        or not replicas
        or not all(_is_int(r) and 0 <= r <= INT32_MAX for r in replicas)
    ):
        raise PlanParseError(f"{where}.replicas must be a non-empty list of broker ids (0 to {INT32_MAX}).")
    if len(set(replicas)) != len(replicas):
        raise PlanParseError(
            f"{where}: partition {topic}-{partition} contains duplicate replicas {replicas}."
        )
    log_dirs = entry.get("log_dirs")
    if log_dirs is not None:
        if not isinstance(log_dirs, list) or len(log_dirs) != len(replicas):
            raise PlanParseError(f"{where}.log_dirs must list one directory per replica.")
        if any(d != "any" for d in log_dirs):
            raise PlanParseError(
                f'{where}.log_dirs: moves between log directories are not supported; use "any".'
            )
    return (topic, partition), tuple(replicas)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def export_plan(assignment: Assignment) -> str:
    """The assignment as a kafka-reassign-partitions file (sorted; usable as a rollback file)."""
    parts = [
        {
            "topic": t,
            "partition": p,
            "replicas": list(assignment[(t, p)]),
            "log_dirs": ["any"] * len(assignment[(t, p)]),
        }
        for t, p in sorted(assignment)
    ]
    return json.dumps({"version": PLAN_VERSION, "partitions": parts}, indent=1)


# ---- moves and throttles (as ReassignPartitionsCommand computes them) ---------------------------


class Move(NamedTuple):
    """Replicas a partition copies from (``sources``) and new replicas it copies to.

    Named tuples (this and ``PartitionCheck``): a plan makes one per partition, and a frozen
    dataclass costs about five times as much to build (10,000 partitions: ~8 ms more each).
    """

    sources: tuple[int, ...]
    destinations: tuple[int, ...]


def plan_moves(
    current: Assignment, proposed: Assignment, adding_in_progress: Mapping[TP, Sequence[int]] | None = None
) -> dict[TP, Move]:
    """Per proposed partition: sources = the current (original) replicas, destinations = new ones.

    A reassignment already in progress reports its adding replicas in ``current``; they are not
    sources (Kafka's tool subtracts them the same way).
    """
    adding = adding_in_progress or {}
    out: dict[TP, Move] = {}
    for tp, target in proposed.items():
        sources = tuple(current.get(tp, ()))
        busy = adding.get(tp)
        if busy:
            sources = tuple(b for b in sources if b not in busy)
        out[tp] = Move(sources, tuple([b for b in target if b not in sources]))
    return out


def _throttle_value(items: list[tuple[int, tuple[int, ...]]]) -> str:
    """``partition:broker`` entries ordered by partition then broker, each once (``items`` come
    from a mapping keyed by partition, so a partition is listed once)."""
    items.sort()
    return ",".join([f"{p}:{b}" for p, brokers in items for b in sorted(set(brokers))])


def leader_throttles(moves: Mapping[TP, Move]) -> dict[str, str]:
    """``leader.replication.throttled.replicas`` per topic: every source replica of a moving partition."""
    by_topic: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
    for (topic, partition), move in moves.items():
        if move.destinations and move.sources:
            by_topic.setdefault(topic, []).append((partition, move.sources))
    return {t: _throttle_value(v) for t, v in sorted(by_topic.items())}


def follower_throttles(moves: Mapping[TP, Move]) -> dict[str, str]:
    """``follower.replication.throttled.replicas`` per topic: every new replica."""
    by_topic: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
    for (topic, partition), move in moves.items():
        if move.destinations:
            by_topic.setdefault(topic, []).append((partition, move.destinations))
    return {t: _throttle_value(v) for t, v in sorted(by_topic.items())}


def brokers_involved(moves: Mapping[TP, Move]) -> set[int]:
    """Brokers that get the throttle rates: every source and destination of a moving partition."""
    out: set[int] = set()
    for move in moves.values():
        if move.destinations:
            out.update(move.sources)
            out.update(move.destinations)
    return out


def throttle_entries(value: str | None) -> list[str]:
    """The ``partition:broker`` entries of a throttled-replicas value (``*`` stays ``*``)."""
    return [s for s in map(str.strip, (value or "").split(",")) if s]


def merge_throttle(current: str | None, ours: str) -> tuple[str, list[str]]:
    """Value to set (current entries plus ours) and the entries we add; ``*`` already covers all."""
    if not current or not current.strip():  # the usual case: nothing set before us
        added = throttle_entries(ours)
        return ",".join(added), added
    have = throttle_entries(current)
    if "*" in have:
        return "*", []
    present = set(have)
    added = [e for e in throttle_entries(ours) if e not in present]
    return ",".join(have + added), added


def unmerge_throttle(current: str | None, added: Iterable[str]) -> str | None:
    """Value after taking back the entries we added (None: delete the config)."""
    gone = set(added)
    rest = [e for e in throttle_entries(current) if e not in gone]
    return ",".join(rest) or None


# ---- validation and dry run ------------------------------------------------------------------


class PartitionCheck(NamedTuple):
    """One row of the validation table."""

    topic: str
    partition: int
    current: tuple[int, ...]
    target: tuple[int, ...]
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def moving(self) -> bool:
        return self.current != self.target


def rack_spread_ok(replicas: Sequence[int], racks: Mapping[int, str | None]) -> bool:
    """Replicas use as many distinct racks as they can (min(RF, number of racks))."""
    return _spread_ok(replicas, racks, len({r for r in racks.values() if r}))


def _spread_ok(replicas: Sequence[int], racks: Mapping[int, str | None], known_racks: int) -> bool:
    if known_racks <= 1:
        return True
    return len(set(map(racks.get, replicas))) >= min(len(replicas), known_racks)


def validate_plan(
    proposed: Assignment,
    *,
    current: Assignment,
    racks: Mapping[int, str | None],
    in_progress: Iterable[TP] = (),
    rf_change: bool = False,
    topics: Iterable[str] | None = None,
) -> list[PartitionCheck]:
    """Check every partition of a plan: unknown topic/partition/broker, duplicates, RF, conflicts, racks.

    ``topics`` names the cluster's topics when ``current`` holds only the plan's partitions.
    """
    known_topics = {t for t, _ in current} if topics is None else set(topics)
    busy = set(in_progress)
    known_racks = len({r for r in racks.values() if r})
    brokers = set(racks)
    # named by the current replica lists but not live: stopped or fenced, not unknown
    down = {b for replicas in current.values() for b in replicas} - brokers
    rows = []
    for tp in sorted(proposed):
        target = tuple(proposed[tp])
        have = tuple(current.get(tp, ()))
        problems: list[str] = []
        warnings: tuple[str, ...] = ()
        if tp[0] not in known_topics:
            problems.append("Unknown topic")
        elif tp not in current:
            problems.append("Unknown partition")
        named = set(target)
        unknown = not named <= brokers
        if unknown:
            stopped = [b for b in target if b in down]
            if stopped:
                said = "; ".join(f"broker {b} is not reachable (down or fenced)" for b in stopped)
                problems.append(f"Replicas on a broker that is not running: {said}")
            if named - brokers - down:
                problems.append(
                    f"Unknown broker {', '.join(str(b) for b in target if b not in racks and b not in down)}"
                )
        distinct = len(named) == len(target)
        if not distinct:
            problems.append("Duplicate brokers")
        if have and len(target) != len(have) and not rf_change:
            problems.append(f"Replication factor changes {len(have)} → {len(target)} (not intended)")
        if tp in busy:
            problems.append("Already being reassigned")
        if not unknown and distinct and not _spread_ok(target, racks, known_racks):
            problems.append("Rack constraint broken")
        if have and target == have:
            warnings = ("Already at target (nothing to move)",)
        elif have and target[0] != have[0]:
            warnings = (f"Preferred leader changes {have[0]} → {target[0]}",)
        rows.append(PartitionCheck(tp[0], tp[1], have, target, tuple(problems), warnings))
    return rows


@dataclass(frozen=True)
class DiffRow:
    topic: str
    partition: int
    old: tuple[int, ...]
    new: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    bytes_to_move: int


@dataclass(frozen=True)
class PlanDiff:
    """The dry run: what changes, how many bytes move, how long at a throttle."""

    rows: tuple[DiffRow, ...]
    total_bytes: int
    bytes_in: dict[int, int] = field(default_factory=dict)
    bytes_out: dict[int, int] = field(default_factory=dict)

    def estimated_seconds(self, throttle_bytes_per_s: int | None) -> float | None:
        """Slowest broker's in/out bytes over the per-broker rate (None without a throttle)."""
        if not throttle_bytes_per_s or throttle_bytes_per_s <= 0:
            return None
        busiest = max([*self.bytes_in.values(), *self.bytes_out.values(), 0])
        return busiest / throttle_bytes_per_s


def plan_diff(proposed: Assignment, current: Assignment, sizes: Mapping[TP, int]) -> PlanDiff:
    """Old → new replicas per moving partition and the bytes each new replica must copy."""
    rows = []
    total = 0
    bytes_in: Counter[int] = Counter()
    bytes_out: Counter[int] = Counter()
    for tp in sorted(proposed):
        old, new = tuple(current.get(tp, ())), tuple(proposed[tp])
        if old == new:
            continue
        adding = tuple(b for b in new if b not in old)
        removing = tuple(b for b in old if b not in new)
        size = int(sizes.get(tp, 0))
        moved = size * len(adding)
        total += moved
        for b in adding:
            bytes_in[b] += size
        if old and adding:
            bytes_out[old[0]] += moved
        rows.append(DiffRow(tp[0], tp[1], old, new, adding, removing, moved))
    return PlanDiff(tuple(rows), total, dict(bytes_in), dict(bytes_out))
