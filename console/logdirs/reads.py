"""What the pages, the API and the CLI show of log dirs: one broker's dirs (path, total and usable
bytes, replicas and their size, each replica with its dir), the moves in progress (future replicas,
their size against the current replica's), and the dry run of a move plan.

Reads, per broker asked: one DescribeLogDirs (all its replicas, future ones included); a plan file's
check adds one Metadata of the topics it names (their current replicas).
"""

from __future__ import annotations

from dataclasses import dataclass

from console import access
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.logdirs import core
from console.logdirs.core import Dir, Dirs, Move, PlanError, Replica, Row
from console.models import Cluster


class LogDirInvalid(ChangeInvalid):
    """The move is refused as asked (bad input, a dir or replica the broker does not have, a replica
    already there, an offline dir, a move already running); nothing was sent to Kafka."""


def checked(make, *args) -> list[Move]:
    """Moves built by one of ``core``'s readers, their errors as the area's refusal."""
    try:
        return make(*args)
    except PlanError as exc:
        raise LogDirInvalid(exc.errors) from None


def _dirs(infos) -> tuple[Dir, ...]:
    out = []
    for d in infos:
        out.append(
            Dir(
                d.path,
                d.error is not None,
                d.total_bytes,
                d.usable_bytes,
                {
                    (tp.topic, tp.partition): Replica(r.size, r.offset_lag, r.is_future)
                    for tp, r in d.replicas.items()
                },
            )
        )
    return tuple(out)


def dirs_of(cluster: Cluster, brokers: list[int], partitions=None) -> Dirs:
    """Each broker's dirs, or the text of why it could not be asked (no permission check)."""
    answers = gateway_for(cluster).describe_log_dirs(sorted(set(brokers)), partitions)
    return {
        b: (f"{a.name}: {a.operator_text}" if isinstance(a, KafkaOperationError) else _dirs(a))
        for b, a in answers.items()
    }


def broker_dirs(cluster: Cluster, broker: int) -> tuple[Dir, ...]:
    """One broker's dirs; KafkaOperationError when it cannot be asked."""
    return _dirs(gateway_for(cluster).broker_log_dirs(broker))


@dataclass(frozen=True)
class DirView:
    """A log dir as the broker's page shows it."""

    dir: Dir
    count: int
    size: int
    rows: list[tuple[str, int, int]]  # (topic, partition, size) of its replicas, searched, sorted


@dataclass(frozen=True)
class MovingView:
    """A move in progress on the broker (a future replica), whoever started it."""

    topic: str
    partition: int
    source: str | None
    target: str
    copied: int
    size: int
    offset_lag: int

    @property
    def percent(self) -> int:
        return min(100, int(self.copied * 100 / self.size)) if self.size > 0 else 0


@dataclass(frozen=True)
class BrokerDirsView:
    broker: int
    dirs: list[DirView]
    moving: list[MovingView]
    search: str
    shown_limit: int

    @property
    def paths(self) -> list[str]:
        return [v.dir.path for v in self.dirs if not v.dir.offline]

    def as_json(self) -> dict:
        return {
            "broker": self.broker,
            "log_dirs": [
                {
                    "path": v.dir.path,
                    "offline": v.dir.offline,
                    "total_bytes": v.dir.total_bytes,
                    "usable_bytes": v.dir.usable_bytes,
                    "replicas": v.count,
                    "size_bytes": v.size,
                }
                for v in self.dirs
            ],
            "moving": [
                {
                    "topic": m.topic,
                    "partition": m.partition,
                    "from": m.source,
                    "to": m.target,
                    "copied_bytes": m.copied,
                    "size_bytes": m.size,
                    "offset_lag": m.offset_lag,
                    "percent": m.percent,
                }
                for m in self.moving
            ],
        }


def _moving(dirs: tuple[Dir, ...]) -> list[MovingView]:
    out = []
    for d in dirs:
        for (topic, part), r in d.futures.items():
            home, rep, _ = core.where(dirs, (topic, part))
            out.append(
                MovingView(
                    topic,
                    part,
                    home.path if home else None,
                    d.path,
                    r.size,
                    rep.size if rep else 0,
                    r.offset_lag,
                )
            )
    return sorted(out, key=lambda m: (m.topic, m.partition))


def describe(*, actor, cluster: Cluster, broker: int, search: str = "", limit: int = 200) -> BrokerDirsView:
    """A broker's dirs with their replicas (``search``: topic names containing it, ``limit`` rows a
    dir) and the moves in progress. Needs ``cluster.view``."""
    access.require(actor, cluster, access.VIEW)
    dirs = broker_dirs(cluster, broker)
    needle = search.strip().lower()
    views = []
    for d in dirs:
        cur = d.current
        rows = sorted(
            ((t, p, r.size) for (t, p), r in cur.items() if not needle or needle in t.lower()),
            key=lambda x: (x[0], x[1]),
        )
        views.append(DirView(d, len(cur), sum(r.size for r in cur.values()), rows[:limit]))
    return BrokerDirsView(broker, views, _moving(dirs), search, limit)


def summary(cluster: Cluster, broker: int) -> BrokerDirsView | None:
    """The broker page's short summary (dirs, moves in progress), None when it cannot be read."""
    try:
        dirs = broker_dirs(cluster, broker)
    except KafkaOperationError:
        return None
    views = [DirView(d, len(d.current), sum(r.size for r in d.current.values()), []) for d in dirs]
    return BrokerDirsView(broker, views, _moving(dirs), "", 0)


def current_replicas(cluster: Cluster, topics: set[str]) -> dict[tuple[str, int], list[int]]:
    """Each partition's replicas now, for the plan file's check (unknown topics: left out)."""
    got = gateway_for(cluster).describe_topics(sorted(topics))
    out: dict[tuple[str, int], list[int]] = {}
    for name, meta in got.items():
        if isinstance(meta, KafkaOperationError):
            continue
        for p in meta.partitions:
            out[(name, p.id)] = list(p.replicas)
    return out


def plan_file_moves(cluster: Cluster, doc) -> list[Move]:
    """kafka-reassign-partitions' plan file read against the partitions' replicas now."""
    topics = set()
    if isinstance(doc, dict) and isinstance(doc.get("partitions"), list):
        topics = {
            e.get("topic")
            for e in doc["partitions"]
            if isinstance(e, dict) and isinstance(e.get("topic"), str)
        }
    current = current_replicas(cluster, topics) if topics else {}
    return checked(core.plan_moves, doc, current)


@dataclass(frozen=True)
class DryRun:
    rows: list[Row]

    @property
    def problems(self) -> list[str]:
        return [
            f"{r.move.topic}-{r.move.partition} on broker {r.move.broker}: {r.problem}"
            for r in self.rows
            if r.problem
        ]

    @property
    def total_bytes(self) -> int:
        return core.totals(self.rows)

    def as_json(self) -> dict:
        return {
            "moves": [r.as_json() for r in self.rows],
            "bytes_to_copy": self.total_bytes,
            "problems": self.problems,
        }


def check_moves(cluster: Cluster, moves: list[Move]) -> DryRun:
    """Each move against what its broker reports now (no permission check: callers check)."""
    return DryRun(core.check(moves, dirs_of(cluster, [m.broker for m in moves])))


def dry_run(*, actor, cluster: Cluster, moves: list[Move]) -> DryRun:
    """What the moves would do: each replica's dir now -> the target, the bytes to copy, the problems.
    Needs ``reassignment.manage`` (the moves' own permission)."""
    access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    return check_moves(cluster, moves)


def active_moves(*, actor, cluster: Cluster, broker: int | None = None) -> list:
    """The console's unfinished moves between dirs (of ``broker``), newest first: the Operation rows
    only (no Kafka read), for the broker page's summary. Needs ``cluster.view``."""
    from console.models import Operation, OperationState

    access.require(actor, cluster, access.VIEW)
    ops = Operation.objects.filter(
        cluster=cluster, kind="logdir.move", state__in=(OperationState.PENDING, OperationState.RUNNING)
    ).order_by("-id")
    return [
        op
        for op in ops
        if broker is None or any(m.get("broker") == broker for m in op.params.get("moves", []))
    ]


def move_json(op) -> dict:
    """A move (its Operation) as the API, the page and the CLI show it: per replica its progress."""
    data = op.data or {}
    return {
        "id": op.pk,
        "state": op.state,
        "progress": op.progress,
        "progress_text": op.progress_text,
        "error": op.error,
        "throttle": op.params.get("throttle"),
        "moves": [
            {**m, **(data.get("progress", {}).get(core.move_from_json(m).key) or {})}
            | {"failed": data.get("failed", {}).get(core.move_from_json(m).key, "")}
            for m in op.params.get("moves", [])
        ],
        "throttles": data.get("throttles") or {},
    }
