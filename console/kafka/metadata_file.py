"""A whole-cluster metadata read kept in one file per host, mapped by every process that reads it.

Each web and worker process used to read a cluster's whole Metadata itself (at 1,000,000
partitions a 46 MB answer per process per cache period, which the brokers serve every time) and
keep its own packed copy. ``write`` stores what the C decoder made of one read - the brokers, the
counts and each topic's partitions already packed (``metadata_read.WholeTopic``) - in a file;
``read`` maps that file read-only and hands back the same ``ClusterMetadata`` whose topics'
packed partitions are views of the mapping, so the bytes live once in the page cache, shared by
every process of the host, and a process reading them copies nothing it does not look at.

The file: ``MAGIC`` (its format), the header's length (8 bytes, big-endian), the header
(``marshal``: when the read started, the cluster id, the controller, the brokers, the per-broker
counts, Kafka's internal topics, and per topic its name, error, flag, counts and where its packed
partitions start and end), then the packed partitions one after another. A file of another
format, cut short or otherwise unreadable is no snapshot (``read`` answers None: ask Kafka).
Written to a temporary name and renamed, so a reader sees a whole file or none; a mapping stays
valid after the file is replaced or removed.
"""

from __future__ import annotations

import marshal
import mmap
import os
import struct
import tempfile
from pathlib import Path

from .cluster import _PackedPartitions
from .deferred import DeferredTopics
from .metadata_read import WholeTopic
from .types import BrokerInfo, ClusterMetadata

__all__ = ["read", "write"]

MAGIC = b"KOC-MD1\n"
_LEN = struct.Struct(">Q")
_START = len(MAGIC) + _LEN.size


def write(path: Path, metadata: ClusterMetadata, started_at: float) -> bool:
    """Store a whole-cluster read (the gateway's ``list_topics_metadata``) made at ``started_at``
    (epoch seconds, when it was asked); False when it is not the packed form (nothing written)."""
    topics = metadata.topics
    if not isinstance(topics, DeferredTopics) or not isinstance(topics._reader, _PackedPartitions):
        return False
    sources = topics._sources
    entries, blobs, at = [], [], 0
    for name in topics.names:
        t = sources[name]
        n = len(t.packed)
        entries.append((name, t.error_code, t.internal, at, n, t.partitions, t.replication_factor,
                        t.under_replicated, t.offline))  # fmt: skip
        blobs.append(t.packed)
        at += n
    header = marshal.dumps(
        (
            float(started_at),
            metadata.cluster_id,
            metadata.controller_id,
            [(b.id, b.host, b.port, b.rack) for b in metadata.brokers],
            None if topics.broker_counts is None else [tuple(c) for c in topics.broker_counts],
            sorted(topics.internal_names),
            entries,
        )
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC)
            f.write(_LEN.pack(len(header)))
            f.write(header)
            for blob in blobs:
                f.write(blob)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True


def read(path: Path) -> tuple[ClusterMetadata, float] | None:
    """The snapshot a file holds and when its read started (epoch seconds); None when there is no
    file or it is not a whole one of this format."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size < _START:
                return None
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    view = memoryview(mapped)
    try:
        if view[: len(MAGIC)] != MAGIC:
            return None
        (n,) = _LEN.unpack_from(view, len(MAGIC))
        base = _START + n
        if base > len(view):
            return None
        started_at, cluster_id, controller, brokers, counts, internal, entries = marshal.loads(
            view[_START:base]
        )
        end = len(view) - base
        topics: dict[str, WholeTopic] = {}
        for name, error, is_internal, at, size, parts, rf, under, offline in entries:
            if at < 0 or size < 0 or at + size > end:
                return None
            packed = view[base + at : base + at + size]
            topics[name] = WholeTopic(name, error, is_internal, packed, parts, rf, under, offline)  # type: ignore[arg-type]
        broker_infos = tuple(BrokerInfo(b, host, port, rack) for b, host, port, rack in brokers)
    except (EOFError, ValueError, TypeError, struct.error):
        return None
    names = list(topics)  # written sorted
    live = frozenset(b.id for b in broker_infos)
    deferred = DeferredTopics(
        names,
        topics,
        _PackedPartitions(live),
        frozenset(internal),
        None if counts is None else tuple(tuple(c) for c in counts),
    )
    return ClusterMetadata(cluster_id, controller, broker_infos, deferred), float(started_at)
