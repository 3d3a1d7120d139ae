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
counts, Kafka's internal topics, then three lists in name order: the names, each topic's error,
flag and counts, and the length of its packed partitions), then the packed partitions one after
another, in the same order. A file of another
format, cut short or otherwise unreadable is no snapshot (``read`` answers None: ask Kafka).
Written to a temporary name and renamed, so a reader sees a whole file or none; a mapping stays
valid after the file is replaced or removed.
"""

from __future__ import annotations

import marshal
import mmap
import operator
import os
import struct
import tempfile
from pathlib import Path

from .cluster import _PackedPartitions
from .deferred import DeferredTopics
from .metadata_read import WholeTopic
from .types import BrokerInfo, ClusterMetadata

__all__ = ["encode", "read", "store", "write"]

MAGIC = b"KOC-MD2\n"
# a WholeTopic's fields kept in the header besides its name and packed partitions
_FIELDS = operator.itemgetter(1, 2, 4, 5, 6, 7)  # error, internal, partitions, rf, under, offline
_PACKED = operator.itemgetter(3)
_LEN = struct.Struct(">Q")
_START = len(MAGIC) + _LEN.size


def write(path: Path, metadata: ClusterMetadata, started_at: float) -> bool:
    """Store a whole-cluster read (the gateway's ``list_topics_metadata``) made at ``started_at``
    (epoch seconds, when it was asked); False when it is not the packed form (nothing written)."""
    buffers = encode(metadata, started_at)
    if buffers is None:
        return False
    store(path, buffers)
    return True


def encode(metadata: ClusterMetadata, started_at: float) -> list | None:
    """The file's contents as a list of buffers: the header, then each topic's packed partitions
    (the read's own bytes, not copied); None when the read is not the packed form. Built by C-level
    maps, not a Python loop per topic (~5 ms at 1,000,000 partitions)."""
    topics = metadata.topics
    if not isinstance(topics, DeferredTopics) or not isinstance(topics._reader, _PackedPartitions):
        return None
    ordered = list(map(topics._sources.__getitem__, topics.names))
    blobs = list(map(_PACKED, ordered))
    header = marshal.dumps(
        (
            float(started_at),
            metadata.cluster_id,
            metadata.controller_id,
            [(b.id, b.host, b.port, b.rack) for b in metadata.brokers],
            None if topics.broker_counts is None else [tuple(c) for c in topics.broker_counts],
            sorted(topics.internal_names),
            topics.names,
            list(map(_FIELDS, ordered)),
            list(map(len, blobs)),
        )
    )
    return [MAGIC, _LEN.pack(len(header)), header, *blobs]


def store(path: Path, buffers: list) -> None:
    """Write ``encode``'s buffers to ``path``: to a temporary name, then renamed (readers see a
    whole file or none). The kernel copies them in calls of ``_IOV`` buffers, without the GIL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        _write_all(fd, buffers)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# Buffers per writev call (Linux's IOV_MAX is 1024). The blobs go to the kernel in a few calls that
# each release the GIL for megabytes, not one call per topic: the copy is written on a thread beside
# the page that read it, and 20,000 small writes kept taking the GIL from that page.
_IOV = 1024


def _write_all(fd: int, buffers: list) -> None:
    """Every byte of ``buffers`` to ``fd``, in order (a short write is continued)."""
    buffers, at = list(buffers), 0
    while at < len(buffers):
        written = os.writev(fd, buffers[at : at + _IOV])
        while at < len(buffers) and written >= len(buffers[at]):
            written -= len(buffers[at])
            at += 1
        if written:
            buffers[at] = memoryview(buffers[at])[written:]


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
        started_at, cluster_id, controller, brokers, counts, internal, names, fields, sizes = marshal.loads(
            view[_START:base]
        )
        if not len(names) == len(fields) == len(sizes):
            return None
        end, at = len(view), base
        topics: dict[str, WholeTopic] = {}
        for name, (error, is_internal, parts, rf, under, offline), size in zip(
            names, fields, sizes, strict=True
        ):
            if size < 0 or at + size > end:
                return None
            topics[name] = WholeTopic(
                name, error, is_internal, view[at : at + size], parts, rf, under, offline
            )  # type: ignore[arg-type]
            at += size
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
