"""The offset-reset planner, pure: kafka-consumer-groups ``--reset-offsets`` over plain maps.

Kafka's tool (``ConsumerGroupCommand``) is the model:

* scope: ``--all-topics`` is every partition the group has a committed offset for, ``--topic t``
  every partition of t, ``--topic t:0,2`` those partitions; ``--from-file`` is its own scope
  (the file's partitions);
* target: ``--to-earliest``, ``--to-latest``, ``--to-datetime`` (the first offset at or after the
  time; the log end when no record is that new), ``--to-offset``, ``--shift-by N`` (from the
  committed offset: a partition without one cannot be shifted), ``--from-file`` (CSV
  ``topic,partition,offset``, as ``--export`` writes it);
* every new offset is kept within [log start, log end], the way the tool clamps it.

The I/O (who is in the group, what is committed, the log offsets) is ``actions.py``'s.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

TP = tuple[str, int]  # (topic, partition); the gateway's TopicPartition is one

MODES = ("to-earliest", "to-latest", "to-datetime", "to-offset", "shift-by", "from-file")
SCOPES = ("all-topics", "topic", "partitions")
MAX_FILE_ROWS = 100_000
MAX_PARTITIONS = 100_000


class ResetPlanError(ValueError):
    """The reset cannot be planned; ``errors`` says every reason (a line of the file, a partition)."""

    def __init__(self, errors: Iterable[str]) -> None:
        self.errors = list(errors)
        super().__init__(
            "; ".join(self.errors[:10])
            + (f" (and {len(self.errors) - 10} more)" if len(self.errors) > 10 else "")
        )


@dataclass(frozen=True)
class ResetSpec:
    """What to reset and to what. ``value`` is the offset (to-offset), the shift (shift-by) or the
    time in epoch milliseconds (to-datetime); ``file_offsets`` the parsed file (from-file)."""

    mode: str
    scope: str = "all-topics"
    topic: str = ""
    partitions: tuple[int, ...] = ()
    value: int | None = None
    file_offsets: Mapping[TP, int] = field(default_factory=dict, hash=False)

    def describe(self) -> str:
        """The reset in kafka-consumer-groups' words (for the audit and the pages)."""
        what = {
            "to-earliest": "--to-earliest",
            "to-latest": "--to-latest",
            "to-datetime": f"--to-datetime (epoch ms {self.value})",
            "to-offset": f"--to-offset {self.value}",
            "shift-by": f"--shift-by {self.value}",
            "from-file": f"--from-file ({len(self.file_offsets)} partitions)",
        }.get(self.mode, self.mode)
        if self.mode == "from-file":
            return what
        if self.scope == "all-topics":
            return f"{what} --all-topics"
        if self.scope == "topic":
            return f"{what} --topic {self.topic}"
        return f"{what} --topic {self.topic}:{','.join(map(str, self.partitions))}"


@dataclass(frozen=True)
class ResetRow:
    """One partition of a plan: the committed offset now (None: none), the new one, the log's bounds."""

    topic: str
    partition: int
    current: int | None
    new: int
    log_start: int
    log_end: int
    note: str = ""

    @property
    def lag_before(self) -> int | None:
        return lag(self.current, self.log_end)

    @property
    def lag_after(self) -> int:
        return max(0, self.log_end - self.new)

    @property
    def changes(self) -> bool:
        return self.current != self.new


@dataclass(frozen=True)
class ResetPlan:
    spec: ResetSpec
    rows: tuple[ResetRow, ...]

    @property
    def offsets(self) -> dict[TP, int]:
        return {(r.topic, r.partition): r.new for r in self.rows}

    @property
    def before(self) -> dict[TP, int | None]:
        return {(r.topic, r.partition): r.current for r in self.rows}

    @property
    def changed(self) -> int:
        return sum(r.changes for r in self.rows)

    @property
    def lag_before(self) -> int:
        return sum(r.lag_before or 0 for r in self.rows)

    @property
    def lag_after(self) -> int:
        return sum(r.lag_after for r in self.rows)

    @property
    def topics(self) -> list[str]:
        return sorted({r.topic for r in self.rows})


def lag(committed: int | None, log_end: int | None) -> int | None:
    """Messages between the committed offset and the log end (None when either is unknown)."""
    if committed is None or log_end is None or committed < 0 or log_end < 0:
        return None
    return max(0, log_end - committed)


def tp_text(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"


# -- scope ---------------------------------------------------------------------------------------


def select_partitions(
    spec: ResetSpec, committed: Mapping[TP, int], partition_counts: Mapping[str, int]
) -> list[TP]:
    """The partitions a reset touches (Kafka's scopes); ResetPlanError naming what does not exist."""
    if spec.mode not in MODES:
        raise ResetPlanError([f"Unknown reset mode '{spec.mode}': use one of {', '.join(MODES)}."])
    if spec.mode == "from-file":
        wanted = sorted(spec.file_offsets)
        if not wanted:
            raise ResetPlanError(["The file names no partition."])
        errors = [
            f"{tp_text(tp)} does not exist (topic '{tp[0]}' "
            + (
                f"has {partition_counts[tp[0]]} partitions)."
                if tp[0] in partition_counts
                else "does not exist)."
            )
            for tp in wanted
            if not 0 <= tp[1] < partition_counts.get(tp[0], 0)
        ]
        if errors:
            raise ResetPlanError(errors)
        return wanted
    if spec.scope == "all-topics":
        if not committed:
            raise ResetPlanError(
                ["The group has no committed offsets, so 'all topics' is nothing: choose a topic."]
            )
        return sorted(committed)
    if spec.scope not in SCOPES:
        raise ResetPlanError([f"Unknown scope '{spec.scope}': use one of {', '.join(SCOPES)}."])
    if not spec.topic:
        raise ResetPlanError(["Name the topic to reset."])
    count = partition_counts.get(spec.topic)
    if count is None:
        raise ResetPlanError([f"Topic '{spec.topic}' does not exist."])
    if spec.scope == "topic":
        return [(spec.topic, p) for p in range(count)]
    if not spec.partitions:
        raise ResetPlanError([f"Choose at least one partition of '{spec.topic}'."])
    missing = [p for p in spec.partitions if not 0 <= p < count]
    if missing:
        raise ResetPlanError(
            [
                f"Topic '{spec.topic}' has no partition {', '.join(map(str, missing))} (it has {count}: 0–{count - 1})."
            ]
        )
    return [(spec.topic, p) for p in sorted(set(spec.partitions))]


# -- the plan ------------------------------------------------------------------------------------


def _requested(spec: ResetSpec, tp: TP, current: int | None, start: int, end: int, by_time) -> int | str:
    """The offset asked for before clamping, or why there is none."""
    if spec.mode == "to-earliest":
        return start
    if spec.mode == "to-latest":
        return end
    if spec.mode == "to-offset":
        return spec.value if spec.value is not None else "no offset given"
    if spec.mode == "shift-by":
        if spec.value is None:
            return "no shift given"
        if current is None:
            return f"cannot shift {tp_text(tp)}: the group has no committed offset for it"
        return current + spec.value
    if spec.mode == "to-datetime":
        found = (by_time or {}).get(tp)
        return end if found is None or found < 0 else found  # no record that new: the log end
    return spec.file_offsets[tp]


def plan_reset(
    spec: ResetSpec,
    partitions: Iterable[TP],
    committed: Mapping[TP, int],
    log_start: Mapping[TP, int | None],
    log_end: Mapping[TP, int | None],
    by_time: Mapping[TP, int | None] | None = None,
) -> ResetPlan:
    """current → new for each partition, clamped to [log start, log end]; ResetPlanError when any
    partition cannot be planned (its offsets unreadable, nothing to shift from)."""
    rows: list[ResetRow] = []
    errors: list[str] = []
    for tp in partitions:
        start, end = log_start.get(tp), log_end.get(tp)
        if start is None or end is None or start < 0 or end < 0:
            errors.append(f"the log offsets of {tp_text(tp)} could not be read")
            continue
        current = committed.get(tp)
        asked = _requested(spec, tp, current, start, end, by_time)
        if isinstance(asked, str):
            errors.append(asked)
            continue
        new, note = asked, ""
        if asked > end:
            new, note = end, f"{asked} is past the log end: set to the log end offset {end}"
        elif asked < start:
            new, note = start, f"{asked} is before the log start: set to the log start offset {start}"
        rows.append(ResetRow(tp[0], tp[1], current, new, start, end, note))
    if errors:
        raise ResetPlanError(errors)
    if len(rows) > MAX_PARTITIONS:
        raise ResetPlanError([f"A reset touches at most {MAX_PARTITIONS} partitions ({len(rows)} asked)."])
    return ResetPlan(spec, tuple(rows))


# -- input ---------------------------------------------------------------------------------------


def _whole(text: str) -> bool:
    """A whole number Kafka can hold (ASCII digits only: ``int`` also reads other scripts' digits)."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def parse_partitions(text: str) -> tuple[int, ...]:
    """``0,2,5-7`` → (0, 2, 5, 6, 7); ResetPlanError for anything else."""
    out: list[int] = []
    errors: list[str] = []
    for token in (t.strip() for t in text.replace(" ", ",").split(",")):
        if not token:
            continue
        low, dash, high = token.partition("-")
        if _whole(low) and (not dash or _whole(high)):
            first, last = int(low), int(high) if dash else int(low)
            if last < first:
                errors.append(f"'{token}' is an empty range")
            elif last - first + len(out) >= MAX_PARTITIONS:
                errors.append(f"at most {MAX_PARTITIONS} partitions")
                break
            else:
                out.extend(range(first, last + 1))
        else:
            errors.append(f"'{token[:40]}' is not a partition number or a range like 3-5")
    if errors:
        raise ResetPlanError(errors)
    if not out:
        raise ResetPlanError(["Give at least one partition number (e.g. 0,2,5-7)."])
    return tuple(sorted(set(out)))


def parse_offsets_csv(text: str, group_id: str = "") -> dict[TP, int]:
    """kafka-consumer-groups' reset file: ``topic,partition,offset`` per line (``group,topic,...``
    as exported for several groups: this group's lines only). Every bad line is named."""
    rows: dict[TP, int] = {}
    seen_at: dict[TP, int] = {}
    errors: list[str] = []
    try:
        _read_csv(text, group_id, rows, seen_at, errors)
    except csv.Error as exc:  # an unterminated quote, a field over the csv limit
        errors.append(f"the file is not CSV: {exc}")
    if errors:
        raise ResetPlanError(errors)
    if not rows:
        raise ResetPlanError(["The file has no line of the form topic,partition,offset."])
    return rows


def _read_csv(text: str, group_id: str, rows: dict, seen_at: dict, errors: list[str]) -> None:
    for number, cells in enumerate(csv.reader(io.StringIO(text), strict=True), 1):
        cells = [c.strip() for c in cells]
        if not any(cells):
            continue
        if number == 1 and [c.lower() for c in cells[-3:]] == ["topic", "partition", "offset"]:
            continue  # a header line
        if len(cells) == 4:
            if group_id and cells[0] != group_id:
                continue  # another group's line (Kafka applies each group's lines to that group)
            cells = cells[1:]
        if len(cells) != 3:
            errors.append(f"line {number}: expected topic,partition,offset ({len(cells)} fields)")
            continue
        topic, partition, offset = cells
        if not topic:
            errors.append(f"line {number}: the topic is empty")
        elif not _whole(partition) or not _whole(offset):
            errors.append(f"line {number}: partition and offset must be whole numbers >= 0")
        elif (topic, int(partition)) in seen_at:
            errors.append(
                f"line {number}: {topic}-{int(partition)} is already on line {seen_at[(topic, int(partition))]}"
            )
        else:
            tp = (topic, int(partition))
            seen_at[tp] = number
            rows[tp] = int(offset)
        if len(rows) > MAX_FILE_ROWS:
            errors.append(f"the file has more than {MAX_FILE_ROWS} partitions")
            break
        if len(errors) > 50:
            break


def to_csv(rows: Iterable[ResetRow]) -> str:
    """A plan's new offsets as a reset file (what ``--export`` writes; ``--from-file`` reads it)."""
    return "".join(f"{r.topic},{r.partition},{r.new}\n" for r in rows)
