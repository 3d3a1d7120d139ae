"""The window's hour states kept between runs: one small Parquet file per kind, updated hour by hour.

An hourly run's reports merge the window's hour states (:mod:`pipeline.windows`): 720 hours of
``topic_hours``, ``group_hours``, ``cluster`` and ``brokers`` rows at 30 days. Reading them again
from 30 day files per kind each hour (and filtering them to the window) is most of what the
reports cost on a small cluster with a long window. So the rows of the window's whole closed hours
are kept, per kind, in one file::

    <lake>/reports/cluster=<name>/window-state/<kind>.parquet   (next to the published runs)

whose metadata names, per hour it holds, the token of the manifest that hour was rolled up from
(:func:`token`: the rollup version and the raw files that went in). A run keeps the rows of the
hours still in the window whose token is unchanged, drops the hours that left the window, reads
from the day files only the hours that are new or were rolled up again (a late snapshot, a
rebuild, another run's roll-up), and writes the file back when it is ``LAG_HOURS`` behind. The rows are the
same rows the day files hold, so the reports merged from them are the same, exactly: the merge
sorts its inputs by their keys (topic or group and hour; broker and snapshot) before it sums.

No subtraction is involved, so nothing needs a special case (maxima, first/last points, first
seen): the window's state *is* its hours' rows, and an hour leaving the window is its rows
filtered out. A missing, unreadable or foreign file (another cluster, kind or ``STATE_VERSION``)
holds nothing, and the run reads every hour from the day files as before and writes a new one.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import lake, reports, rollups
from pipeline.reference import HOUR_MS

# Bumped when what the file holds changes; a file of another version is ignored and rewritten.
STATE_VERSION = 1
KINDS = ("cluster", "brokers", "topic_hours", "group_hours")
META_KEY = b"window_state"
# The file is written back once it is more than this many hours behind (hours the run read from
# the day files, plus hours it holds that left the window or were rolled up again): the hourly
# run reads its newest hours from one or two day files per kind, and the window-sized write
# (as costly as reading the window from the day files) happens once a day, not every hour.
LAG_HOURS = 24

Reader = Callable[[str, int, int], pa.Table]
log = logging.getLogger(__name__)


def token(manifest: dict) -> str:
    """What identifies an hour's rollups: the version that rolled it up and its raw files."""
    text = repr((manifest.get("version"), manifest.get("inputs")))  # lists of str and int: stable
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def path_of(lake_dir: Path, cluster: str, kind: str) -> Path:
    return reports.cluster_dir(lake_dir, cluster) / "window-state" / f"{kind}.parquet"


def _hours(table: pa.Table, kind: str) -> pa.Array:
    return pc.multiply(pc.divide(table[rollups.TIME[kind]], HOUR_MS), HOUR_MS)


def load(lake_dir: Path, cluster: str, kind: str) -> tuple[pa.Table | None, dict[int, str]]:
    """The file's rows and its tokens per hour; (None, {}) when it is missing, unreadable or foreign."""
    try:
        table = pq.read_table(path_of(lake_dir, cluster, kind))
        meta = json.loads(table.schema.metadata[META_KEY])
        if (meta["version"], meta["cluster"], meta["kind"]) != (STATE_VERSION, cluster, kind):
            return None, {}
        tokens = {int(h): str(t) for h, t in meta["tokens"].items()}
        return table.cast(rollups.SCHEMAS[kind]), tokens
    except (OSError, KeyError, TypeError, ValueError, pa.ArrowException):
        return None, {}


def _save(lake_dir: Path, cluster: str, kind: str, table: pa.Table, tokens: dict[int, str]) -> None:
    meta = {"version": STATE_VERSION, "cluster": cluster, "kind": kind, "tokens": tokens}
    table = table.replace_schema_metadata({META_KEY: json.dumps(meta).encode()})
    lake.write_atomic(table, path_of(lake_dir, cluster, kind), rollups.CODEC)


def _log_failure(done: Future) -> None:
    """A state not written is only a slower next run (it reads the hours the old file lacks)."""
    if done.exception() is not None:
        log.warning("window state not written: %s", done.exception())


def _runs(hours: list[int]) -> list[tuple[int, int]]:
    """Sorted hours as [start, end) ranges of consecutive hours."""
    out: list[tuple[int, int]] = []
    for h in hours:
        if out and out[-1][1] == h:
            out[-1] = (out[-1][0], h + HOUR_MS)
        else:
            out.append((h, h + HOUR_MS))
    return out


def window_rows(
    lake_dir: Path,
    cluster: str,
    kind: str,
    lo: int,
    hi: int,
    tokens: dict[int, str],
    read: Reader,
    fresh: bool = False,
    pool: Executor | None = None,
) -> pa.Table:
    """The kind's rows of the whole closed hours [lo, hi), sorted by time, the window state brought
    up to date. ``tokens``: the current token of every rolled-up hour; ``read(kind, lo, hi)`` reads
    a range from the day files; ``fresh`` ignores the file (a rebuild) and writes a new one;
    ``pool``: the file is written there (while the caller merges), else before returning."""
    old, held = (None, {}) if fresh else load(lake_dir, cluster, kind)
    keep = sorted(h for h, t in held.items() if lo <= h < hi and tokens.get(h) == t)
    kept = set(keep)
    parts = []
    if keep and old is not None and old.num_rows:
        parts.append(old.filter(pc.is_in(_hours(old, kind), pa.array(keep, pa.int64()))))
    parts += [read(kind, a, b) for a, b in _runs([h for h in range(lo, hi, HOUR_MS) if h not in kept])]
    schema = rollups.SCHEMAS[kind]
    table = pa.concat_tables([p.cast(schema) for p in parts]) if parts else schema.empty_table()
    table = table.sort_by([(rollups.TIME[kind], "ascending")])
    now = {h: t for h, t in tokens.items() if lo <= h < hi}
    behind = sum(1 for h in now if h not in kept) + sum(1 for h in held if h not in kept)
    if (fresh or behind > LAG_HOURS) and hi > lo:
        args = (lake_dir, cluster, kind, table, {str(h): t for h, t in sorted(now.items())})
        if pool is None:
            _save(*args)
        else:
            pool.submit(_save, *args).add_done_callback(_log_failure)
    return table
