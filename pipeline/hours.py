"""Report-grain state per closed hour, derived from the per-snapshot rollups on the driver (Arrow, numpy).

An hourly run must not re-read the whole window's snapshots to publish its reports. So, next to
the per-snapshot rollups, each rolled-up hour keeps what the reports need of it, one row per
(topic, hour) and per (group, topic, hour), plus one row per snapshot for the cluster totals. A
window's reports are then a merge of its hours' rows (:mod:`pipeline.windows`): 720 rows per
topic for 30 days, not 8,640 snapshots.

Only what an hour knows on its own is kept, so an hour's state never depends on another hour and
a late snapshot re-derives just its own hour. The one thing that crosses hours, the deltas of the
hour's first snapshot against the cluster's previous snapshot, is left to the merge: the state
carries that first snapshot's own values (``f_size``, ``f_end``) and the sums over the hour's
other snapshots, whose previous snapshot is inside the hour. The same holds for consumer groups:
whether the group's first commit of the hour moved forward is decided against the previous
hour's last commit at merge time.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.reference import HOUR_MS

I64, F64, S = pa.int64(), pa.float64(), pa.string()

SCHEMAS: dict[str, pa.Schema] = {
    # per snapshot: the topic rows' totals (cluster_size without the disk, which comes from brokers)
    "cluster": pa.schema(
        [("ts", I64), ("log_bytes", I64), ("messages", I64), ("partitions", I64), ("topics", I64)]
    ),
    # per (topic, hour): first/last snapshot of the topic in the hour, the values at its last one,
    # the hour's first snapshot (f_ts) and the topic's values there (null: not in it), and the
    # deltas summed over the topic's other snapshots of the hour (d_*, dt, last_write)
    "topic_hours": pa.schema(
        [
            ("hour", I64),
            ("topic", S),
            ("first_ts", I64),
            ("last_ts", I64),
            ("f_ts", I64),
            ("f_size", I64),
            ("f_end", I64),
            ("size", I64),
            ("end", I64),
            ("partitions", I64),
            ("max_part", I64),
            ("retention_ms", I64),
            ("retention_bytes", I64),
            ("d_size", I64),
            ("d_msgs", I64),
            ("dt", F64),
            ("last_write", I64),
        ]
    ),
    # per (group, topic, hour): the hour's lag maxima, its first and last snapshot's values, and
    # the last snapshot after the first whose committed offsets moved forward within the hour
    "group_hours": pa.schema(
        [
            ("hour", I64),
            ("group", S),
            ("topic", S),
            ("max_lag", I64),
            ("sum_lag", I64),
            ("first_ts", I64),
            ("sum_first", I64),
            ("committed_first", I64),
            ("last_ts", I64),
            ("sum_last", I64),
            ("max_last", I64),
            ("committed_last", I64),
            ("progress_ts", I64),
        ]
    ),
}


def _np(col) -> np.ndarray:
    return np.asarray(pc.fill_null(col, 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _same_as_previous(codes: list[np.ndarray]) -> np.ndarray:
    """Per row: whether the row before it has the same key codes (rows sorted by their keys)."""
    n = len(codes[0])
    same = np.zeros(n, dtype=bool)
    if n > 1:
        same[1:] = True
        for c in codes:
            same[1:] &= c[1:] == c[:-1]
    return same


def _codes(col) -> np.ndarray:
    """A string column as integer codes (equal strings, equal codes), to sort and group by."""
    array = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return np.asarray(pc.dictionary_encode(array).indices.to_numpy(zero_copy_only=False), dtype=np.int64)


def _key_codes(table: pa.Table, keys: list[str]) -> list[np.ndarray]:
    """The ``keys`` columns (strings) as integer codes, in the table's row order."""
    return [_codes(table[k]) for k in keys]


def _sorted_by(table: pa.Table, keys: list[str]) -> tuple[pa.Table, list[np.ndarray], np.ndarray]:
    """The table ordered by ``keys`` (string columns, compared as codes) then ``ts``; the codes and
    ``ts`` in that order. Grouping needs equal keys together, not their alphabetical order."""
    codes = _key_codes(table, keys)
    ts = _np(table["ts"])
    order = np.lexsort((ts, *reversed(codes)))
    return table.take(pa.array(order)), [c[order] for c in codes], ts[order]


def _starts(codes: list[np.ndarray], hour: np.ndarray) -> np.ndarray:
    """Row indices where a run of equal (codes, hour) starts."""
    n = len(hour)
    new = np.zeros(n, dtype=bool)
    if n:
        new[0] = True
        new[1:] |= hour[1:] != hour[:-1]
        for c in codes:
            new[1:] |= c[1:] != c[:-1]
    return np.flatnonzero(new)


def _nullable(values: np.ndarray, present: np.ndarray) -> pa.Array:
    return pa.array(values, I64, mask=~present)


def cluster_rows(topics: pa.Table) -> pa.Table:
    """One row per snapshot of the (snapshot, topic) rollups: what ``cluster_size`` adds up."""
    if topics.num_rows == 0:
        return SCHEMAS["cluster"].empty_table()
    t = topics.append_column("messages", pc.subtract(topics["end"], topics["start"]))
    g = t.group_by("ts").aggregate(
        [("size", "sum"), ("messages", "sum"), ("partitions", "sum"), ("topic", "count")]
    )
    return pa.table(
        {
            "ts": g["ts"],
            "log_bytes": g["size_sum"],
            "messages": g["messages_sum"],
            "partitions": g["partitions_sum"],
            "topics": g["topic_count"],
        },
        schema=SCHEMAS["cluster"],
    ).sort_by("ts")


def topic_hours(topics: pa.Table) -> pa.Table:
    """The (topic, hour) states of (snapshot, topic) rollup rows (any number of hours)."""
    if topics.num_rows == 0:
        return SCHEMAS["topic_hours"].empty_table()
    t, (code,), ts = _sorted_by(topics, ["topic"])
    hour = ts // HOUR_MS * HOUR_MS
    # the snapshots (stamps) of the rows, and each one's previous stamp within its hour (-1: first)
    stamps = np.unique(ts)
    shour = stamps // HOUR_MS * HOUR_MS
    inner_prev = np.full(len(stamps), -1, dtype=np.int64)
    inner = np.r_[False, shour[1:] == shour[:-1]]
    inner_prev[inner] = stamps[:-1][inner[1:]]
    hour_first = stamps[np.searchsorted(shour, shour, side="left")]
    at = np.searchsorted(stamps, ts)
    snap, f_ts = inner_prev[at], hour_first[at]
    is_f = snap < 0
    size, end = _np(t["size"]), _np(t["end"])
    same = np.r_[False, code[1:] == code[:-1]]
    prev_ts = np.r_[-2, ts[:-1]]
    cont = same & (prev_ts == snap) & ~is_f
    prev_size, prev_end = np.r_[0, size[:-1]], np.r_[0, end[:-1]]
    d_size = np.where(cont, size - prev_size, size)
    d_msgs = np.where(cont, np.maximum(end - prev_end, 0), end)
    dt = np.where(is_f, 0.0, (ts - snap) / 1000.0)
    d_size[is_f], d_msgs[is_f] = 0, 0
    wrote = np.where(~is_f & (d_msgs > 0), ts, -1)

    starts = _starts([code], hour)
    ends = np.r_[starts[1:], len(ts)] - 1
    has_f = is_f[starts]
    last = t.take(pa.array(ends))
    last_write = np.maximum.reduceat(wrote, starts)
    return pa.table(
        {
            "hour": pa.array(hour[starts], I64),
            "topic": t["topic"].take(pa.array(starts)),
            "first_ts": pa.array(ts[starts], I64),
            "last_ts": pa.array(ts[ends], I64),
            "f_ts": pa.array(f_ts[starts], I64),
            "f_size": _nullable(size[starts], has_f),
            "f_end": _nullable(end[starts], has_f),
            "size": last["size"],
            "end": last["end"],
            "partitions": last["partitions"],
            "max_part": last["max_part"],
            "retention_ms": last["retention_ms"],
            "retention_bytes": last["retention_bytes"],
            "d_size": pa.array(np.add.reduceat(d_size, starts), I64),
            "d_msgs": pa.array(np.add.reduceat(d_msgs, starts), I64),
            "dt": pa.array(np.add.reduceat(dt, starts), F64),
            "last_write": _nullable(last_write, last_write >= 0),
        },
        schema=SCHEMAS["topic_hours"],
    )


def group_hours(groups: pa.Table) -> pa.Table:
    """The (group, topic, hour) states of (group, topic, snapshot) rollup rows."""
    if groups.num_rows == 0:
        return SCHEMAS["group_hours"].empty_table()
    g, codes, ts = _sorted_by(groups, ["group", "topic"])
    hour = ts // HOUR_MS * HOUR_MS
    lag_sum, lag_max, committed = _np(g["sum"]), _np(g["max"]), _np(g["committed"])
    starts = _starts(codes, hour)
    ends = np.r_[starts[1:], len(ts)] - 1
    first = np.zeros(len(ts), dtype=bool)
    first[starts] = True
    moved = ~first & (committed > np.r_[0, committed[:-1]])
    progress = np.maximum.reduceat(np.where(moved, ts, -1), starts)
    take = pa.array(starts)
    return pa.table(
        {
            "hour": pa.array(hour[starts], I64),
            "group": g["group"].take(take),
            "topic": g["topic"].take(take),
            "max_lag": pa.array(np.maximum.reduceat(lag_max, starts), I64),
            "sum_lag": pa.array(np.maximum.reduceat(lag_sum, starts), I64),
            "first_ts": pa.array(ts[starts], I64),
            "sum_first": pa.array(lag_sum[starts], I64),
            "committed_first": pa.array(committed[starts], I64),
            "last_ts": pa.array(ts[ends], I64),
            "sum_last": pa.array(lag_sum[ends], I64),
            "max_last": pa.array(lag_max[ends], I64),
            "committed_last": pa.array(committed[ends], I64),
            "progress_ts": _nullable(progress, progress >= 0),
        },
        schema=SCHEMAS["group_hours"],
    )


def derive(rollups: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """The hour states and cluster rows of per-snapshot rollups (``topics``, ``groups``)."""
    topics = rollups.get("topics")
    groups = rollups.get("groups")
    empty = SCHEMAS["topic_hours"].empty_table()
    return {
        "cluster": cluster_rows(topics) if topics is not None else SCHEMAS["cluster"].empty_table(),
        "topic_hours": topic_hours(topics) if topics is not None else empty,
        "group_hours": group_hours(groups) if groups is not None else SCHEMAS["group_hours"].empty_table(),
    }
