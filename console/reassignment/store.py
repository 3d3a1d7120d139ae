"""Bulk reads and writes of a reassignment's partition rows (hot paths of 10,000-partition plans).

A 10,000-partition plan is read on every poll cycle and written once per state change; model
instances, per-row SQL and one ``json.loads`` per JSON value there cost more than the Kafka
requests of the cycle, so rows travel as plain tuples.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from django.db import connection, transaction
from django.db.models import QuerySet, TextField
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Cast

from console.kafka import TopicPartition
from console.models.reassignment import Reassignment, ReassignmentPartition
from console.reassignment import planner
from console.reassignment.progress import LiveEntry

STATE_UPDATE_CHUNK = 900  # ids per UPDATE ... WHERE id IN (...) (SQLite's parameter limit)


class Row(NamedTuple):
    """A partition row as the worker needs it (``original`` is None when it was not asked for)."""

    id: int
    topic: str
    partition: int
    original: list[int] | None
    target: list[int]


def partition_rows(r: Reassignment, states: Iterable[str], *, original: bool = True) -> list[Row]:
    """The reassignment's rows in ``states``; the replica lists of all rows are parsed in one go."""
    return _rows(r.partitions.filter(state__in=list(states)), original)


def known_rows(r: Reassignment, states: Iterable[str], known: dict[int, Row]) -> list[Row]:
    """``partition_rows(r, states)`` for a caller that keeps the rows it read (``known``: {id: Row},
    filled here). A row's topic, partition, original and target are never rewritten, so only the
    ids of the rows in ``states`` are read, and the rows not read before (a poll cycle's rows are
    the last cycle's but those that settled)."""
    ids = list(r.partitions.filter(state__in=list(states)).values_list("id", flat=True))
    missing = [i for i in ids if i not in known]
    if len(missing) > len(ids) // 2:
        known.update((x.id, x) for x in _rows(r.partitions.filter(state__in=list(states)), True))
    else:
        for i in range(0, len(missing), STATE_UPDATE_CHUNK):
            known.update(
                (x.id, x)
                for x in _rows(r.partitions.filter(pk__in=missing[i : i + STATE_UPDATE_CHUNK]), True)
            )
    return [known[i] for i in ids if i in known]


def _rows(rows: QuerySet, original: bool) -> list[Row]:
    fields = ("original", "target") if original else ("target",)
    raw = list(
        rows.annotate(**{f"{f}_text": Cast(f, TextField()) for f in fields}).values_list(
            "id", "topic", "partition", *(f"{f}_text" for f in fields)
        )
    )
    if not raw:
        return []
    k = len(fields)
    lists = json.loads("[" + ",".join(",".join(x[3:]) for x in raw) + "]")
    return [
        Row(i, topic, partition, lists[k * n] if original else None, lists[k * n + k - 1])
        for n, (i, topic, partition, *_) in enumerate(raw)
    ]


def tps(rows: Iterable) -> list[TopicPartition]:
    return [TopicPartition(x.topic, x.partition) for x in rows]


def row_tps(rows: QuerySet) -> list[TopicPartition]:
    """The partitions of a query of rows, read as tuples.

    Not ``.only("topic", "partition")`` through ``r.partitions``: Django then reads each row's
    left-out ``reassignment_id`` back with a query of its own (10,000 queries for 10,000 rows).
    """
    return [TopicPartition(t, p) for t, p in rows.values_list("topic", "partition")]


def set_states(updates: dict[tuple[str, str], list[int]]) -> None:
    """Bulk state changes: {(state, message): [row ids]}."""
    for (state, message), ids in updates.items():
        for i in range(0, len(ids), STATE_UPDATE_CHUNK):
            ReassignmentPartition.objects.filter(pk__in=ids[i : i + STATE_UPDATE_CHUNK]).update(
                state=state, message=message
            )


def set_stage(r: Reassignment, stage: str) -> None:
    Reassignment.objects.filter(pk=r.pk).update(stage=stage)
    r.stage = stage


def insert_rows(r: Reassignment, checks: Sequence[planner.PartitionCheck]) -> None:
    """One executemany for the partition rows of a new reassignment (state pending)."""
    meta = ReassignmentPartition._meta
    cols = [
        "reassignment_id",
        "topic",
        "partition",
        "original",
        "target",
        "state",
        "bytes_total",
        "bytes_done",
        "replicas",
        "message",
    ]
    prep_json = meta.get_field("original").get_db_prep_save
    sql = "INSERT INTO {} ({}) VALUES ({})".format(
        connection.ops.quote_name(meta.db_table),
        ", ".join(connection.ops.quote_name(meta.get_field(c).column) for c in cols),
        ", ".join(["%s"] * len(cols)),
    )
    # Replica lists repeat across partitions (a few broker combinations): adapt each list once.
    adapted: dict[tuple[int, ...], object] = {}

    def json_value(replicas: tuple[int, ...]) -> object:
        value = adapted.get(replicas)
        if value is None:
            value = adapted[replicas] = prep_json(list(replicas), connection)
        return value

    empty = meta.get_field("replicas").get_db_prep_save([], connection)
    rows = [
        (r.pk, c.topic, c.partition, json_value(c.current), json_value(c.target), "pending", 0, 0, empty, "")
        for c in checks
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def update_rows(rows: Sequence[ReassignmentPartition], fields: Sequence[str]) -> None:
    """Write ``fields`` of partition rows (instances with their pk): one executemany of a plain
    UPDATE by id, in one transaction. Django's ``bulk_update`` builds a CASE WHEN per row and
    field: the 10,000 rows of a move that finishes in one cycle took ~9 s of the poll (the
    throttles stayed set that long after Kafka had completed the move)."""
    if not rows:
        return
    meta = ReassignmentPartition._meta
    columns = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    sql = "UPDATE {} SET {} WHERE {} = %s".format(
        quote(meta.db_table),
        ", ".join(f"{quote(f.column)} = %s" for f in columns),
        quote(meta.pk.column),
    )
    params = [
        [f.get_db_prep_save(getattr(row, f.attname), connection) for f in columns] + [row.pk] for row in rows
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(sql, params)


# ---- Reassignment.live: the poller's latest progress of every moving partition ----------------
# {"<topic>|<partition>": [bytes_total, bytes_done, [[broker, status, bytes, new], ...]], "_at": epoch s}
# Written whole once per poll cycle; read here only, as LiveEntry values.

LIVE_AT = "_at"


def live_key(topic: str, partition: int) -> str:
    return f"{topic}|{partition}"


def write_live(
    r: Reassignment,
    entries: dict[tuple[str, int], LiveEntry],
    at: float,
    *,
    keys: Mapping[tuple[str, int], str] | None = None,
    **fields,
) -> None:
    """One UPDATE: the cycle's entries (replacing the last cycle's), their time, and ``fields``.
    ``keys``: the entries' ``live_key`` strings when the caller keeps them (a poller, every cycle)."""
    if keys is None:
        live: dict = {live_key(t, p): list(e) for (t, p), e in entries.items()}
    else:
        live = {keys[tp]: list(e) for tp, e in entries.items()}
    live[LIVE_AT] = at
    Reassignment.objects.filter(pk=r.pk).update(live=live, **fields)


def live_percents(r: Reassignment) -> dict[tuple[str, int], int]:
    """The percentage each moving partition showed in the last cycle (read once per worker process)."""
    value = Reassignment.objects.filter(pk=r.pk).values_list("live", flat=True).first() or {}
    out = {}
    for key, v in value.items():
        topic, _, part = key.rpartition("|")
        if topic and part.isdigit() and isinstance(v, list) and len(v) > 3:
            out[(topic, int(part))] = int(v[3])
    return out


def live_entry(r: Reassignment, topic: str, partition: int) -> LiveEntry | None:
    """The last cycle's progress of one partition (None when it was not moving then)."""
    value = (r.live or {}).get(live_key(topic, partition)) if isinstance(r.live, dict) else None
    return LiveEntry(*value) if value else None


# ---- Reassignment.offsets: leader offsets of the moving partitions (message estimates) --------


def write_offsets(r: Reassignment, found: dict[tuple[str, int], list[int]], at: float) -> None:
    value: dict = {live_key(t, p): v for (t, p), v in found.items()}
    value[LIVE_AT] = at
    Reassignment.objects.filter(pk=r.pk).update(offsets=value)


def offsets_read_at(r: Reassignment) -> float | None:
    at = (
        Reassignment.objects.filter(pk=r.pk)
        .annotate(at=KeyTransform(LIVE_AT, "offsets"))
        .values_list("at", flat=True)
        .first()
    )
    return at if isinstance(at, int | float) and at else None


def read_offsets(r: Reassignment) -> dict[tuple[str, int], list[int]]:
    value = Reassignment.objects.filter(pk=r.pk).values_list("offsets", flat=True).first() or {}
    out = {}
    for key, v in value.items():
        topic, _, part = key.rpartition("|")
        if topic and part.isdigit() and isinstance(v, list):
            out[(topic, int(part))] = v
    return out


def plan_digest(moves: Iterable[tuple[str, int, Sequence[int], Sequence[int]]]) -> str:
    """SHA-256 of a plan's (topic, partition, original, target) rows in a canonical form.

    The audit event of a start carries it: the partition rows kept with the reassignment (whose
    original and target are never rewritten) can be checked against it at any time.
    """
    rows = sorted([t, int(p), [int(b) for b in o], [int(b) for b in g]] for t, p, o, g in moves)
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()


# ---- the progress page's partition rows (read by every open progress tab once a second) -------

SHOWN_COLUMNS = ("topic", "partition", "state", "bytes_total", "bytes_done", "message")


def shown_rows(r: Reassignment, limit: int) -> tuple[list[tuple], str]:
    """The first ``limit`` partition rows as plain tuples (``SHOWN_COLUMNS``, then original, target
    and replicas as JSON text) and ``Reassignment.live`` as its JSON text: together everything the
    progress page's table shows, unparsed, so a digest of them tells whether a render may be reused."""
    raw = list(
        r.partitions.annotate(
            original_text=Cast("original", TextField()),
            target_text=Cast("target", TextField()),
            replicas_text=Cast("replicas", TextField()),
        ).values_list(*SHOWN_COLUMNS, "original_text", "target_text", "replicas_text")[:limit]
    )
    live = (
        Reassignment.objects.filter(pk=r.pk)
        .annotate(live_text=Cast("live", TextField()))
        .values_list("live_text", flat=True)
        .first()
    )
    return raw, live or "{}"


def parse_live(text: str) -> dict:
    """``Reassignment.live`` from its JSON text (``{}`` when it is not a JSON object)."""
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {}
