"""Share groups' pure rules (KIP-932): lag, the list's search and paging, and the reset plan as
``kafka-share-groups.sh --reset-offsets`` asks it (``--to-earliest``, ``--to-latest``,
``--to-datetime``; the console adds ``--to-offset``), scoped to every topic the group has share state
for (``--all-topics``) or one topic, whole or some partitions (``--topic t:0,1,2``). Each new start
offset is clamped to [log start, log end] with a note. No Django, no I/O.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

TP = tuple[str, int]
MODES = ("to-earliest", "to-latest", "to-datetime", "to-offset")
STATES = ("Empty", "Stable", "Dead")
MAX_NAME = 249  # Kafka's longest topic name; group ids are held to the same here
MAX_GROUP_ID = 255
MAX_PARTITIONS = 100_000
MAX_OFFSET = (1 << 63) - 1
_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


class ShareInputError(ValueError):
    """Input that plans nothing: ``errors`` are shown as they are."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def lag(start: int | None, end: int | None) -> int | None:
    """Records at or after the share-partition start offset: the log end minus the start (None while
    the partition has no share state). An upper bound: records a consumer holds (acquired, not yet
    acknowledged) count too. Kafka 4.1 reports no lag for share groups (its tool shows the start
    offset only)."""
    if start is None or start < 0 or end is None or end < 0:
        return None
    return max(0, end - start)


def tp_text(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"


def check_group_id(group_id) -> str:
    text = (group_id or "").strip() if isinstance(group_id, str) else ""
    if not text:
        raise ShareInputError(["Name the share group."])
    if len(text) > MAX_GROUP_ID:
        raise ShareInputError([f"A group id has at most {MAX_GROUP_ID} characters."])
    return text


def check_topic(topic) -> str:
    text = topic.strip() if isinstance(topic, str) else ""
    if not _TOPIC.match(text) or text in (".", ".."):
        raise ShareInputError(
            [f"'{topic}' is not a topic name (letters, digits, '.', '_', '-'; at most 249)."]
        )
    return text


def parse_topic_scope(text: str) -> tuple[str, tuple[int, ...]]:
    """``topic`` or ``topic:0,1,2`` (kafka-share-groups' ``--topic``) -> (topic, partitions; () = all)."""
    raw = (text or "").strip()
    topic, _, parts = raw.partition(":")
    topic = check_topic(topic)
    if not _:
        return topic, ()
    out: list[int] = []
    for piece in parts.split(","):
        piece = piece.strip()
        if not (piece.isascii() and piece.isdigit() and len(piece) <= 9):
            raise ShareInputError([f"'{piece}' in '{raw}' is not a partition number."])
        out.append(int(piece))
    if not out:
        raise ShareInputError([f"Name at least one partition after '{topic}:'."])
    return topic, tuple(sorted(set(out)))


def parse_datetime(text: str) -> int:
    """kafka-share-groups' ``--to-datetime`` ('YYYY-MM-DDThh:mm:ss.sss', UTC unless an offset is given)
    -> ms since the epoch."""
    raw = (text or "").strip()
    try:
        when = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ShareInputError([f"'{raw}' is not a time: use YYYY-MM-DDThh:mm:ss.sss (UTC)."]) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    ms = int(when.timestamp() * 1000)
    if ms < 0:
        raise ShareInputError([f"'{raw}' is before 1970."])
    return ms


@dataclass(frozen=True)
class ResetSpec:
    """What a reset asks: ``mode`` (MODES), ``topic`` ("" = all topics with share state),
    ``partitions`` (() = all of the topic), ``value`` (an offset, or ms for to-datetime)."""

    mode: str
    topic: str = ""
    partitions: tuple[int, ...] = ()
    value: int | None = None

    def as_json(self) -> dict:
        return {
            "mode": self.mode,
            "topic": self.topic,
            "partitions": list(self.partitions),
            "value": self.value,
        }

    @classmethod
    def from_json(cls, d: Mapping) -> ResetSpec:
        return cls(d["mode"], d.get("topic") or "", tuple(d.get("partitions") or ()), d.get("value"))


def make_spec(mode: str, topic_scope: str = "", *, offset=None, datetime_text: str = "") -> ResetSpec:
    """A checked ResetSpec from the doors' fields (``topic_scope`` as ``--topic``; empty: all topics)."""
    if mode not in MODES:
        raise ShareInputError([f"Choose how to reset: {', '.join(MODES)}."])
    topic, parts = parse_topic_scope(topic_scope) if (topic_scope or "").strip() else ("", ())
    value = None
    if mode == "to-offset":
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
            raise ShareInputError(["Give the offset to reset to (a whole number, 0 or more)."])
        value = offset
    elif mode == "to-datetime":
        value = parse_datetime(datetime_text)
    return ResetSpec(mode, topic, parts, value)


def select_partitions(spec: ResetSpec, with_state: Iterable[TP], partition_count: int | None) -> list[TP]:
    """The partitions a reset touches: every partition with share state (all topics), or the topic's
    (all, or those named); ShareInputError naming what does not exist."""
    if not spec.topic:
        chosen = sorted(set(with_state))
        if not chosen:
            raise ShareInputError(
                ["The group has no share state on any topic, so 'all topics' is nothing: name a topic."]
            )
        return chosen
    if partition_count is None:
        raise ShareInputError([f"Topic '{spec.topic}' does not exist."])
    if not spec.partitions:
        return [(spec.topic, p) for p in range(partition_count)]
    missing = [p for p in spec.partitions if p >= partition_count]
    if missing:
        raise ShareInputError(
            [
                f"Topic '{spec.topic}' has no partition {', '.join(map(str, missing))} (it has {partition_count})."
            ]
        )
    return [(spec.topic, p) for p in spec.partitions]


@dataclass(frozen=True)
class ResetRow:
    topic: str
    partition: int
    current: int | None  # the start offset now (None: no share state)
    new: int
    log_start: int
    log_end: int
    note: str = ""

    def as_json(self) -> dict:
        return {
            "topic": self.topic, "partition": self.partition, "current_start_offset": self.current,
            "new_start_offset": self.new, "log_start_offset": self.log_start, "log_end_offset": self.log_end,
            "note": self.note,
        }  # fmt: skip


def plan_reset(
    spec: ResetSpec,
    partitions: Iterable[TP],
    current: Mapping[TP, int],
    bounds: Mapping[TP, tuple[int, int] | None],
    by_time: Mapping[TP, int | None] | None = None,
) -> tuple[ResetRow, ...]:
    """current -> new for each partition, clamped to [log start, log end]."""
    rows: list[ResetRow] = []
    errors: list[str] = []
    for tp in partitions:
        b = bounds.get(tp)
        if b is None:
            errors.append(f"the log offsets of {tp_text(tp)} could not be read")
            continue
        start, end = b
        if spec.mode == "to-earliest":
            asked = start
        elif spec.mode == "to-latest":
            asked = end
        elif spec.mode == "to-datetime":
            found = (by_time or {}).get(tp)
            asked = end if found is None or found < 0 else found  # no record that recent: the log end
        else:
            asked = int(spec.value or 0)
        new, note = asked, ""
        if asked > end:
            new, note = end, f"{asked} is past the log end: set to the log end offset {end}"
        elif asked < start:
            new, note = start, f"{asked} is before the log start: set to the log start offset {start}"
        now = current.get(tp)
        rows.append(
            ResetRow(tp[0], tp[1], now if now is not None and now >= 0 else None, new, start, end, note)
        )
    if errors:
        raise ShareInputError(errors)
    if len(rows) > MAX_PARTITIONS:
        raise ShareInputError([f"A reset touches at most {MAX_PARTITIONS} partitions ({len(rows)} asked)."])
    return tuple(rows)


def confirmation_problem(group_id: str, typed: str | None, what: str) -> str:
    if (typed or "").strip() != group_id:
        return f"Type the group id ('{group_id}') to confirm the {what}; nothing was changed."
    return ""


def members_problem(group_id: str, members: Iterable[tuple[str, str, str]], what: str) -> str:
    """Kafka refuses a share group's offsets change or deletion while it has members: name them."""
    named = [f"{m} ({client} on {host})" for m, client, host in members]
    if not named:
        return ""
    shown = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
    return (
        f"Share group '{group_id}' has {len(named)} active member{'s' if len(named) != 1 else ''}: {shown}. "
        f"Stop its share consumers before the {what}."
    )


def matches(group_id: str, text: str) -> bool:
    return not text or text.lower() in group_id.lower()


def page_of(rows: list, page: int, per_page: int) -> tuple[list, int, int]:
    """(the page's rows, the page shown, pages)."""
    pages = max(1, -(-len(rows) // per_page))
    page = min(max(1, page), pages)
    return rows[(page - 1) * per_page : page * per_page], page, pages
