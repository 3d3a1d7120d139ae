"""The pipeline run: snapshot lake window → report tables (same figures as :mod:`pipeline.reference`).

A run is incremental (:mod:`pipeline.rollups`): every closed hour of the window whose raw files
changed since it was last rolled up (or never was) is reduced in one pass to its rollups, one row
per (snapshot, topic), (snapshot, broker) and (group, topic, snapshot), and, derived from those on
the driver, the hour's report states (:mod:`pipeline.hours`: one row per (topic, hour), (group,
topic, hour) and snapshot), written next to the lake. The pass is sized to the work: pyarrow in
the worker (:mod:`pipeline.arrow_engine`) for an hourly run, Spark (:mod:`pipeline.spark`, local or
any master) for a rebuild or ``PIPELINE_SPARK_MIN_ROWS`` raw rows or more; both give the same
rollups. The reports are then merged on the driver (:mod:`pipeline.windows`) from the window's hour
states plus the still-open hour's raw rows, reduced the same way and kept in memory: an hourly run
reads one hour of raw rows and a few rows per topic and hour of the window. ``rebuild=True`` drops
the window's rollups and recomputes them all. The driver publishes the reports
(:mod:`pipeline.reports`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds

from pipeline import arrow_engine, config, hours, lake, rollups, window_state, windows
from pipeline import spark as spark_engine
from pipeline.reference import DAY_MS, HOUR_MS, JobParams, enough_history

Progress = Callable[[float, str], None]
ARROW, SPARK = "pyarrow", "spark"
ENGINES = (ARROW, SPARK)


def choose_engine(rows: int, rebuild: bool, min_rows: int) -> str:
    """Spark for a rebuild and for ``min_rows`` raw rows or more to reduce (a backfill, a first run on
    an existing lake, a large cluster's hour); pyarrow in the worker otherwise (``min_rows`` 0: Spark
    always)."""
    return SPARK if rebuild or rows >= min_rows else ARROW


def session_of(spark):
    """The Spark session: ``spark`` itself, or built by it when it is a function (so an hourly run in
    pyarrow starts no JVM), or from the settings when it is None."""
    if spark is None:
        return spark_engine.build_session()
    return spark() if callable(spark) else spark


def roll_up(
    spark,
    lake_dir: Path,
    cluster: str,
    since: datetime,
    until: datetime,
    now: datetime | None = None,
    rebuild: bool = False,
    progress: Progress | None = None,
    engine: str | None = None,
) -> dict:
    """Bring the rollups of the window's closed hours up to date; return what the reports read.

    Closed hours are those ending by ``min(until, now)``. An hour is rolled up when it has raw files
    and no manifest naming exactly those files (never rolled, a late snapshot, a rewritten file);
    ``rebuild`` drops the window's rollups first and rolls up every closed hour. The raw rows to
    reduce (those hours' and the open hour's, counted from the files' footers) choose the engine
    (:func:`choose_engine`, ``PIPELINE_SPARK_MIN_ROWS``) unless ``engine`` names one; ``spark`` (a
    session, a function building one, or None) is used only when Spark runs. Returns
    ``closed_end`` (ms; the rollups cover the window before it), ``open`` (the rollups of the raw
    rows from there to ``until``, in memory), ``tokens`` (per rolled-up closed hour, what its
    manifest names: :func:`pipeline.window_state.token`) and counts and the engine for the run's
    record.
    """
    step = progress or (lambda _f, _t: None)
    since, until = lake.utc(since), lake.utc(until)
    now = lake.utc(now or datetime.now(UTC))
    first_ms, closed_end = rollups.hours_between(since, rollups.hour_floor(min(until, now)))
    until_ms, since_ms = int(until.timestamp() * 1000), int(since.timestamp() * 1000)
    list_end = -(-until_ms // HOUR_MS) * HOUR_MS
    with rollups.locked(lake_dir, cluster):
        manifests = rollups.read_manifests(lake_dir, cluster, first_ms, list_end)
        by_hour = rollups.list_raw(lake_dir, cluster, first_ms, list_end, manifests)
        closed = {h: fs for h, fs in by_hour.items() if h < closed_end}
        if rebuild:
            stale = closed
        else:
            stale = {h: fs for h, fs in closed.items() if not rollups.is_current(manifests.get(h), fs)}
        open_files = list({f.key: f for h, fs in by_hour.items() if h >= closed_end for f in fs}.values())
        todo = {f.key: f for fs in stale.values() for f in fs} | {f.key: f for f in open_files}
        rows = lake.row_count(lake_dir, cluster, list(todo.values()))
        engine = engine or choose_engine(rows, rebuild, config.load().spark_min_rows)
        if engine == SPARK:
            aggregate = functools.partial(spark_engine.aggregate_raw, session_of(spark))
        else:
            aggregate = arrow_engine.aggregate_raw
        if rebuild:
            rollups.drop(lake_dir, cluster, first_ms, closed_end)
        groups = rollups.chunks(stale)
        for i, hours in enumerate(groups):
            step(0.4 * i / max(1, len(groups)), f"rolling up {len(hours)} closed hour(s) with {engine}")
            files = list({f.key: f for h in hours for f in stale[h]}.values())
            out = aggregate(lake_dir, cluster, files, hours[0], hours[-1] + HOUR_MS)
            rollups.write_hours(lake_dir, cluster, out, {h: stale[h] for h in hours})
    kept = {} if rebuild else {h: m for h, m in manifests.items() if h < closed_end}
    rolled = {h: {"version": rollups.VERSION, "inputs": rollups.inputs_of(fs)} for h, fs in stale.items()}
    lo = max(since_ms, closed_end)
    opened = aggregate(lake_dir, cluster, open_files, lo, until_ms) if open_files else None
    return {
        "closed_end": closed_end,
        "open": opened,
        "rolled_hours": len(stale),
        "closed_hours": len(closed),
        "open_files": len(open_files),
        "engine": engine,
        "raw_rows": rows,
        "tokens": {h: window_state.token(m) for h, m in (kept | rolled).items()},
        "rebuild": rebuild,
    }


def _read_kind(lake_dir: Path, cluster: str, kind: str, lo_ms: int, hi_ms: int) -> pa.Table:
    """A kind's rollup rows with their time column in [lo_ms, hi_ms), from its day files (pyarrow)."""
    schema = rollups.SCHEMAS[kind]
    if hi_ms <= lo_ms:
        return schema.empty_table()
    lo, hi = (datetime.fromtimestamp(x / 1000, UTC) for x in (lo_ms, hi_ms))
    files = rollups.rollup_files(lake_dir, kind, cluster, lo, hi)
    if not files:
        return schema.empty_table()
    col = ds.field(rollups.TIME[kind])
    data = ds.dataset(files, schema=schema, format="parquet")
    return data.to_table(filter=(col >= lo_ms) & (col < hi_ms))


def _window_tables(
    lake_dir: Path, cluster: str, since: datetime, state: dict, pool: Executor | None = None
) -> dict[str, pa.Table]:
    """Per kind, the window's rows the reports merge: hour states, cluster and broker rows per snapshot.

    Closed hours wholly in the window are read from their hour states, kept between runs in the
    window state (:mod:`pipeline.window_state`: only new or re-rolled hours are read from the day
    files); the window's first hour
    when the window starts inside it is derived again from its per-snapshot rollups cut at
    ``since``; the open part comes from ``state["open"]`` (the raw rows reduced in memory).
    """
    since_ms = int(lake.utc(since).timestamp() * 1000)
    closed_end = state["closed_end"]
    full = -(-since_ms // HOUR_MS) * HOUR_MS  # the first hour wholly in the window
    parts: dict[str, list[pa.Table]] = {k: [] for k in ("cluster", "brokers", "topic_hours", "group_hours")}
    for kind in ("cluster", "brokers"):  # the snapshots before the first whole hour
        parts[kind].append(_read_kind(lake_dir, cluster, kind, since_ms, min(full, closed_end)))
    for kind in parts:  # the whole closed hours: the window state, brought up to date
        rows = window_state.window_rows(
            lake_dir,
            cluster,
            kind,
            full,
            closed_end,
            state.get("tokens", {}),
            functools.partial(_read_kind, lake_dir, cluster),
            fresh=state.get("rebuild", False),
            pool=pool,
        )
        parts[kind].append(rows)
    if since_ms < full and since_ms < closed_end:  # the window's first hour, cut at since
        cut = {
            k: _read_kind(lake_dir, cluster, k, since_ms, min(full, closed_end)) for k in ("topics", "groups")
        }
        derived = hours.derive(cut)
        parts["topic_hours"].append(derived["topic_hours"])
        parts["group_hours"].append(derived["group_hours"])
    for kind, tables in parts.items():
        opened = (state["open"] or {}).get(kind)
        if opened is not None and opened.num_rows:
            tables.append(opened)
    return {k: pa.concat_tables([t.cast(rollups.SCHEMAS[k]) for t in v]) for k, v in parts.items()}


def _idle(topic_summary: list[dict], group_summary: list[dict] | None, params: JobParams) -> list[dict]:
    """Topics with no write and no consumer progress for ``idle_days`` before the last snapshot.

    A join of two reports already on the driver (one row per topic, one per group and topic), so
    it is done there.
    """
    if not topic_summary:
        return []
    end = max(t["last_ts"] for t in topic_summary)
    if not enough_history(min(t["first_ts"] for t in topic_summary), end, params):
        return []  # "idle" is a verdict too: not from a short look
    consumed: dict[str, int] = {}
    for g in group_summary or []:
        if g["last_progress_ts"] is not None:
            consumed[g["topic"]] = max(consumed.get(g["topic"], g["last_progress_ts"]), g["last_progress_ts"])
    idle = []
    for t in topic_summary:
        if t["topic"].startswith("__"):
            continue
        consume = consumed.get(t["topic"])
        seen = [ts for ts in (t["last_write_ts"], consume) if ts is not None]
        idle_days = (end - (max(seen) if seen else t["first_ts"])) / DAY_MS
        if idle_days >= params.idle_days:
            idle.append(
                {
                    "topic": t["topic"],
                    "partitions": t["partitions"],
                    "size_bytes": t["size_bytes"],
                    "last_write_ts": t["last_write_ts"],
                    "last_consume_ts": consume,
                    "idle_days": idle_days,
                }
            )
    return idle


def run_jobs(
    spark,
    lake_dir: Path,
    cluster: str,
    since: datetime,
    until: datetime,
    params: JobParams | None = None,
    progress: Progress | None = None,
    *,
    rebuild: bool = False,
    now: datetime | None = None,
    stats: dict | None = None,
    engine: str | None = None,
) -> dict[str, list[dict] | pa.Table]:
    """Every report for one cluster and window [since, until). Re-running a window gives the same rows.

    A report is a list of row dicts or, for the large ones, an Arrow table (times in epoch ms;
    :func:`pipeline.reports.as_rows` gives dicts); :func:`pipeline.reports.publish` takes both.

    First :func:`roll_up` (the closed hours not rolled up yet, or all of them with ``rebuild``),
    then the reports merged on the driver from the window's hour states and the open hour's rows.
    ``spark``: a session, a function building one, or None (built from the settings), used only
    when the roll-up runs in Spark; ``engine`` ("pyarrow" or "spark") overrides the choice by rows.
    ``stats`` (a dict) receives what the roll-up did, the engine and its seconds.
    """
    params = params or JobParams()
    step = progress or (lambda _f, _t: None)
    started = time.perf_counter()
    state = roll_up(
        spark, lake_dir, cluster, since, until, now=now, rebuild=rebuild, progress=step, engine=engine
    )
    if stats is not None:
        skip = ("open", "tokens")
        stats.update(
            {k: v for k, v in state.items() if k not in skip}, rollup_s=time.perf_counter() - started
        )
    with rollups.locked(lake_dir, cluster, shared=True):  # no roll-up rewrites a day file under us
        return _reports(lake_dir, cluster, since, params, step, state)


def _reports(lake_dir: Path, cluster: str, since, params: JobParams, step, state: dict) -> dict:
    """Every report, merged on the driver from the window's hour states (:mod:`pipeline.windows`)."""
    step(0.45, "reading the window's rollups")
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="window-state") as pool:
        # the window state is written while the hours are merged (and before the lock is let go)
        return _merged(_window_tables(lake_dir, cluster, since, state, pool), params, step)


def _merged(t: dict[str, pa.Table], params: JobParams, step) -> dict:
    step(0.6, "merging the hours")
    stamps = np.unique(t["cluster"]["ts"].to_numpy())
    out: dict[str, list[dict] | pa.Table] = {}
    out["topic_growth"], out["topic_summary"] = windows.topic_reports(t["topic_hours"], stamps, params)
    out["group_lag"], out["group_summary"] = windows.group_reports(t["group_hours"])
    out["cluster_size"] = windows.cluster_size(t["cluster"], t["brokers"])
    out["broker_disk"], out["broker_forecast"] = windows.broker_reports(t["brokers"], params)
    if not t["group_hours"].num_rows:
        del out["group_lag"], out["group_summary"]
    if not t["brokers"].num_rows:
        del out["broker_disk"], out["broker_forecast"]
    if t["topic_hours"].num_rows:
        out["idle_topics"] = _idle(out["topic_summary"], out.get("group_summary"), params)
    else:
        del out["topic_growth"], out["topic_summary"], out["cluster_size"]
    step(1.0, "done")
    return out
