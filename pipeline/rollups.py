"""Hourly rollups of the snapshot lake: each closed hour's raw snapshots reduced once, kept next to them.

Layout (one file per kind and day holding that day's rolled-up hours, but one per hour for the two
large per-snapshot kinds; one manifest per hour; written like the snapshots: dot-name, then rename)::

    <lake>/rollups/topics/cluster=<name>/date=<YYYY-MM-DD>/hour-<HH>.parquet  one row per (snapshot, topic)
    <lake>/rollups/brokers/cluster=<name>/date=<YYYY-MM-DD>/rollup.parquet   one row per (snapshot, broker)
    <lake>/rollups/groups/cluster=<name>/date=<YYYY-MM-DD>/hour-<HH>.parquet  one row per (group, topic, snapshot)
    <lake>/rollups/manifests/cluster=<name>/date=<YYYY-MM-DD>/hour-<HH>.json  the raw files that went in

Rolling up an hour rewrites its day's file (that day's other hours are read back and kept), so a
run costs at most a day of rollups to write whatever the window, and a 30-day window's reports are
read from 30 files per kind. The per-snapshot topic and group rows (a row per topic or group and
snapshot: at 10,000 partitions a day file of 144,000 rows, most of an hourly run's writing) are
only read to derive an hour again (a window's first hour cut at its start), so they are kept one
file per hour (``HOURLY``): an hourly run writes its hour's file and rewrites no other. Runs
for one cluster roll up one at a time and not while another run reads the rollups (``flock`` on
``rollups/.lock-<cluster>``: exclusive to roll up, shared to read).

The grain keeps the snapshot (``ts``), so every report is computed from the rollups exactly as
from the raw rows (:mod:`pipeline.reference` is the definition; the deltas between snapshots, the
hour and day buckets and the window's bounds are all applied after the rollup). The manifest lists
every raw file (dataset, date directory, name, size, mtime) whose rows fall in the hour, with the
hours each file covers; an hour is rolled up again only when that list changes (a late snapshot),
so a re-run with nothing new rewrites nothing.

This module is the rollups' side (which raw files each hour holds, manifests, the rollups from the
engines' aggregates, writing); the aggregations are :mod:`pipeline.arrow_engine`'s and
:mod:`pipeline.spark`'s, the raw files' own facts (hours, rows) :mod:`pipeline.lake`'s.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import lake
from pipeline.hours import SCHEMAS as HOUR_SCHEMAS
from pipeline.reference import HOUR_MS

# Per snapshot: topics, brokers, groups, cluster; per hour: the report states (pipeline.hours).
KINDS = ("topics", "brokers", "groups", "cluster", "topic_hours", "group_hours")
TIME = {k: "hour" if k.endswith("_hours") else "ts" for k in KINDS}
# Bumped when what a rolled-up hour holds changes: an hour rolled up by an older version is rolled again.
# 3: topics and groups in hour files (version 2's day files are still read for hours not rolled again).
VERSION = 3
HOURLY = ("topics", "groups")
DAY_FILE = "rollup.parquet"
# Rollup files are rewritten every hour and are a fraction of the raw lake: lz4 encodes them ~40%
# faster than zstd for ~30% more bytes.
CODEC = "lz4"
I64, S = pa.int64(), pa.string()

SCHEMAS: dict[str, pa.Schema] = {
    # ts: epoch milliseconds of the snapshot; sizes and offsets summed over the topic's partitions
    # (-1, unknown, counted as 0), max_part: the largest partition, retention: the largest setting
    "topics": pa.schema(
        [
            ("ts", I64),
            ("topic", S),
            ("size", I64),
            ("max_part", I64),
            ("end", I64),
            ("start", I64),
            ("partitions", I64),
            ("retention_ms", I64),
            ("retention_bytes", I64),
        ]
    ),
    # DescribeLogDirs summed over the broker's log dirs, and the partitions it leads in the snapshot
    "brokers": pa.schema(
        [
            ("ts", I64),
            ("broker", I64),
            ("size_bytes", I64),
            ("total_bytes", I64),
            ("usable_bytes", I64),
            ("leaders", I64),
        ]
    ),
    # lag summed and its largest partition, committed offsets summed
    "groups": pa.schema(
        [("group", S), ("topic", S), ("ts", I64), ("sum", I64), ("max", I64), ("committed", I64)]
    ),
    **HOUR_SCHEMAS,
}

# The raw columns each dataset's rollup reads (both engines).
RAW_COLUMNS = {
    "partitions": ["ts", "topic", "leader", "size_bytes", "log_start_offset", "log_end_offset"]
    + ["retention_ms", "retention_bytes"],
    "brokers": ["ts", "broker", "size_bytes", "total_bytes", "usable_bytes"],
    "groups": ["ts", "group", "topic", "lag", "committed_offset"],
}

# A rebuild rolls up this many bytes of raw Parquet per Spark pass (the pass's rollup rows come back
# to the driver as Arrow before they are split per hour and written).
CHUNK_BYTES = int(os.environ.get("PIPELINE_ROLLUP_CHUNK_BYTES", 256 << 20))


def hour_floor(ts: datetime) -> datetime:
    ts = lake.utc(ts)
    return ts.replace(minute=0, second=0, microsecond=0)


def _ms(ts: datetime) -> int:
    return int(lake.utc(ts).timestamp() * 1000)


def _hour(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _hour_rel(hour_ms: int) -> tuple[str, str]:
    h = _hour(hour_ms)
    return f"date={h.date().isoformat()}", f"hour-{h.hour:02d}"


def kind_root(lake_dir: Path, kind: str, cluster: str) -> Path:
    return Path(lake_dir) / "rollups" / kind / f"cluster={cluster}"


def rollup_path(lake_dir: Path, kind: str, cluster: str, hour_ms: int) -> Path:
    """The file holding the rollups of ``hour_ms``: its own for the ``HOURLY`` kinds, its day's otherwise."""
    day, name = _hour_rel(hour_ms)
    return kind_root(lake_dir, kind, cluster) / day / (f"{name}.parquet" if kind in HOURLY else DAY_FILE)


@contextlib.contextmanager
def locked(lake_dir: Path, cluster: str, shared: bool = False):
    """One roll-up at a time per cluster (day files are read, changed and rewritten), and none while
    a run reads the rollups (``shared``: any number of readers at once)."""
    path = Path(lake_dir) / "rollups" / f".lock-{cluster}"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def manifest_path(lake_dir: Path, cluster: str, hour_ms: int) -> Path:
    day, name = _hour_rel(hour_ms)
    return kind_root(lake_dir, "manifests", cluster) / day / f"{name}.json"


def read_manifest(lake_dir: Path, cluster: str, hour_ms: int) -> dict | None:
    try:
        return json.loads(manifest_path(lake_dir, cluster, hour_ms).read_text())
    except (OSError, ValueError):
        return None


def _write_text_atomic(text: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


# -- which raw files hold which hours ----------------------------------------------------------


def read_manifests(lake_dir: Path, cluster: str, first_hour_ms: int, end_ms: int) -> dict[int, dict]:
    """The manifests of the hours [first_hour_ms, end_ms) that exist, per hour (one directory listing
    per day: a 30-day window on a younger lake costs no lookup per missing hour)."""
    out: dict[int, dict] = {}
    root = kind_root(lake_dir, "manifests", cluster)
    for day in lake.days(_hour(first_hour_ms), _hour(end_ms)):
        try:
            entries = list(os.scandir(root / f"date={day.isoformat()}"))
        except OSError:
            continue
        midnight = _ms(datetime(day.year, day.month, day.day, tzinfo=UTC))
        for e in entries:
            if not (e.name.startswith("hour-") and e.name.endswith(".json")):
                continue
            h = midnight + int(e.name[5:7]) * HOUR_MS
            if first_hour_ms <= h < end_ms:
                try:
                    with open(e.path) as fh:
                        out[h] = json.load(fh)
                except (OSError, ValueError):
                    continue
    return out


def list_raw(
    lake_dir: Path, cluster: str, first_hour_ms: int, end_ms: int, manifests: dict[int, dict] | None = None
) -> dict[int, list[lake.RawFile]]:
    """Every raw file with rows in the hours [first_hour_ms, end_ms), per hour.

    The date directories are listed (names and stat only); a file already named in a manifest of
    those hours (``manifests``, read here when not given) takes its hours from there, a new one
    from its Parquet footer.
    """
    if manifests is None:
        manifests = read_manifests(lake_dir, cluster, first_hour_ms, end_ms)
    known: dict[tuple, list[int]] = {}
    for m in manifests.values():
        for ds, rel, size, mtime, hours in m.get("inputs", []):
            known[(ds, rel, size, mtime)] = hours
    by_hour: dict[int, list[lake.RawFile]] = {}
    for dataset in lake.DATASETS:
        base = Path(lake_dir) / dataset / f"cluster={cluster}"
        for day in lake.days(_hour(first_hour_ms), _hour(end_ms)):
            d = base / f"date={day.isoformat()}"
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            for e in entries:
                if not e.name.endswith(".parquet") or e.name[0] in "._" or not e.is_file():
                    continue
                st = e.stat()
                f = lake.RawFile(dataset, f"{d.name}/{e.name}", st.st_size, st.st_mtime_ns)
                f.hours = known.get(f.key)
                if not f.hours:
                    f.hours, f.rows = lake.file_hours(Path(e.path))
                for h in f.hours:
                    if first_hour_ms <= h < end_ms:
                        by_hour.setdefault(h, []).append(f)
    return by_hour


def inputs_of(files: list[lake.RawFile]) -> list[list]:
    return sorted(f.entry() for f in files)


def is_current(m: dict | None, files: list[lake.RawFile]) -> bool:
    """Whether an hour's manifest ``m`` names exactly ``files``, rolled up by this version."""
    return m is not None and m.get("version") == VERSION and m.get("inputs") == inputs_of(files)


# -- the Arrow half: per-(snapshot, topic, leader) rows → the three rollups ----------------------


def _cast(table: pa.Table | None, kind: str) -> pa.Table:
    schema = SCHEMAS[kind]
    if table is None:
        return schema.empty_table()
    return pa.table({n: table.column(n).cast(schema.field(n).type) for n in schema.names}, schema=schema)


def finish(topics: pa.Table | None, disk: pa.Table | None, groups: pa.Table | None) -> dict[str, pa.Table]:
    """The rollups from Spark's aggregates (collected as Arrow).

    ``topics``: one row per (ts, topic) with the topic columns and one ``leaders_<broker>`` count
    per broker, or one row per (ts, topic, leader) (many brokers), then summed per (ts, topic)
    here. The leader counts per (ts, broker) are joined to ``disk`` (per (ts, broker)) as
    ``brokers``. Sums of sums, maxima of maxima: exact.
    """
    out = {"groups": _cast(groups, "groups")}
    leaders = pa.table({"ts": pa.array([], I64), "broker": pa.array([], I64), "leaders": pa.array([], I64)})
    if topics is None or topics.num_rows == 0:
        out["topics"] = SCHEMAS["topics"].empty_table()
    elif "leader" in topics.column_names:
        t = topics.group_by(["ts", "topic"]).aggregate(
            [
                ("size", "sum"),
                ("max_part", "max"),
                ("end", "sum"),
                ("start", "sum"),
                ("partitions", "sum"),
                ("retention_ms", "max"),
                ("retention_bytes", "max"),
            ]
        )
        t = t.rename_columns([n.rsplit("_sum", 1)[0].rsplit("_max", 1)[0] for n in t.column_names])
        out["topics"] = _cast(t, "topics")
        lt = topics.group_by(["ts", "leader"]).aggregate([("partitions", "sum")])
        leaders = pa.table(
            {
                "ts": lt["ts"].cast(I64),
                "broker": lt["leader"].cast(I64),
                "leaders": lt["partitions_sum"].cast(I64),
            }
        )
    else:
        out["topics"] = _cast(topics, "topics")
        cols = [c for c in topics.column_names if c.startswith("leaders_")]
        if cols:
            per_ts = topics.group_by("ts").aggregate([(c, "sum") for c in cols])
            leaders = pa.concat_tables(
                pa.table(
                    {
                        "ts": per_ts["ts"].cast(I64),
                        "broker": pa.array([int(c.split("_", 1)[1])] * per_ts.num_rows, I64),
                        "leaders": per_ts[f"{c}_sum"].cast(I64),
                    }
                )
                for c in cols
            )
    if disk is None or disk.num_rows == 0:
        out["brokers"] = SCHEMAS["brokers"].empty_table()
    else:
        d = pa.table(
            {
                n: disk.column(n).cast(I64)
                for n in ("ts", "broker", "size_bytes", "total_bytes", "usable_bytes")
            }
        )
        j = d.join(leaders, keys=["ts", "broker"], join_type="left outer")
        j = j.set_column(j.schema.get_field_index("leaders"), "leaders", pc.fill_null(j["leaders"], 0))
        out["brokers"] = _cast(j, "brokers")
    return out


def _hours_of(table: pa.Table, kind: str):
    return pc.multiply(pc.divide(table[TIME[kind]], HOUR_MS), HOUR_MS)


def _replace_hours(path: Path, kind: str, hours: list[int], new: pa.Table | None) -> None:
    """Rewrite a day file: its rows of ``hours`` replaced by ``new`` (none: removed)."""
    parts = []
    if path.exists():
        old = pq.read_table(path)
        parts.append(old.filter(pc.invert(pc.is_in(_hours_of(old, kind), pa.array(hours, I64)))))
    if new is not None and new.num_rows:
        parts.append(new)
    table = pa.concat_tables(parts) if parts else SCHEMAS[kind].empty_table()
    if table.num_rows:
        lake.write_atomic(_cast(table, kind).sort_by([(TIME[kind], "ascending")]), path, CODEC)
    elif path.exists():
        path.unlink()


def _in(table: pa.Table, kind: str, lo: int, hi: int) -> pa.Table | None:
    """The rows with their time in [lo, hi)."""
    if not table.num_rows:
        return None
    t = table[TIME[kind]]
    return table.filter(pc.and_(pc.greater_equal(t, lo), pc.less(t, hi)))


def _put(lake_dir: Path, cluster: str, kind: str, day_hours: list[int], rows: pa.Table | None) -> None:
    """A kind's rows of ``day_hours`` (one day; None: none) in place of what its files held for them."""
    if kind not in HOURLY:
        _replace_hours(rollup_path(lake_dir, kind, cluster, day_hours[0]), kind, day_hours, rows)
        return
    for h in day_hours:
        path, mine = (
            rollup_path(lake_dir, kind, cluster, h),
            None if rows is None else _in(rows, kind, h, h + HOUR_MS),
        )
        if mine is not None and mine.num_rows:
            lake.write_atomic(_cast(mine, kind).sort_by([(TIME[kind], "ascending")]), path, CODEC)
        else:
            path.unlink(missing_ok=True)
    legacy = path.parent / DAY_FILE  # version 2 kept these hours in the day file
    if legacy.exists():
        _replace_hours(legacy, kind, day_hours, None)


def _by_day(hours) -> dict[int, list[int]]:
    days: dict[int, list[int]] = {}
    for h in sorted(hours):
        days.setdefault(h // 86_400_000, []).append(h)
    return days


def write_hours(
    lake_dir: Path,
    cluster: str,
    rollups: dict[str, pa.Table],
    hours: dict[int, list[lake.RawFile]],
) -> int:
    """Put the hours' rollups into their files, then write their manifests (last: a crash re-rolls).

    Every (day, kind) is written at once on two threads (pyarrow encodes without the GIL)."""

    def one(job: tuple[list[int], str]) -> None:
        day_hours, kind = job
        _put(
            lake_dir,
            cluster,
            kind,
            day_hours,
            _in(rollups[kind], kind, day_hours[0], day_hours[-1] + HOUR_MS),
        )

    days = list(_by_day(hours).values())
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="rollup-write") as pool:
        list(
            pool.map(one, [(d, kind) for d in days for kind in sorted(KINDS, key=lambda k: k not in HOURLY)])
        )
    for h in sorted(hours):
        manifest = {"hour": _hour(h).isoformat(), "version": VERSION, "inputs": inputs_of(hours[h])}
        _write_text_atomic(json.dumps(manifest), manifest_path(lake_dir, cluster, h))
    return len(hours)


def drop(lake_dir: Path, cluster: str, first_hour_ms: int, end_ms: int) -> None:
    """Remove the rollups and manifests of the hours [first_hour_ms, end_ms) (a full rebuild)."""
    for day_hours in _by_day(range(first_hour_ms, end_ms, HOUR_MS)).values():
        for h in day_hours:
            manifest_path(lake_dir, cluster, h).unlink(missing_ok=True)
        for kind in KINDS:
            path = rollup_path(lake_dir, kind, cluster, day_hours[0])
            if len(day_hours) == 24 and kind not in HOURLY:
                path.unlink(missing_ok=True)
            else:
                _put(lake_dir, cluster, kind, day_hours, None)


def rollup_files(lake_dir: Path, kind: str, cluster: str, since: datetime, until: datetime) -> list[str]:
    """The files of a kind's rollups in [since, until) that exist (for the ``HOURLY`` kinds, the hours'
    files and any day file version 2 left)."""
    root = kind_root(lake_dir, kind, cluster)
    files = [root / f"date={day.isoformat()}" / DAY_FILE for day in lake.days(since, until)]
    if kind in HOURLY:
        first, end = _ms(hour_floor(since)), _ms(until)
        files += [rollup_path(lake_dir, kind, cluster, h) for h in range(first, end, HOUR_MS)]
    return [str(f) for f in files if f.exists()]


def chunks(hours: dict[int, list[lake.RawFile]], limit: int = CHUNK_BYTES) -> list[list[int]]:
    """Consecutive hours grouped so each group's raw input is at most ``limit`` bytes (at least one hour)."""
    out: list[list[int]] = []
    size = 0
    for h in sorted(hours):
        b = sum(f.size / max(1, len(f.hours)) for f in hours[h])
        if out and size + b <= limit and out[-1][-1] == h - HOUR_MS:
            out[-1].append(h)
            size += b
        else:
            out.append([h])
            size = b
    return out


def hours_between(since: datetime, end: datetime) -> tuple[int, int]:
    """(first hour start, end) in epoch ms for the closed hours overlapping [since, end)."""
    return _ms(hour_floor(since)), _ms(end)
