"""The lake's newest snapshot files as the pages read them: which file is a cluster's newest
(``latest_file``), what says it is unchanged (``file_version``: name, mtime, size) and a bounded
cache of what was read from each (``NewestFileCache``), used by topic sizes and the search's names.

The layout is :mod:`pipeline.lake`'s; names starting with "." or "_" are files being written.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def latest_file(lake_dir: Path, cluster: str, dataset: str = "partitions") -> Path | None:
    """The newest snapshot file of one of a cluster's datasets (by date directory, then name)."""
    root = Path(lake_dir) / dataset / f"cluster={cluster}"
    try:
        days = sorted((d for d in root.iterdir() if d.name.startswith("date=")), reverse=True)
    except OSError:  # no snapshot of this cluster yet (or no lake at all)
        return None
    for day in days:
        try:
            files = [f for f in day.iterdir() if f.suffix == ".parquet" and f.name[0] not in "._"]
        except OSError:
            continue
        if files:
            # snap-<epoch slot>: the number orders them by time; the mtime breaks ties of other names
            # (only the tied are stat'ed: a day holds hundreds of snapshots)
            slots = [(_slot(f.name), f) for f in files]
            newest = max(slot for slot, _ in slots)
            tied = [f for slot, f in slots if slot == newest]
            return tied[0] if len(tied) == 1 else max(tied, key=_mtime)
    return None


def _slot(name: str) -> int:
    stem = name.rsplit(".", 1)[0]
    head, _, tail = stem.rpartition("-")
    if tail.isascii() and tail.isdigit() and not any(c.isdigit() for c in head):  # snap-<slot>: quick
        return int(tail)
    digits = "".join(c for c in stem if c.isdigit())
    return int(digits) if digits else -1


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def file_version(path: Path) -> tuple[str, int, int] | None:
    """What the caches compare to know a file unchanged (name, mtime, size); None when it is gone
    (replaced between the listing and now: the next view reads the new one)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (str(path), stat.st_mtime_ns, stat.st_size)


class NewestFileCache:
    """What was read from a key's newest file, kept until that file changes (its ``file_version``),
    for at most ``limit()`` keys, the least recently read dropped first. A read that raises is not
    kept; reads run outside the lock (two at once may both read, the last one is kept)."""

    def __init__(self, limit: Callable[[], Any]) -> None:
        self._limit = limit
        self._entries: OrderedDict[Hashable, tuple[tuple, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: tuple, read: Callable[[], T]) -> T:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] == version:
                self._entries.move_to_end(key)
                return hit[1]
        value = read()
        with self._lock:
            self._entries[key] = (version, value)
            self._entries.move_to_end(key)
            while len(self._entries) > max(1, int(self._limit())):
                self._entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
