"""What a purge asks for and what it would do, as plain data (no I/O).

A purge (KIP-107, ``kafka-delete-records.sh``) moves partitions' log start offsets forward: every
record below the new start is gone for every reader. It is asked for in one of three ways:

- ``offsets``: ``{partition: offset}``, the records below ``offset`` go (``-1``: up to the high
  watermark, as in kafka-delete-records' JSON file);
- ``time``: the records older than a moment go, on every partition (or the ones named): the new start
  is Kafka's ListOffsets answer for that time (the first record whose timestamp is at or after it), the
  high watermark when no record is that recent;
- ``all``: the whole topic, each partition up to its high watermark.

``plan`` turns the request and what Kafka says now (each partition's start and end, its size, the
groups' committed offsets) into one row per partition; a group is named on a partition whose start
moves when its committed offset there is below the new start. The bytes that go are an **estimate**:
the leader replica's size times the share of its records that go (records assumed of even size).
Kafka frees the disk later, a whole segment at a time, once all of a segment is below the new start;
until then an earlier purge's records still count in the size, and the estimate runs high.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

OFFSETS, TIME, ALL = "offsets", "time", "all"
MODES = (OFFSETS, TIME, ALL)
HIGH_WATERMARK = -1
MAX_OFFSET = 2**63 - 1
MAX_PARTITIONS = 100_000  # the console's own bound on a request's partitions
MAX_TIME_MS = 253402300799999  # 9999-12-31T23:59:59.999Z
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


class TargetError(ValueError):
    """The request is not a purge the console can run (``errors``: one sentence each)."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Target:
    """What to purge of one topic: ``offsets`` ({partition: offset}), ``time`` (``before_ms``, on
    ``partitions`` or all) or ``all``."""

    topic: str
    mode: str
    offsets: tuple[tuple[int, int], ...] = ()
    before_ms: int | None = None
    partitions: tuple[int, ...] = ()  # time: the partitions named (empty: every partition)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topic": self.topic, "mode": self.mode}
        if self.mode == OFFSETS:
            out["offsets"] = {str(p): o for p, o in self.offsets}
        if self.mode == TIME:
            out["before_ms"] = self.before_ms
            out["partitions"] = list(self.partitions)
        return out

    @property
    def summary(self) -> str:
        if self.mode == ALL:
            return f"every record of {self.topic}"
        if self.mode == TIME:
            where = f" on partitions {', '.join(map(str, self.partitions))}" if self.partitions else ""
            return f"records of {self.topic} older than {show_time(self.before_ms or 0)}{where}"
        shown = ", ".join(f"{p}: {'end' if o == HIGH_WATERMARK else o}" for p, o in self.offsets)
        return f"records of {self.topic} below {shown}"


def is_internal(topic: str, flagged: bool = False) -> bool:
    """Kafka refuses DeleteRecords on its internal topics (INVALID_TOPIC_EXCEPTION); the console refuses
    them first, and any topic whose name starts with ``__`` (Kafka's own)."""
    return flagged or topic in INTERNAL_TOPICS or topic.startswith("__")


def _whole(value: Any, what: str, low: int, high: int, errors: list[str]) -> int | None:
    if isinstance(value, bool):
        errors.append(f"{what} must be a whole number, not {value!r}")
        return None
    if isinstance(value, str):
        value = value.strip()
        if not value.lstrip("-").isdigit() or len(value) > 20:
            errors.append(f"{what} must be a whole number, not '{value[:40]}'")
            return None
        value = int(value)
    if not isinstance(value, int):
        errors.append(f"{what} must be a whole number, not {str(value)[:40]!r}")
        return None
    if not low <= value <= high:
        errors.append(f"{what} must be between {low} and {high}, not {value}")
        return None
    return value


def check_topic(topic: Any) -> str:
    if not isinstance(topic, str) or not topic.strip():
        raise TargetError(["name the topic to purge"])
    name = topic.strip()
    if len(name) > 249:
        raise TargetError(["a topic name has at most 249 characters"])
    return name


def offsets_target(topic: Any, offsets: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> Target:
    """``{partition: offset}`` checked: partitions 0 or more, offsets -1 (the end) or 0 or more."""
    name = check_topic(topic)
    items = list(offsets.items()) if isinstance(offsets, Mapping) else list(offsets)
    errors: list[str] = []
    if not items:
        errors.append("name at least one partition and its offset")
    if len(items) > MAX_PARTITIONS:
        errors.append(f"at most {MAX_PARTITIONS} partitions a purge")
        items = []
    seen: dict[int, int] = {}
    for p_raw, o_raw in items:
        p = _whole(p_raw, "a partition", 0, 2**31 - 1, errors)
        o = _whole(o_raw, f"the offset of partition {p if p is not None else p_raw}", -1, MAX_OFFSET, errors)
        if p is None or o is None:
            continue
        if p in seen and seen[p] != o:
            errors.append(f"partition {p} is named twice, with offsets {seen[p]} and {o}")
        seen[p] = o
    if errors:
        raise TargetError(errors)
    return Target(name, OFFSETS, tuple(sorted(seen.items())))


def time_target(topic: Any, before: Any, partitions: Iterable[Any] = ()) -> Target:
    """Records older than ``before`` (an ISO 8601 time or ms since the epoch) on every partition, or on
    ``partitions``."""
    name = check_topic(topic)
    errors: list[str] = []
    ms = parse_time(before, errors)
    chosen = set()
    for p in partitions or ():
        value = _whole(p, "a partition", 0, 2**31 - 1, errors)
        if value is not None:
            chosen.add(value)
    if errors:
        raise TargetError(errors)
    return Target(name, TIME, before_ms=ms, partitions=tuple(sorted(chosen)))


def all_target(topic: Any) -> Target:
    return Target(check_topic(topic), ALL)


def parse_time(value: Any, errors: list[str]) -> int | None:
    """ms since the epoch from a number of ms or an ISO 8601 time (no zone: UTC)."""
    if isinstance(value, bool) or value is None or value == "":
        errors.append("give a time: ISO 8601 (2026-01-31T12:00:00Z) or ms since the epoch")
        return None
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        return _whole(value, "the time in ms", 0, MAX_TIME_MS, errors)
    if not isinstance(value, str) or len(value) > 64:
        errors.append("a time is ISO 8601 (2026-01-31T12:00:00Z) or ms since the epoch")
        return None
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        errors.append(
            f"'{text[:40]}' is not a time: use ISO 8601 (2026-01-31T12:00:00Z) or ms since the epoch"
        )
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    ms = int(moment.timestamp() * 1000)
    if not 0 <= ms <= MAX_TIME_MS:
        errors.append(f"the time {text[:40]} is before 1970 or after 9999")
        return None
    return ms


def show_time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def offset_json_target(topic: Any, text: Any) -> Target:
    """kafka-delete-records.sh's ``--offset-json-file``:
    ``{"partitions": [{"topic": T, "partition": P, "offset": O}], "version": 1}``, every entry naming
    the purged topic."""
    name = check_topic(topic)
    if isinstance(text, str | bytes):
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise TargetError([f"the offset JSON is not JSON: {str(exc)[:120]}"]) from None
    else:
        doc = text
    if not isinstance(doc, Mapping):
        raise TargetError(['the offset JSON is an object: {"partitions": [...], "version": 1}'])
    errors: list[str] = []
    if doc.get("version", 1) != 1:
        errors.append(f"the offset JSON's version must be 1, not {str(doc.get('version'))[:20]}")
    entries = doc.get("partitions")
    if not isinstance(entries, list) or not entries:
        errors.append('the offset JSON needs "partitions": a list of {"topic", "partition", "offset"}')
        raise TargetError(errors)
    pairs = []
    for i, entry in enumerate(entries[: MAX_PARTITIONS + 1]):
        if not isinstance(entry, Mapping) or not {"topic", "partition", "offset"} <= set(entry):
            errors.append(f'entry {i + 1} needs "topic", "partition" and "offset"')
            continue
        if entry["topic"] != name:
            errors.append(
                f"entry {i + 1} names topic '{str(entry['topic'])[:60]}', not '{name}' (one topic a purge)"
            )
            continue
        pairs.append((entry["partition"], entry["offset"]))
    if errors:
        raise TargetError(errors)
    return offsets_target(name, pairs)


def target_from_json(data: Mapping[str, Any]) -> Target:
    """A target as ``Target.as_json`` wrote it (a held change's payload)."""
    mode = data.get("mode")
    if mode == OFFSETS:
        return offsets_target(data.get("topic"), dict(data.get("offsets") or {}))
    if mode == TIME:
        return time_target(data.get("topic"), data.get("before_ms"), data.get("partitions") or ())
    if mode == ALL:
        return all_target(data.get("topic"))
    raise TargetError([f"the mode is one of {', '.join(MODES)}"])


# -- the plan ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionPlan:
    """One partition: its log start and end now, the new start, what goes."""

    partition: int
    start: int
    end: int
    new_start: int
    size_bytes: int | None  # the leader replica's size now (None: unknown)
    groups_below: tuple[tuple[str, int], ...] = ()  # (group, committed offset) below the new start
    problem: str = ""

    @property
    def messages(self) -> int:
        return max(0, self.new_start - self.start) if not self.problem else 0

    @property
    def bytes_estimate(self) -> int | None:
        """The leader replica's size times the share of its records that go (an estimate)."""
        held = self.end - self.start
        if self.size_bytes is None or self.problem:
            return None
        if held <= 0 or self.messages == 0:
            return 0
        return int(self.size_bytes * self.messages / held)

    def as_json(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "start": self.start,
            "end": self.end,
            "new_start": self.new_start,
            "messages": self.messages,
            "bytes_estimate": self.bytes_estimate,
            "groups_below": [{"group": g, "committed": o} for g, o in self.groups_below],
            "problem": self.problem or None,
        }


@dataclass(frozen=True)
class Plan:
    """What a purge would do, partition by partition."""

    target: Target
    partitions: tuple[PartitionPlan, ...]
    groups_note: str = ""  # why the groups below are unknown, if they are
    problems: tuple[str, ...] = field(default=())

    @property
    def messages(self) -> int:
        return sum(p.messages for p in self.partitions)

    @property
    def bytes_estimate(self) -> int | None:
        known = [p.bytes_estimate for p in self.partitions if p.messages]
        return None if any(b is None for b in known) else sum(b for b in known if b is not None)

    @property
    def groups_below(self) -> list[str]:
        return sorted({g for p in self.partitions for g, _ in p.groups_below})

    @property
    def offsets(self) -> dict[int, int]:
        """What DeleteRecords is asked: the partitions where something goes, to their new start."""
        return {p.partition: p.new_start for p in self.partitions if p.messages > 0}

    def as_json(self) -> dict[str, Any]:
        return {
            "topic": self.target.topic,
            "target": self.target.as_json(),
            "messages": self.messages,
            "bytes_estimate": self.bytes_estimate,
            "bytes_estimate_note": BYTES_NOTE,
            "groups_below": self.groups_below,
            "groups_note": self.groups_note or None,
            "problems": list(self.problems),
            "partitions": [p.as_json() for p in self.partitions],
        }


BYTES_NOTE = (
    "estimate: each partition's leader replica size times the share of its records that go "
    "(records assumed of even size; segments an earlier purge left on disk still count, so it runs "
    "high then); Kafka frees the disk a whole segment at a time, later"
)


def plan(
    target: Target,
    bounds: Mapping[int, tuple[int, int]],
    *,
    time_offsets: Mapping[int, int | None] | None = None,
    sizes: Mapping[int, int | None] | None = None,
    committed: Mapping[str, Mapping[int, int]] | None = None,
) -> Plan:
    """The rows of a purge from Kafka's answers: ``bounds`` {partition: (start, end)} of the topic's
    partitions, ``time_offsets`` {partition: first offset at/after the time, None: no record that
    recent} for a time, ``sizes`` {partition: leader bytes}, ``committed`` {group: {partition: offset}}.
    An offset past the end or a partition the topic does not have is a problem: nothing runs."""
    sizes = sizes or {}
    committed = committed or {}
    wanted: dict[int, int | None]
    if target.mode == OFFSETS:
        wanted = dict(target.offsets)
    elif target.mode == TIME:
        chosen = target.partitions or tuple(sorted(bounds))
        wanted = {p: (time_offsets or {}).get(p, HIGH_WATERMARK) if p in bounds else None for p in chosen}
    else:
        wanted = dict.fromkeys(sorted(bounds), HIGH_WATERMARK)
    rows, problems = [], []
    for p, offset in sorted(wanted.items()):
        if p not in bounds:
            problem = f"partition {p}: {target.topic} has no such partition ({len(bounds)} partitions)"
            problems.append(problem)
            rows.append(PartitionPlan(p, -1, -1, -1, None, problem=problem))
            continue
        start, end = bounds[p]
        new = end if offset is None or offset == HIGH_WATERMARK else offset
        problem = ""
        if new > end:
            problem = f"partition {p}: offset {new} is past its end ({end}); nothing was purged"
            problems.append(problem)
        new = max(new, start) if not problem else new
        moves = not problem and new > start
        below = tuple(sorted((g, o[p]) for g, o in committed.items() if moves and p in o and o[p] < new))
        rows.append(PartitionPlan(p, start, end, new, sizes.get(p), below, problem))
    return Plan(target, tuple(rows), problems=tuple(problems))


def pin(plan_: Plan) -> list[list[int]]:
    """What must still hold when a held purge runs: each partition's start and new start (for ``all``
    and ``time`` the new start follows the end or the records' times, so more records arriving where
    the purge would reach them is drift; an untouched end is not)."""
    return [[p.partition, p.start, p.new_start] for p in plan_.partitions]


def from_body(topic: Any, data: Mapping[str, Any]) -> Target:
    """A target from an API body (or any mapping): exactly one of ``"all": true``, ``"before"`` (a
    time, with ``"partitions": [N, ...]`` to name some), ``"partitions": [{"partition", "offset"}]``,
    or ``"offset_json"`` (kafka-delete-records' document)."""
    chosen = [k for k in ("all", "before", "offset_json") if data.get(k) not in (None, False, "")]
    parts = data.get("partitions")
    if parts and "before" not in chosen:
        chosen.append("partitions")
    if len(chosen) != 1:
        raise TargetError(
            [
                'give exactly one of "all": true, "before" (a time), "partitions" (with offsets) or "offset_json"'
            ]
        )
    kind = chosen[0]
    if kind == "all":
        if data["all"] is not True:
            raise TargetError(['"all" is true or left out'])
        return all_target(topic)
    if kind == "offset_json":
        return offset_json_target(topic, data["offset_json"])
    if kind == "before":
        if parts is not None and not (
            isinstance(parts, list) and all(not isinstance(p, Mapping) for p in parts)
        ):
            raise TargetError(['with "before", "partitions" is a list of partition numbers'])
        return time_target(topic, data["before"], parts or ())
    if not isinstance(parts, list) or not all(isinstance(p, Mapping) for p in parts):
        raise TargetError(['"partitions" is a list of {"partition": N, "offset": O} (offset -1: the end)'])
    missing = [i + 1 for i, p in enumerate(parts) if "partition" not in p or "offset" not in p]
    if missing:
        raise TargetError([f'partition entry {missing[0]} needs "partition" and "offset"'])
    return offsets_target(topic, [(p["partition"], p["offset"]) for p in parts])
