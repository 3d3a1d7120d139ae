"""A short-lived, per-cluster, in-process cache of the cluster's topic metadata.

Why in-process and not Django's cache: a 100k-partition snapshot is tens of MB of small
objects; pickling it into Redis or LocMem on every read would cost about as much as asking
Kafka again. Each web/worker process keeps its snapshot for ``TOPIC_METADATA_CACHE_S`` seconds
(default 30), and one copy per host is shared (``TOPIC_METADATA_HOST_SHARED``, on by default):
the process that reads Kafka also writes what it read to a file under ``var/metadata/``
(``console.kafka.metadata_file``; on a writer thread, so the page does not wait for it), and a
process without a fresh snapshot of its own maps that file instead of asking Kafka - the packed
partitions stay in the page cache once for the host, and the brokers answer one whole-cluster
read per host per period, not one per process. A file lock, held until the copy is written,
makes the processes of a host that miss at once wait for one read. Consistency rules:

* Every page that shows it says how old it is and has a **Refresh** button (``refresh=True``).
* Services that change topics call ``invalidate(cluster)`` after the change, so the next page
  view in this process re-reads Kafka: it removes the host's file too, and this process never
  takes a file whose read started before its own last invalidation (another process's read in
  flight during the change). Other processes see the change within the TTL.
* One fetch at a time per cluster (single flight): concurrent page views wait for the same fetch.
* Memory is given back: an expired snapshot is dropped at the next read of any cluster's, and at
  most ``TOPIC_METADATA_CACHE_CLUSTERS`` snapshots are kept (the least recently read goes first).

Only the gateway talks to Kafka; this module asks it for one ``list_topics_metadata()`` per fill.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from console import collector
from console.clusters.actions import gateway_for
from console.kafka import ClusterMetadata, TopicMetadata, heap, metadata_file
from console.kafka.deferred import DeferredTopics

TTL_S = float(settings.TOPIC_METADATA_CACHE_S)
MAX_CLUSTERS = max(1, int(settings.TOPIC_METADATA_CACHE_CLUSTERS))
CONFIG_TTL_S = float(settings.TOPIC_CONFIG_CACHE_S)
HOST_DIR = Path(settings.VAR_DIR) / "metadata"


@dataclass(frozen=True)
class TopicRow:
    """One topic of the list, computed once per snapshot."""

    name: str
    partitions: int
    replication_factor: int
    under_replicated: int
    offline: int
    internal: bool
    # min ISR size over partitions, for the under-min-ISR count once min.insync.replicas is known
    isr_sizes: tuple[int, ...] = ()

    @property
    def unhealthy(self) -> bool:
        return bool(self.under_replicated or self.offline)


def _row(t: TopicMetadata) -> TopicRow:
    h = t.health()
    return TopicRow(
        t.name, h.partitions, h.replication_factor, h.under_replicated, h.offline, t.internal, h.isr_sizes
    )


@dataclass
class Snapshot:
    """One metadata fetch and what was derived from it.

    ``names`` (sorted) and ``by_name`` are built with the snapshot; a topic's ``TopicRow`` (its
    partition counts) is computed the first time a page shows it (``row``), and every row at once
    only when a page sorts or filters by the counts (``rows``): the default list page reads the
    counts of its 50 topics, not of all 100,000 partitions.
    """

    metadata: ClusterMetadata
    fetched_at: float  # time.time()
    fetched_mono: float
    names: list[str]  # every topic, sorted by name
    by_name: Mapping[str, TopicMetadata]  # a dict, or the gateway's DeferredTopics.by_name
    # topic name -> (monotonic time, {config: value}) for the few topics whose configs a page showed
    configs: dict[str, tuple[float, dict[str, str | None]]] = field(default_factory=dict)
    # topic name -> bytes from the telemetry pipeline's latest topic_summary (None = not read yet)
    sizes: dict[str, int] | None = None
    _rows: dict[str, TopicRow] = field(default_factory=dict)
    _all_rows: list[TopicRow] | None = None
    _public: list[str] | None = None
    _internal: frozenset[str] | None = None
    _sorted: dict[str, list[TopicRow]] = field(default_factory=dict)
    _search: object = None  # console.topics.search.NameIndex, built on the first search

    @property
    def age_s(self) -> float:
        return max(0.0, time.monotonic() - self.fetched_mono)

    @property
    def broker_ids(self) -> list[int]:
        return [b.id for b in self.metadata.brokers]

    def row(self, name: str) -> TopicRow:
        """One topic's row (computed once per snapshot)."""
        got = self._rows.get(name)
        if got is None:
            got = self._rows[name] = _row(self.by_name[name])
        return got

    @property
    def internal_names(self) -> frozenset[str]:
        """The names of Kafka's internal topics in this snapshot (without making their metadata)."""
        if self._internal is None:
            topics = self.metadata.topics
            if isinstance(topics, DeferredTopics):
                self._internal = frozenset(n for n in topics.internal_names if n in self.by_name)
            else:
                self._internal = frozenset(t.name for t in topics if t.internal)
        return self._internal

    @property
    def public_names(self) -> list[str]:
        """``names`` without Kafka's internal topics."""
        if self._public is None:
            internal = self.internal_names
            self._public = [n for n in self.names if n not in internal] if internal else self.names
        return self._public

    @property
    def rows(self) -> list[TopicRow]:
        """Every topic's row, by name (computed once per snapshot, when a page needs them all)."""
        if self._all_rows is None:
            row = self.row
            self._all_rows = [row(n) for n in self.names]
        return self._all_rows

    def sorted_rows(self, key: str) -> list[TopicRow]:
        """Rows sorted by a column (cached per snapshot: sorting 20k rows once, not per view)."""
        cached = self._sorted.get(key)
        if cached is None:
            if key == "name":
                cached = self.rows
            else:
                cached = sorted(self.rows, key=lambda r: (getattr(r, key), r.name))
            self._sorted[key] = cached
        return cached

    def search_index(self):
        """The names prepared for searching (``console.topics.search``), built once per snapshot."""
        if self._search is None:
            from console.topics.search import NameIndex

            self._search = NameIndex(self.names)
        return self._search


_cache: dict[object, Snapshot] = {}  # in order of last read (the least recently read first)
_locks: dict[object, threading.Lock] = {}
_guard = threading.Lock()


def _drop(key: object) -> None:
    """Forget a key's snapshot and, unless a fetch holds it, its lock (under ``_guard``)."""
    _cache.pop(key, None)
    lock = _locks.get(key)
    if lock is not None and not lock.locked():
        del _locks[key]


def _fresh(key: object) -> Snapshot | None:
    """The key's snapshot if fresh (marked as the most recently read); expired ones are dropped."""
    with _guard:
        for k in [k for k, s in _cache.items() if s.age_s >= TTL_S]:
            _drop(k)
        snap = _cache.pop(key, None)
        if snap is not None:
            _cache[key] = snap
        return snap


def _keep(key: object, snap: Snapshot) -> None:
    with _guard:
        _cache.pop(key, None)
        _cache[key] = snap
        while len(_cache) > MAX_CLUSTERS:
            _drop(next(iter(_cache)))
        _sweep_locks()


def _sweep_locks() -> None:
    """Drop the locks of keys without a snapshot that no fetch holds (a fetch that failed, or whose
    snapshot was dropped while it ran), so the locks stay as bounded as the snapshots (under ``_guard``)."""
    for key in [k for k, lock in _locks.items() if k not in _cache and not lock.locked()]:
        del _locks[key]


def _key(cluster) -> object:
    from console.clusters.actions import connection_for

    return (cluster.pk, connection_for(cluster))


def _lock_for(key: object) -> threading.Lock:
    with _guard:
        return _locks.setdefault(key, threading.Lock())


def build_snapshot(metadata: ClusterMetadata, fetched_at: float | None = None) -> Snapshot:
    """The name list and index of one metadata fetch (pure; rows are derived when first read);
    ``fetched_at`` (epoch seconds) when the fetch was made earlier than now (the host's copy)."""
    now = time.time()
    then = now if fetched_at is None else min(now, fetched_at)
    topics = metadata.topics
    if isinstance(topics, DeferredTopics):  # the gateway's: sorted, each topic made when first read
        names, by_name = topics.names, topics.by_name
    else:
        names = [t.name for t in topics]
        if any(a > b for a, b in zip(names, names[1:], strict=False)):
            topics = sorted(topics, key=lambda t: t.name)
            names = [t.name for t in topics]
        by_name = {t.name: t for t in topics}
    return Snapshot(
        metadata=metadata,
        fetched_at=then,
        fetched_mono=time.monotonic() - (now - then),
        names=names,
        by_name=by_name,
    )


# ---- the host's copy ------------------------------------------------------------------------------

_invalidated: dict[object, float] = {}  # key -> epoch s of this process's last invalidate


def _host_path(key: object) -> Path | None:
    """The key's file on this host (named by the cluster and a digest of its connection settings:
    another connection to the same cluster id is another file), or None when not shared."""
    if not settings.TOPIC_METADATA_HOST_SHARED:
        return None
    pk, conn = key  # type: ignore[misc]
    digest = hashlib.sha256(repr(conn).encode()).hexdigest()[:24]
    return HOST_DIR / f"{pk}-{digest}.md"


def _host_lock(path: Path) -> int | None:
    """The host's one read at a time of this file, held (a descriptor to close) until the copy is
    written: the other processes that missed wait, then map it. None without a writable
    ``var/metadata/``: each process reads for itself, as when not shared."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # releases the lock


def _from_host(key: object, path: Path) -> Snapshot | None:
    """The host's copy when fresh and not older than this process's last invalidation."""
    got = metadata_file.read(path)
    if got is None:
        return None
    metadata, started_at = got
    if time.time() - started_at >= TTL_S or started_at < _invalidated.get(key, 0.0):
        return None
    return build_snapshot(metadata, started_at)


def _fetch(cluster, on_names) -> Snapshot:
    # ~100k acyclic objects while the answer is read and packed; see console.collector
    with collector.paused(collect_young=True):
        gw = gateway_for(cluster)
        metadata = gw.list_topics_metadata(on_names) if on_names else gw.list_topics_metadata()
        snap = build_snapshot(metadata)
    heap.give_back()  # the answer's bytes and the decoding's garbage go back: the process keeps the snapshot
    return snap


# The host's copy is written beside the page, not before it answers: at 1,000,000 partitions writing
# 43 MB and replacing the previous file took ~0.15 s of a ~0.35 s read. One writer thread per process,
# made in the process that writes: a forked worker inherits no thread, only an executor that thinks
# it has one.
_sharing: tuple[int, ThreadPoolExecutor] | None = None


def _writer() -> ThreadPoolExecutor:
    global _sharing
    with _guard:
        if _sharing is None or _sharing[0] != os.getpid():
            _sharing = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="metadata-share"))
        return _sharing[1]


def _share(key: object, path: Path, fresh: Snapshot, started_at: float, lock: int | None) -> None:
    """Write the host's copy of ``fresh`` on the writer thread, then release the host lock (when
    held: the processes waiting for it map the new file). Its header is made here, before the caller
    goes on (~5 ms at 1M partitions; made on the writer it held the GIL against the page for 10-20
    ms). Not written when this process invalidated the cluster after the read started; a full or
    read-only disk leaves each process its own copy."""
    try:
        buffers = metadata_file.encode(fresh.metadata, started_at)
    except BaseException:
        _unlock(lock)
        raise

    def write() -> None:
        try:
            if buffers is not None and started_at >= _invalidated.get(key, 0.0):
                metadata_file.store(path, buffers)
        except OSError:
            pass
        finally:
            _unlock(lock)

    try:
        _writer().submit(write)
    except RuntimeError:  # the interpreter is shutting down: no thread to hand it to
        write()


def wait_shared() -> None:
    """Return once every host copy this process started writing is written (tests, ``clear``)."""
    _writer().submit(lambda: None).result()


def get_snapshot(cluster, *, refresh: bool = False, on_names=None) -> Snapshot:
    """The cluster's metadata, from the cache when fresh; one gateway fetch otherwise.

    ``on_names(sorted names)`` is called during a fetch as soon as the names are known (not when
    the snapshot comes from the cache). Raises the gateway's KafkaOperationError when Kafka cannot
    be read.
    """
    key = _key(cluster)
    snap = _fresh(key)
    if snap is not None and not refresh:
        return snap
    with _lock_for(key):
        snap = _fresh(key)
        # Someone else filled it while we waited: use theirs (unless it predates our refresh request).
        if snap is not None and not refresh:
            return snap
        started, started_at = time.monotonic(), time.time()
        path = _host_path(key)
        if path is None:
            fresh = _fetch(cluster, on_names)
        elif refresh:  # asked for Kafka's answer now: read it, and the host's copy becomes it
            fresh = _fetch(cluster, on_names)
            _share(key, path, fresh, started_at, None)
        else:
            lock = _host_lock(path)
            try:
                fresh = _from_host(key, path)
                if fresh is None:
                    started_at = time.time()
                    fresh = _fetch(cluster, on_names)
                    held, lock = lock, None  # _share (or its writer) releases it
                    _share(key, path, fresh, started_at, held)
            finally:
                _unlock(lock)
        if snap is not None and refresh and snap.fetched_mono >= started:
            return snap
        _keep(key, fresh)
        return fresh


def peek(cluster) -> Snapshot | None:
    """The cached snapshot if it is still fresh, without ever fetching."""
    return _fresh(_key(cluster))


def invalidate(cluster) -> None:
    """Forget the cluster's snapshot in this process and the host's copy (after a change made
    through the console); a copy whose read started before now is never taken here again."""
    key = _key(cluster)
    now = time.time()
    with _guard:
        _drop(key)
        # an invalidation older than the TTL refuses nothing a fresh copy could be: forget it
        for k in [k for k, at in _invalidated.items() if now - at >= TTL_S]:
            del _invalidated[k]
        _invalidated[key] = now
    path = _host_path(key)
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def clear() -> None:
    """Forget everything, the host's copies too (tests)."""
    wait_shared()  # (takes _guard itself)
    with _guard:
        for key in list(_cache):
            _drop(key)
        _sweep_locks()
        _invalidated.clear()
    shutil.rmtree(HOST_DIR, ignore_errors=True)


def kept_count() -> tuple[int, int]:
    """How many snapshots and single-flight locks this process keeps (both bounded)."""
    with _guard:
        return len(_cache), len(_locks)


def cached_configs(snap: Snapshot, names: list[str]) -> tuple[dict[str, dict[str, str | None]], list[str]]:
    """Configs already known for ``names`` and the names still to fetch."""
    now = time.monotonic()
    known, missing = {}, []
    for name in names:
        hit = snap.configs.get(name)
        if hit is not None and now - hit[0] < CONFIG_TTL_S:
            known[name] = hit[1]
        else:
            missing.append(name)
    return known, missing


def remember_configs(snap: Snapshot, values: dict[str, dict[str, str | None]]) -> None:
    now = time.monotonic()
    for name, cfg in values.items():
        snap.configs[name] = (now, cfg)
