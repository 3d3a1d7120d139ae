"""The report figures computed in plain Python: the specification the Spark jobs are checked against.

Small data only (tests, a quick look at one cluster). Every figure is defined here in the most
direct way; :mod:`pipeline.jobs` computes the same figures with Spark.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
PERIODS = {"hour": HOUR_MS, "day": DAY_MS}


@dataclass(frozen=True)
class JobParams:
    """Thresholds of one pipeline run (from :class:`pipeline.config.PipelineConfig`)."""

    idle_days: float = 7.0
    forecast_window_days: float = 7.0
    capacity_bytes: int = 0
    min_history_h: float = 24.0  # no forecast or growth verdict from less history than this

    @property
    def min_history_ms(self) -> float:
        return self.min_history_h * HOUR_MS


def enough_history(first_ms: float | None, last_ms: float | None, params: JobParams) -> bool:
    """Whether snapshots from ``first_ms`` to ``last_ms`` are history enough to extrapolate or judge growth."""
    if first_ms is None or last_ms is None:
        return False
    return last_ms - first_ms >= params.min_history_ms


def _ms(ts: datetime) -> int:
    return int(ts.astimezone(UTC).timestamp() * 1000) if isinstance(ts, datetime) else int(ts)


def _rows(table: pa.Table | None) -> list[dict]:
    if table is None or table.num_rows == 0:
        return []
    rows = table.to_pylist()
    for r in rows:
        r["ts"] = _ms(r["ts"])
    return rows


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def _topic_series(parts: list[dict]) -> dict[str, list[dict]]:
    """Per topic, one aggregate per snapshot: size, offsets, partition count, largest partition."""
    agg: dict[tuple[str, int], dict] = {}
    for r in parts:
        a = agg.setdefault(
            (r["topic"], r["ts"]),
            {
                "ts": r["ts"],
                "size": 0,
                "end": 0,
                "start": 0,
                "partitions": 0,
                "max_part": 0,
                "retention_ms": None,
                "retention_bytes": None,
            },
        )
        a["size"] += max(r["size_bytes"], 0)
        a["end"] += max(r["log_end_offset"], 0)
        a["start"] += max(r["log_start_offset"], 0)
        a["partitions"] += 1
        a["max_part"] = max(a["max_part"], max(r["size_bytes"], 0))
        for k in ("retention_ms", "retention_bytes"):
            if r[k] is not None:
                a[k] = r[k] if a[k] is None else max(a[k], r[k])
    series: dict[str, list[dict]] = defaultdict(list)
    for (topic, _), a in agg.items():
        series[topic].append(a)
    # Deltas are taken against the cluster's previous snapshot: a topic absent from it (created since)
    # grew from nothing, so the topics' growth adds up to the growth of the cluster's log bytes.
    stamps = sorted({ts for _, ts in agg})
    before = dict(zip(stamps[1:], stamps, strict=False))
    for rows in series.values():
        rows.sort(key=lambda a: a["ts"])
        prev = None
        for a in rows:
            snap = before.get(a["ts"])
            if snap is None:  # the window's first snapshot: nothing to compare with
                a["d_size"], a["d_msgs"], a["dt"] = 0, 0, 0.0
            elif prev is not None and prev["ts"] == snap:
                a["d_size"] = a["size"] - prev["size"]
                a["d_msgs"] = max(0, a["end"] - prev["end"])
                a["dt"] = (a["ts"] - snap) / 1000
            else:  # not in the previous snapshot: created (or re-created) since
                a["d_size"], a["d_msgs"], a["dt"] = a["size"], a["end"], (a["ts"] - snap) / 1000
            prev = a
    return series


def _topic_reports(series: dict[str, list[dict]], params: JobParams) -> tuple[list[dict], list[dict]]:
    growth, summary = [], []
    for topic, rows in series.items():
        for period, width in PERIODS.items():
            buckets: dict[int, list[dict]] = defaultdict(list)
            for a in rows:
                buckets[a["ts"] // width * width].append(a)
            for bucket, items in buckets.items():
                grow, msgs, secs = (sum(a[k] for a in items) for k in ("d_size", "d_msgs", "dt"))
                growth.append(
                    {
                        "topic": topic,
                        "period": period,
                        "bucket": bucket,
                        "size_bytes": items[-1]["size"],
                        "bytes_growth": grow,
                        "messages_in": msgs,
                        "seconds": float(secs),
                        "write_rate": _ratio(msgs, secs),
                        "bytes_rate": _ratio(grow, secs),
                    }
                )
        first, last = rows[0], rows[-1]
        span_s = sum(a["dt"] for a in rows)  # since the snapshot before the topic's first one, if any
        grown, msgs = sum(a["d_size"] for a in rows), sum(a["d_msgs"] for a in rows)
        mean = last["size"] / last["partitions"]
        rb = last["retention_bytes"]
        writes = [a["ts"] for a in rows if a["d_msgs"] > 0]
        summary.append(
            {
                "topic": topic,
                "first_ts": first["ts"],
                "last_ts": last["ts"],
                "partitions": last["partitions"],
                "size_bytes": last["size"],
                "max_partition_bytes": last["max_part"],
                "mean_partition_bytes": mean,
                "skew": last["max_part"] / mean if mean > 0 else None,
                "bytes_growth": grown,
                "messages_in": msgs,
                "write_rate": _ratio(msgs, span_s),
                # a rate per day is an extrapolation: none from less than min_history_h
                "bytes_per_day": _ratio(grown, span_s / 86400)
                if span_s * 1000 >= params.min_history_ms
                else None,
                "retention_ms": last["retention_ms"],
                "retention_bytes": rb,
                "retention_fill": last["max_part"] / rb if rb is not None and rb > 0 else None,
                "last_write_ts": max(writes) if writes else None,
            }
        )
    return growth, summary


def _cluster_size(series: dict[str, list[dict]], brokers: list[dict]) -> list[dict]:
    by_ts: dict[int, dict] = {}
    for topic_rows in series.values():
        for a in topic_rows:
            c = by_ts.setdefault(
                a["ts"],
                {"ts": a["ts"], "log_bytes": 0, "disk_bytes": 0, "messages": 0, "partitions": 0, "topics": 0},
            )
            c["log_bytes"] += a["size"]
            c["messages"] += a["end"] - a["start"]
            c["partitions"] += a["partitions"]
            c["topics"] += 1
    for b in brokers:
        if b["ts"] in by_ts:
            by_ts[b["ts"]]["disk_bytes"] += max(b["size_bytes"] or 0, 0)
    return list(by_ts.values())


def _broker_reports(
    parts: list[dict], brokers: list[dict], params: JobParams
) -> tuple[list[dict], list[dict]]:
    leaders: dict[tuple[int, int], int] = defaultdict(int)
    for r in parts:
        leaders[(r["ts"], r["leader"])] += 1
    disk: dict[tuple[int, int], dict] = {}
    free: dict[tuple[int, int], int] = {}  # usable bytes of the broker's log dirs per snapshot
    for b in brokers:
        if b.get("usable_bytes") is not None:
            free[(b["ts"], b["broker"])] = free.get((b["ts"], b["broker"]), 0) + b["usable_bytes"]
        d = disk.setdefault(
            (b["ts"], b["broker"]),
            {"ts": b["ts"], "broker": b["broker"], "size_bytes": 0, "total_bytes": None, "leaders": 0},
        )
        d["size_bytes"] += max(b["size_bytes"] or 0, 0)
        if b["total_bytes"] is not None:
            d["total_bytes"] = (d["total_bytes"] or 0) + b["total_bytes"]
    for (ts, broker), d in disk.items():
        d["leaders"] = leaders.get((ts, broker), 0)
    forecast = []
    if disk:
        end = max(ts for ts, _ in disk)
        start = end - params.forecast_window_days * DAY_MS
        per_broker: dict[int, list[dict]] = defaultdict(list)
        for d in disk.values():
            per_broker[d["broker"]].append(d)
        for broker, rows in per_broker.items():
            rows.sort(key=lambda d: d["ts"])
            last = rows[-1]
            recent = [((d["ts"] - end) / DAY_MS, float(d["size_bytes"])) for d in rows if d["ts"] >= start]
            n = len(recent)
            sx, sy = sum(x for x, _ in recent), sum(y for _, y in recent)
            sxx, sxy = sum(x * x for x, _ in recent), sum(x * y for x, y in recent)
            den = n * sxx - sx * sx
            fits = n >= 2 and den != 0 and enough_history(rows[0]["ts"], last["ts"], params)
            slope = (n * sxy - sx * sy) / den if fits else None
            cap = params.capacity_bytes or last["total_bytes"]
            left = free.get((last["ts"], broker))
            room = headroom(params.capacity_bytes, cap, last["size_bytes"], left)
            forecast.append(
                {
                    "broker": broker,
                    "last_ts": last["ts"],
                    "size_bytes": last["size_bytes"],
                    "capacity_bytes": cap,
                    "used_ratio": last["size_bytes"] / cap if cap else None,
                    "slope_bytes_per_day": slope,
                    "days_to_full": max(room, 0) / slope
                    if room is not None and slope and slope > 0
                    else None,
                    "free_bytes": left,
                }
            )
    return list(disk.values()), forecast


def headroom(configured: int, capacity: int | None, size: int, free: int | None) -> int | None:
    """Bytes the broker can still grow by: the disk's free space (other data shares the disk, so
    capacity minus Kafka's own bytes overstates it), and under a configured capacity
    (BROKER_DISK_CAPACITY_BYTES) also what is left of that budget; None when neither is known."""
    options = [x for x in ((configured - size) if configured else None, free) if x is not None]
    if options:
        return min(options)
    return capacity - size if capacity else None


def _group_reports(groups: list[dict]) -> tuple[list[dict], list[dict], dict[str, int]]:
    per_ts: dict[tuple[str, str, int], dict] = {}
    for g in groups:
        a = per_ts.setdefault(
            (g["group"], g["topic"], g["ts"]), {"ts": g["ts"], "sum": 0, "max": 0, "committed": 0}
        )
        a["sum"] += g["lag"]
        a["max"] = max(a["max"], g["lag"])
        a["committed"] += g["committed_offset"]
    series: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for (group, topic, _), a in per_ts.items():
        series[(group, topic)].append(a)
    lag, summary, consumed = [], [], {}
    for (group, topic), rows in series.items():
        rows.sort(key=lambda a: a["ts"])
        buckets: dict[int, list[dict]] = defaultdict(list)
        for a in rows:
            buckets[a["ts"] // HOUR_MS * HOUR_MS].append(a)
        for bucket, items in buckets.items():
            lag.append(
                {
                    "group": group,
                    "topic": topic,
                    "period": "hour",
                    "bucket": bucket,
                    "max_lag": max(a["max"] for a in items),
                    "sum_lag": max(a["sum"] for a in items),
                }
            )
        progress = [b["ts"] for a, b in zip(rows, rows[1:], strict=False) if b["committed"] > a["committed"]]
        last_progress = max(progress) if progress else None
        summary.append(
            {
                "group": group,
                "topic": topic,
                "last_ts": rows[-1]["ts"],
                "lag_sum": rows[-1]["sum"],
                "lag_max": rows[-1]["max"],
                "lag_sum_change": rows[-1]["sum"] - rows[0]["sum"],
                "last_progress_ts": last_progress,
            }
        )
        if last_progress is not None:
            consumed[topic] = max(consumed.get(topic, last_progress), last_progress)
    return lag, summary, consumed


def _idle(summary: list[dict], consumed: dict[str, int], params: JobParams) -> list[dict]:
    if not summary:
        return []
    end = max(s["last_ts"] for s in summary)
    if not enough_history(min(s["first_ts"] for s in summary), end, params):
        return []  # "idle" is a verdict too: not from a short look
    out = []
    for s in summary:
        if s["topic"].startswith("__"):
            continue
        seen = [t for t in (s["last_write_ts"], consumed.get(s["topic"])) if t is not None]
        since = max(seen) if seen else s["first_ts"]
        idle_days = (end - since) / DAY_MS
        if idle_days >= params.idle_days:
            out.append(
                {
                    "topic": s["topic"],
                    "partitions": s["partitions"],
                    "size_bytes": s["size_bytes"],
                    "last_write_ts": s["last_write_ts"],
                    "last_consume_ts": consumed.get(s["topic"]),
                    "idle_days": idle_days,
                }
            )
    return out


def compute(tables: dict[str, pa.Table], params: JobParams | None = None) -> dict[str, list[dict]]:
    """Every report from the window's rows (``{"partitions": ..., "brokers": ..., "groups": ...}``)."""
    params = params or JobParams()
    parts, brokers, groups = (_rows(tables.get(k)) for k in ("partitions", "brokers", "groups"))
    series = _topic_series(parts)
    growth, summary = _topic_reports(series, params)
    disk, forecast = _broker_reports(parts, brokers, params)
    lag, group_summary, consumed = _group_reports(groups)
    return {
        "cluster_size": _cluster_size(series, brokers),
        "topic_growth": growth,
        "topic_summary": summary,
        "broker_disk": disk,
        "broker_forecast": forecast,
        "group_lag": lag,
        "group_summary": group_summary,
        "idle_topics": _idle(summary, consumed, params),
    }
