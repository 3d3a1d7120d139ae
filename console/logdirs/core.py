"""Moves between the log dirs of one broker, pure: the plan file read, the moves checked against what
the brokers report, and each move's progress. No Django, no I/O.

A move is (topic, partition, broker) -> a target dir. A plan comes from the form (one broker, a
topic, some partitions, one dir) or from ``kafka-reassign-partitions.sh``'s plan file
(``{"version": 1, "partitions": [{"topic", "partition", "replicas", "log_dirs"}]}``) where, for a
move between dirs, ``replicas`` must be the partition's current replicas (a plan that changes brokers
belongs to the reassignment page) and ``log_dirs`` gives "any" (stay) or an absolute dir per replica.

``check`` holds the moves against each broker's DescribeLogDirs answer (``Dirs``): an unknown dir
(LOG_DIR_NOT_FOUND), a replica the broker does not hold (REPLICA_NOT_AVAILABLE), a replica already
in that dir, an offline dir (KAFKA_STORAGE_ERROR) or a move already running for it are problems,
and nothing is sent. ``progress`` reads a move from the same answers: the future replica's size
against the current one's while it copies; done when the replica is reported in its target dir with
no future replica left.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ANY = "any"
MAX_MOVES = 10_000
REASSIGN_HINT = "use the Reassignments page (or 'kafka reassign') to move replicas between brokers"

# progress states of one move
WAITING = "waiting"  # submitted, no future replica reported yet
COPYING = "copying"
DONE = "done"
GONE = "gone"  # the replica left the broker (or its dir) while moving: not in the target dir


class PlanError(ValueError):
    """The plan cannot be read or does not describe moves between dirs (``errors``: each problem)."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True, order=True)
class Move:
    topic: str
    partition: int
    broker: int
    target: str

    @property
    def key(self) -> str:
        """The move's resource name: ``topic-partition@broker``."""
        return f"{self.topic}-{self.partition}@{self.broker}"

    def as_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "broker": self.broker, "dir": self.target}


def move_from_json(d: Mapping[str, Any]) -> Move:
    return Move(str(d["topic"]), int(d["partition"]), int(d["broker"]), str(d["dir"]))


@dataclass(frozen=True)
class Replica:
    """One replica in a dir as DescribeLogDirs reports it."""

    size: int
    offset_lag: int
    future: bool


@dataclass(frozen=True)
class Dir:
    """One log dir of a broker: ``offline`` when it answered KAFKA_STORAGE_ERROR."""

    path: str
    offline: bool
    total_bytes: int | None
    usable_bytes: int | None
    replicas: Mapping[tuple[str, int], Replica] = field(default_factory=dict)

    @property
    def current(self) -> dict[tuple[str, int], Replica]:
        return {k: r for k, r in self.replicas.items() if not r.future}

    @property
    def futures(self) -> dict[tuple[str, int], Replica]:
        return {k: r for k, r in self.replicas.items() if r.future}


# broker -> its dirs (or the error text when it could not be asked)
Dirs = Mapping[int, "tuple[Dir, ...] | str"]


def _abs_dir(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("/") and posixpath.normpath(value) == value.rstrip("/")


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def form_moves(broker: Any, topic: str, partitions: list[Any], target: str) -> list[Move]:
    """The form's moves: one broker, one topic, its partitions, one dir."""
    errors = []
    if not _int(broker) or broker < 0:
        errors.append("Choose a broker (its id).")
    if not isinstance(topic, str):
        errors.append("The topic must be a name (text).")
        topic = ""
    elif not topic.strip():
        errors.append("Name the topic.")
    topic = topic.strip()
    if not partitions:
        errors.append("Name at least one partition.")
    elif not all(_int(p) and p >= 0 for p in partitions):
        errors.append("Partitions are numbers from 0.")
    target = target.strip() if isinstance(target, str) else ""
    if not _abs_dir(target):
        errors.append(
            f"The target dir must be an absolute path, such as /var/lib/kafka/data-1 (got {target!r})."
        )
    if errors:
        raise PlanError(errors)
    return sorted({Move(topic, p, broker, target) for p in partitions})


def plan_moves(doc: Any, current: Mapping[tuple[str, int], list[int]]) -> list[Move]:
    """kafka-reassign-partitions' plan file -> the moves between dirs it asks for.

    ``current``: each named partition's replicas now (a partition missing from it does not exist).
    Every problem is named; nothing is returned unless all is well.
    """
    if not isinstance(doc, dict):
        raise PlanError(['The plan must be a JSON object: {"version": 1, "partitions": [...]}.'])
    errors: list[str] = []
    if doc.get("version", 1) != 1:
        errors.append(f"Unknown plan version {doc.get('version')!r}: only version 1 is read.")
    entries = doc.get("partitions")
    if not isinstance(entries, list) or not entries:
        raise PlanError([*errors, 'The plan has no "partitions" list.'])
    moves: dict[tuple[str, int, int], Move] = {}
    for i, e in enumerate(entries):
        where = f"partitions[{i}]"
        if not isinstance(e, dict):
            errors.append(f"{where} is not an object.")
            continue
        topic, part, reps, dirs = e.get("topic"), e.get("partition"), e.get("replicas"), e.get("log_dirs")
        if not isinstance(topic, str) or not topic or not _int(part) or part < 0:
            errors.append(f'{where} needs "topic" (a name) and "partition" (a number from 0).')
            continue
        where = f"{topic}-{part}"
        if not isinstance(reps, list) or not reps or not all(_int(b) for b in reps):
            errors.append(f'{where}: "replicas" must list broker ids.')
            continue
        if dirs is None:
            errors.append(f'{where}: no "log_dirs": this plan moves nothing between dirs.')
            continue
        if not isinstance(dirs, list) or len(dirs) != len(reps):
            errors.append(f'{where}: "log_dirs" must give one entry per replica ({len(reps)}).')
            continue
        now = current.get((topic, part))
        if now is None:
            errors.append(f"{where}: no such partition.")
            continue
        if list(reps) != list(now):
            errors.append(
                f"{where}: replicas {reps} differ from the current {list(now)}: this page moves replicas "
                f"between the dirs of one broker only; {REASSIGN_HINT}."
            )
            continue
        for broker, d in zip(reps, dirs, strict=True):
            if d == ANY:
                continue
            if not _abs_dir(d):
                errors.append(
                    f'{where}: log dir {d!r} for broker {broker} is neither "any" nor an absolute path.'
                )
                continue
            key = (topic, part, broker)
            if key in moves and moves[key].target != d:
                errors.append(f"{where}: broker {broker} is given two dirs.")
                continue
            moves[key] = Move(topic, part, broker, d)
    if not errors and not moves:
        errors.append('Every log dir in the plan is "any": nothing to move.')
    if len(moves) > MAX_MOVES:
        errors.append(f"{len(moves)} moves: at most {MAX_MOVES} in one plan.")
    if errors:
        raise PlanError(errors)
    return sorted(moves.values())


def plan_file(moves: list[Move], current: Mapping[tuple[str, int], list[int]]) -> dict[str, Any]:
    """The moves as kafka-reassign-partitions' plan file (other replicas: "any")."""
    by_part: dict[tuple[str, int], dict[int, str]] = {}
    for m in moves:
        by_part.setdefault((m.topic, m.partition), {})[m.broker] = m.target
    parts = []
    for (topic, part), dirs in sorted(by_part.items()):
        reps = list(current.get((topic, part), sorted(dirs)))
        parts.append(
            {
                "topic": topic,
                "partition": part,
                "replicas": reps,
                "log_dirs": [dirs.get(b, ANY) for b in reps],
            }
        )
    return {"version": 1, "partitions": parts}


@dataclass(frozen=True)
class Row:
    """One move as the dry run shows it: where the replica is, where it goes, what to copy."""

    move: Move
    current: str | None
    size: int | None
    problem: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            **self.move.as_json(),
            "current_dir": self.current,
            "bytes": self.size,
            "problem": self.problem,
        }


def where(dirs: tuple[Dir, ...], tp: tuple[str, int]) -> tuple[Dir | None, Replica | None, Dir | None]:
    """(the dir holding the replica, the replica, the dir of its future replica)."""
    home = rep = fut = None
    for d in dirs:
        r = d.replicas.get(tp)
        if r is None:
            continue
        if r.future:
            fut = d
        else:
            home, rep = d, r
    return home, rep, fut


def check(moves: list[Move], dirs: Dirs) -> list[Row]:
    """Each move against its broker's dirs; a row with ``problem`` set is refused (nothing is sent)."""
    rows = []
    for m in moves:
        got = dirs.get(m.broker)
        if got is None:
            rows.append(Row(m, None, None, f"broker {m.broker} is not in the cluster"))
            continue
        if isinstance(got, str):
            rows.append(Row(m, None, None, f"broker {m.broker} cannot be asked: {got}"))
            continue
        paths = {d.path: d for d in got}
        home, rep, fut = where(got, (m.topic, m.partition))
        current = home.path if home else None
        size = rep.size if rep else None
        target = paths.get(m.target)
        if target is None:
            problem = (
                f"broker {m.broker} has no log dir {m.target} (LOG_DIR_NOT_FOUND); its dirs: "
                + ", ".join(sorted(paths))
            )
        elif target.offline:
            problem = f"log dir {m.target} of broker {m.broker} is offline (KAFKA_STORAGE_ERROR)"
        elif home is None and not any(d.offline for d in got):
            problem = f"broker {m.broker} holds no replica of {m.topic}-{m.partition} (REPLICA_NOT_AVAILABLE)"
        elif home is None:
            problem = (
                f"broker {m.broker} reports no replica of {m.topic}-{m.partition}; one of its dirs is "
                "offline (KAFKA_STORAGE_ERROR)"
            )
        elif fut is not None:
            problem = (
                f"a move of {m.topic}-{m.partition} on broker {m.broker} to {fut.path} is already running"
            )
        elif current == m.target:
            problem = f"{m.topic}-{m.partition} is already in {m.target} on broker {m.broker}"
        else:
            problem = ""
        rows.append(Row(m, current, size, problem))
    return rows


@dataclass(frozen=True)
class Progress:
    """One move read from its broker's dirs: ``copied`` of ``size`` bytes."""

    move: Move
    state: str
    copied: int
    size: int
    current: str | None

    @property
    def fraction(self) -> float:
        if self.state == DONE:
            return 1.0
        return min(1.0, self.copied / self.size) if self.size > 0 else 0.0

    @property
    def percent(self) -> int:
        return int(self.fraction * 100)

    def as_json(self) -> dict[str, Any]:
        return {
            **self.move.as_json(),
            "state": self.state,
            "copied_bytes": self.copied,
            "size_bytes": self.size,
            "current_dir": self.current,
            "percent": self.percent,
        }


def progress(m: Move, dirs: tuple[Dir, ...]) -> Progress:
    """Where a move stands: copying (the future replica's size of the current's), done (the replica
    is in the target dir, no future replica left), waiting (no future replica yet) or gone."""
    home, rep, fut = where(dirs, (m.topic, m.partition))
    if home is not None and home.path == m.target and fut is None:
        return Progress(m, DONE, rep.size, rep.size, home.path)  # type: ignore[union-attr]
    if fut is not None and home is not None:
        copied = fut.replicas[(m.topic, m.partition)].size
        return Progress(m, COPYING, copied, rep.size, home.path)  # type: ignore[union-attr]
    if home is None:
        return Progress(m, GONE, 0, 0, None)
    return Progress(m, WAITING, 0, rep.size, home.path)  # type: ignore[union-attr]


def totals(rows: list[Row]) -> int:
    return sum(r.size or 0 for r in rows if not r.problem)
