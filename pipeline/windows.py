"""A window's reports merged from its hours' states (:mod:`pipeline.hours`) on the driver.

The inputs are small whatever the cluster's size per snapshot: one row per (topic, hour), per
(group, topic, hour), per snapshot for the cluster totals and per (snapshot, broker). Every figure
is the one :mod:`pipeline.reference` defines from the raw rows (the tests compare them); this
module only puts the hours together: the deltas of each hour's first snapshot against the
window's previous snapshot, the day buckets, the window's totals and last values, the forecast.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.hours import _key_codes, _nullable, _same_as_previous, _starts
from pipeline.reference import DAY_MS, JobParams, enough_history, headroom

I64 = pa.int64()


def _np(col, fill=0) -> np.ndarray:
    return np.asarray(pc.fill_null(col, fill).to_numpy(zero_copy_only=False), dtype=np.int64)


def _f(col) -> np.ndarray:
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)


def _rate(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(len(num), dtype=np.float64)
    ok = den != 0
    out[ok] = num[ok] / den[ok]
    return out


def _table(columns: dict) -> pa.Table:
    return pa.table(columns)


def topic_reports(states: pa.Table, stamps: np.ndarray, params: JobParams) -> tuple[pa.Table, list[dict]]:
    """``topic_growth`` (hour and day rows) and ``topic_summary`` from the window's (topic, hour) states.

    ``stamps``: the window's snapshots (sorted epoch ms), to find each hour's previous snapshot.
    """
    if states.num_rows == 0:
        return [], []
    t = states.sort_by([("topic", "ascending"), ("hour", "ascending")])
    hour, f_ts = _np(t["hour"]), _np(t["f_ts"])
    at = np.searchsorted(stamps, f_ts)  # the window's snapshot before the hour's first (-1: none)
    snap = np.where(at > 0, stamps[np.maximum(at - 1, 0)], -1)
    has_f = np.asarray(t["f_size"].is_valid().to_numpy(zero_copy_only=False)) & (snap >= 0)
    f_size, f_end = _np(t["f_size"]), _np(t["f_end"])
    size, end, last_ts = _np(t["size"]), _np(t["end"]), _np(t["last_ts"])
    codes = _key_codes(t, ["topic"])
    same = _same_as_previous(codes)
    cont = has_f & same & (np.r_[-2, last_ts[:-1]] == snap)
    prev_size, prev_end = np.r_[0, size[:-1]], np.r_[0, end[:-1]]
    c_size = np.where(has_f, np.where(cont, f_size - prev_size, f_size), 0)
    c_msgs = np.where(has_f, np.where(cont, np.maximum(f_end - prev_end, 0), f_end), 0)
    c_dt = np.where(has_f, (f_ts - snap) / 1000.0, 0.0)
    grow = _np(t["d_size"]) + c_size
    msgs = _np(t["d_msgs"]) + c_msgs
    secs = c_dt + _f(t["dt"])
    wrote = np.maximum(_np(t["last_write"], -1), np.where(c_msgs > 0, f_ts, -1))

    def growth(period: str, starts: np.ndarray) -> dict:
        ends = np.r_[starts[1:], len(hour)] - 1
        g, m, s = (np.add.reduceat(x, starts) for x in (grow, msgs, secs))
        width = DAY_MS if period == "day" else 1
        return {
            "topic": t["topic"].take(pa.array(starts)),
            "period": pa.array([period] * len(starts)),
            "bucket": pa.array(hour[starts] // width * width, I64),
            "size_bytes": pa.array(size[ends], I64),
            "bytes_growth": pa.array(g, I64),
            "messages_in": pa.array(m, I64),
            "seconds": pa.array(s),
            "write_rate": pa.array(_rate(m.astype(np.float64), s)),
            "bytes_rate": pa.array(_rate(g.astype(np.float64), s)),
        }

    rows = pa.concat_tables(
        [
            _table(growth("hour", np.arange(len(hour)))),
            _table(growth("day", _starts(codes, hour // DAY_MS))),
        ]
    )

    starts = _starts(codes, np.zeros(len(hour), dtype=np.int64))
    ends = np.r_[starts[1:], len(hour)] - 1
    last = t.take(pa.array(ends))
    span = np.add.reduceat(secs, starts)
    grown, msgs_in = np.add.reduceat(grow, starts), np.add.reduceat(msgs, starts)
    last_write = np.maximum.reduceat(wrote, starts)
    first_ts = _np(t["first_ts"])[starts]
    cols = ["topic", "partitions", "size", "max_part", "retention_ms", "retention_bytes"]
    summary = []
    for i, r in enumerate(last.select(cols).to_pylist()):
        mean = r["size"] / r["partitions"]
        rb = r["retention_bytes"]
        span_s, g, m = float(span[i]), int(grown[i]), int(msgs_in[i])
        summary.append(
            {
                "topic": r["topic"],
                "first_ts": int(first_ts[i]),
                "last_ts": int(last_ts[ends[i]]),
                "partitions": r["partitions"],
                "size_bytes": r["size"],
                "max_partition_bytes": r["max_part"],
                "mean_partition_bytes": mean,
                "skew": r["max_part"] / mean if mean > 0 else None,
                "bytes_growth": g,
                "messages_in": m,
                "write_rate": m / span_s if span_s else 0.0,
                "bytes_per_day": (g / (span_s / 86400) if span_s else 0.0)
                if span_s * 1000 >= params.min_history_ms
                else None,
                "retention_ms": r["retention_ms"],
                "retention_bytes": rb,
                "retention_fill": r["max_part"] / rb if rb is not None and rb > 0 else None,
                "last_write_ts": int(last_write[i]) if last_write[i] >= 0 else None,
            }
        )
    return rows, summary


def group_reports(states: pa.Table) -> tuple[pa.Table, list[dict]]:
    """``group_lag`` (hour rows) and ``group_summary`` from the window's (group, topic, hour) states."""
    if states.num_rows == 0:
        return [], []
    g = states.sort_by([("group", "ascending"), ("topic", "ascending"), ("hour", "ascending")])
    lag = _table(
        {
            "group": g["group"],
            "topic": g["topic"],
            "period": pa.array(["hour"] * g.num_rows),
            "bucket": g["hour"],
            "max_lag": g["max_lag"],
            "sum_lag": g["sum_lag"],
        }
    )
    n = g.num_rows
    codes = _key_codes(g, ["group", "topic"])
    same = _same_as_previous(codes)
    committed_first, committed_last = _np(g["committed_first"]), _np(g["committed_last"])
    first_ts = _np(g["first_ts"])
    moved = same & (committed_first > np.r_[0, committed_last[:-1]])
    progress = np.maximum(_np(g["progress_ts"], -1), np.where(moved, first_ts, -1))
    starts = _starts(codes, np.zeros(n, dtype=np.int64))
    ends = np.r_[starts[1:], n] - 1
    last_progress = np.maximum.reduceat(progress, starts)
    sum_first, sum_last = _np(g["sum_first"]), _np(g["sum_last"])
    summary = _table(
        {
            "group": g["group"].take(pa.array(starts)),
            "topic": g["topic"].take(pa.array(starts)),
            "last_ts": pa.array(_np(g["last_ts"])[ends], I64),
            "lag_sum": pa.array(sum_last[ends], I64),
            "lag_max": pa.array(_np(g["max_last"])[ends], I64),
            "lag_sum_change": pa.array(sum_last[ends] - sum_first[starts], I64),
            "last_progress_ts": _nullable(last_progress, last_progress >= 0),
        }
    )
    return lag, summary.to_pylist()


def cluster_size(cluster: pa.Table, brokers: pa.Table) -> pa.Table:
    """Per snapshot: the topic totals, and the bytes on disk of the brokers' rows at that snapshot."""
    disk = brokers.group_by("ts").aggregate([("size_bytes", "sum")]) if brokers.num_rows else None
    c = cluster
    if disk is not None:
        c = c.join(disk, keys="ts", join_type="left outer")
        disk_bytes = pc.fill_null(c["size_bytes_sum"], 0)
    else:
        disk_bytes = pa.array([0] * c.num_rows, I64)
    return _table(
        {
            "ts": c["ts"],
            "log_bytes": c["log_bytes"],
            "disk_bytes": pc.cast(disk_bytes, I64),
            "messages": c["messages"],
            "partitions": c["partitions"],
            "topics": c["topics"],
        }
    )


def broker_reports(brokers: pa.Table, params: JobParams) -> tuple[pa.Table, list[dict]]:
    """``broker_disk`` (the (snapshot, broker) rows) and ``broker_forecast`` (least squares per broker)."""
    if brokers.num_rows == 0:
        return [], []
    b = brokers.sort_by([("broker", "ascending"), ("ts", "ascending")])
    disk = b.select(["ts", "broker", "size_bytes", "total_bytes", "leaders"])
    ts, size = _np(b["ts"]), _np(b["size_bytes"])
    end = int(ts.max())
    start = end - params.forecast_window_days * DAY_MS
    starts = _starts(_key_codes(b, ["broker"]), np.zeros(len(ts), dtype=np.int64))
    ends = np.r_[starts[1:], len(ts)] - 1
    last = b.take(pa.array(ends)).select(["broker", "ts", "size_bytes", "total_bytes", "usable_bytes"])
    forecast = []
    for i, r in enumerate(last.to_pylist()):
        lo, hi = starts[i], ends[i] + 1
        recent = ts[lo:hi] >= start
        x = (ts[lo:hi][recent] - end) / DAY_MS
        y = size[lo:hi][recent].astype(np.float64)
        n = len(x)
        sx, sy, sxx, sxy = (float(v.sum()) for v in (x, y, x * x, x * y))
        den = n * sxx - sx * sx
        fits = n >= 2 and den != 0 and enough_history(int(ts[lo]), r["ts"], params)
        slope = (n * sxy - sx * sy) / den if fits else None
        cap = params.capacity_bytes or r["total_bytes"]
        room = headroom(params.capacity_bytes, cap, r["size_bytes"], r["usable_bytes"])
        forecast.append(
            {
                "broker": r["broker"],
                "last_ts": r["ts"],
                "size_bytes": r["size_bytes"],
                "capacity_bytes": cap,
                "used_ratio": r["size_bytes"] / cap if cap else None,
                "slope_bytes_per_day": slope,
                "days_to_full": max(room, 0) / slope if room is not None and slope and slope > 0 else None,
                "free_bytes": r["usable_bytes"],
            }
        )
    return disk, forecast
