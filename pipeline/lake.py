"""The snapshot lake: Parquet datasets partitioned by cluster and date, written atomically.

Layout (hive-style, so Spark and pyarrow discover ``cluster`` and ``date`` from the path)::

    <lake>/partitions/cluster=<name>/date=<YYYY-MM-DD>/snap-<slot>.parquet   one row per partition
    <lake>/brokers/cluster=<name>/date=<YYYY-MM-DD>/snap-<slot>.parquet      one row per broker log dir
    <lake>/groups/cluster=<name>/date=<YYYY-MM-DD>/snap-<slot>.parquet       one row per group partition
    <lake>/reports/cluster=<name>/CURRENT -> run-<id>/<report>.parquet        what the pages read

Files are written under a dot-name in the same directory and renamed into place, so readers
(Spark and pyarrow skip names starting with "." or "_") never see a half-written file.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.reference import HOUR_MS

SCHEMA_VERSION = 1
DATASETS = ("partitions", "brokers", "groups")

_TS = pa.timestamp("ms", tz="UTC")


def _dataset(*fields: tuple) -> pa.Schema:
    """A dataset's schema: the schema version and the snapshot's time, then the dataset's own fields."""
    return pa.schema([("schema_version", pa.int16()), ("ts", _TS), *fields])


PARTITIONS = _dataset(
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("leader", pa.int32()),
    ("replicas", pa.list_(pa.int32())),
    ("isr", pa.list_(pa.int32())),
    ("replica_sizes", pa.list_(pa.int64())),  # aligned with replicas; -1 when a broker did not answer
    ("log_start_offset", pa.int64()),  # -1 when unknown
    ("log_end_offset", pa.int64()),  # -1 when unknown
    ("size_bytes", pa.int64()),  # the leader's replica; -1 when unknown
    ("retention_ms", pa.int64()),  # null when unknown
    ("retention_bytes", pa.int64()),
)

BROKERS = _dataset(
    ("broker", pa.int32()),
    ("log_dir", pa.string()),
    ("size_bytes", pa.int64()),  # sum of the replicas in this log dir
    ("total_bytes", pa.int64()),  # null when the broker does not report it (KIP-827)
    ("usable_bytes", pa.int64()),
    ("error", pa.string()),
)

GROUPS = _dataset(
    ("group", pa.string()),
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("committed_offset", pa.int64()),
    ("log_end_offset", pa.int64()),
    ("lag", pa.int64()),
)

SCHEMAS = {"partitions": PARTITIONS, "brokers": BROKERS, "groups": GROUPS}


def utc(ts: datetime) -> datetime:
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


def partition_dir(lake: Path, dataset: str, cluster: str, day: date) -> Path:
    return Path(lake) / dataset / f"cluster={cluster}" / f"date={day.isoformat()}"


def slot_name(ts: datetime, interval_s: int) -> str:
    """The file name of the snapshot slot ``ts`` falls in: one snapshot per cluster per interval."""
    slot = int(utc(ts).timestamp()) // max(1, interval_s) * max(1, interval_s)
    return f"snap-{slot}.parquet"


#: Rows per Parquet row group: the writer holds one group's encoded pages at a time. pyarrow's
#: default (1Mi rows) made a 1M-partition snapshot one group: writing it took 94 MB above the table,
#: 60 MB in groups of this size (measured on a table of its shape; smaller groups saved little more
#: and compressed worse).
ROW_GROUP_ROWS = 128 * 1024


def dictionary_columns(schema: pa.Schema) -> list[str]:
    """The columns written dictionary-encoded: the strings (topic, group, log dir names: few values,
    repeated). Numbers are written plain: their dictionary encoding built a hash table per column
    and row group, then fell back to plain for offsets and sizes anyway - writing a 1M-partition
    snapshot took 83 MB above the table, 24 MB without (a table of its shape, same file size)."""
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]


def write_atomic(table: pa.Table, path: Path, compression: str = "zstd") -> Path:
    """Write a Parquet file to a temporary dot-name next to ``path`` and rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        pq.write_table(
            table,
            tmp,
            compression=compression,
            row_group_size=ROW_GROUP_ROWS,
            use_dictionary=dictionary_columns(table.schema),
        )
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def write_snapshot(
    lake: Path,
    cluster: str,
    ts: datetime,
    tables: dict[str, pa.Table],
    interval_s: int,
    name: str | None = None,
) -> dict[str, Path]:
    """Write one snapshot's datasets (any of partitions/brokers/groups); returns the paths written."""
    ts = utc(ts)
    fname = name or slot_name(ts, interval_s)
    written = {}
    for dataset, table in tables.items():
        table = table.cast(SCHEMAS[dataset])
        written[dataset] = write_atomic(table, partition_dir(lake, dataset, cluster, ts.date()) / fname)
    return written


def snapshot_exists(lake: Path, cluster: str, ts: datetime, interval_s: int) -> bool:
    ts = utc(ts)
    return (partition_dir(lake, "partitions", cluster, ts.date()) / slot_name(ts, interval_s)).exists()


def days(since: datetime, until: datetime) -> list[date]:
    """Every UTC date touched by [since, until)."""
    first, last = utc(since).date(), (utc(until) - timedelta(microseconds=1)).date()
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def window_paths(lake: Path, dataset: str, cluster: str, since: datetime, until: datetime) -> list[str]:
    """The date directories of a window that exist (partition pruning without listing the lake)."""
    dirs = (partition_dir(lake, dataset, cluster, d) for d in days(since, until))
    return [
        str(d)
        for d in dirs
        if d.is_dir() and any(p.suffix == ".parquet" and p.name[0] not in "._" for p in d.iterdir())
    ]


def read_window(
    lake: Path,
    dataset: str,
    cluster: str,
    since: datetime,
    until: datetime,
    columns: Iterable[str] | None = None,
) -> pa.Table:
    """A dataset's rows in [since, until) with pyarrow (small data: tests, the reference engine)."""
    schema = SCHEMAS[dataset]
    tables = []
    for d in window_paths(lake, dataset, cluster, since, until):
        for f in sorted(Path(d).iterdir()):
            if f.suffix == ".parquet" and f.name[0] not in "._":
                tables.append(pq.read_table(f, columns=list(columns) if columns else None))
    if not tables:
        cols = list(columns) if columns else schema.names
        return pa.schema([schema.field(c) for c in cols]).empty_table()
    table = pa.concat_tables(tables, promote_options="default")
    ts = table.column("ts")
    lo = pa.scalar(utc(since), type=_TS)
    hi = pa.scalar(utc(until), type=_TS)
    return table.filter(pc.and_(pc.greater_equal(ts, lo), pc.less(ts, hi)))


def lake_size(lake: Path, cluster: str | None = None) -> dict[str, int]:
    """Bytes on disk per dataset (for the README's growth figures and the page's footer)."""
    out = {}
    for dataset in DATASETS:
        root = Path(lake) / dataset
        if cluster:
            root = root / f"cluster={cluster}"
        out[dataset] = sum(f.stat().st_size for f in root.rglob("*.parquet")) if root.exists() else 0
    return out


# -- raw files: which hours and how many rows each holds (the rollups' manifests name them) ------


def _epoch_ms(ts: datetime) -> int:
    return int(utc(ts).timestamp() * 1000)


@dataclass
class RawFile:
    """A raw snapshot file of the lake as listed (the manifests name it by ``entry()``)."""

    dataset: str
    rel: str  # date=<d>/<name>, under <lake>/<dataset>/cluster=<name>/
    size: int
    mtime_ns: int
    hours: list[int] = field(default_factory=list)  # hour starts (epoch ms) the file's rows fall in
    rows: int | None = None  # from the footer when it was read (not part of the manifest)

    @property
    def key(self) -> tuple:
        return (self.dataset, self.rel, self.size, self.mtime_ns)

    def entry(self) -> list:
        return [self.dataset, self.rel, self.size, self.mtime_ns, self.hours]


def file_hours(path: Path) -> tuple[list[int], int]:
    """The hours a raw file's rows fall in, from its footer's ``ts`` statistics (else the column), and
    its row count."""
    meta = pq.read_metadata(path)
    col = meta.schema.names.index("ts")
    lo = hi = None
    for i in range(meta.num_row_groups):
        st = meta.row_group(i).column(col).statistics
        if st is None or not st.has_min_max:
            lo = hi = None
            break
        a, b = _epoch_ms(st.min), _epoch_ms(st.max)
        lo, hi = (a, b) if lo is None else (min(lo, a), max(hi, b))
    if lo is None:
        ts = pq.read_table(path, columns=["ts"]).column("ts")
        if len(ts) == 0 or ts.null_count == len(ts):
            return [], meta.num_rows
        mm = pc.min_max(ts)
        lo, hi = _epoch_ms(mm["min"].as_py()), _epoch_ms(mm["max"].as_py())
    first = lo // HOUR_MS * HOUR_MS
    return list(range(first, hi // HOUR_MS * HOUR_MS + 1, HOUR_MS)), meta.num_rows


def raw_path(lake_dir: Path, cluster: str, f: RawFile) -> str:
    """The file's path."""
    return str(Path(lake_dir) / f.dataset / f"cluster={cluster}" / f.rel)


def row_count(lake_dir: Path, cluster: str, files: list[RawFile]) -> int:
    """The raw rows of ``files`` (every dataset), from their footers (already read for new files)."""
    return sum(
        f.rows if f.rows is not None else pq.read_metadata(raw_path(lake_dir, cluster, f)).num_rows
        for f in files
    )
