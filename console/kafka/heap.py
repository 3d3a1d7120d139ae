"""The process's C allocator keeps the memory of large Kafka answers for the next ones.

A whole cluster's Metadata at 100,000 partitions is ~5 MB, read every round of the alert evaluator
(and by the snapshot, the topic list, ...): the receive buffer, the frame it is copied into and the
decoder's packed topics are each a few MB, alive for milliseconds. glibc hands allocations that
large to ``mmap`` and gives them back to the kernel when freed (and trims the heap's free top), so
the next answer touches fresh pages again: one page fault per 4 KB. Measured on the bench machine
(a VM), writing a fresh 5 MB buffer took ~27 ms against ~0.3 ms reusing one, and one whole
Metadata read of 100,000 partitions cost ~15 ms of CPU (GIL held) against ~7 ms with the memory
kept. ``keep_freed`` raises both thresholds (``mallopt``), so allocations up to ``MMAP_MAX`` come
from the heap and up to ``TRIM_MAX`` of free memory stays mapped for reuse: the process's resident
size stays near its peak instead of falling back after each read.

``give_back`` is the other side, for the bursts that are not about to recur at once: after a
burst is freed it hands the heap's free pages back (``malloc_trim``), those ``keep_freed`` keeps
included. A whole-cluster read at 1M partitions, a snapshot's reads before pyarrow (which allocates
from its own pool and never reuses them) or an alert round leave hundreds of MB free among a few
survivors, and a long-lived worker would otherwise keep every burst's peak resident.

Only where the C library is glibc (``mallopt``, ``malloc_trim`` present); elsewhere nothing changes.
"""

from __future__ import annotations

import ctypes
import functools
import os
from typing import Any

__all__ = ["give_back", "keep_freed", "trim_when_grown"]

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
MMAP_MAX = 32 * 1024 * 1024  # the most glibc accepts on 64-bit (HEAP_MAX_SIZE / 2)
TRIM_MAX = 64 * 1024 * 1024

_done: bool | None = None


@functools.cache
def _glibc(name: str) -> Any:
    """The C library's function ``name``, or None where it has none (not glibc)."""
    try:
        return getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return None


def keep_freed() -> bool:
    """Set the allocator's thresholds once per process; True when they are set (glibc)."""
    global _done
    if _done is None:
        mallopt = _glibc("mallopt")
        if mallopt is None:
            _done = False
        else:
            mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
            _done = bool(mallopt(M_MMAP_THRESHOLD, MMAP_MAX)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_MAX))
    return _done


def give_back() -> None:
    """Hand the C heap's free pages back to the OS (glibc's ``malloc_trim(0)``; elsewhere nothing).

    Called once a burst is freed: after a metadata fill, each cluster's alert round, and between a
    snapshot's reads, its tables and the drift look (at 1M partitions ~100 MB of the batch worker's
    peak). It walks the free lists once: 0.02 ms idle, ~25 ms after a 200 MB burst."""
    trim = _glibc("malloc_trim")
    if trim is not None:
        trim(0)


_PAGE = os.sysconf("SC_PAGE_SIZE")
_floor = 0  # resident bytes after the last trim_when_grown that gave back


def _resident() -> int:
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[1]) * _PAGE


def trim_when_grown(by: int = TRIM_MAX) -> bool:
    """``give_back`` when the process's resident size grew more than ``by`` bytes since the last
    time this gave back: called after each web request and each task (``console/gunicorn_conf.py``,
    ``tasks/celery.py``), so a heavy page or task (the brokers page's 3M replica sizes at 1M
    partitions, a progress poll) does not leave its peak resident in a process that then idles,
    while a light one costs one read of ``/proc/self/statm`` (~10 us). A process whose live data
    grew (a metadata snapshot kept) gives back once, then counts from its new size. True when it
    gave back."""
    global _floor
    try:
        if _resident() - _floor <= by:
            return False
        give_back()
        _floor = _resident()
    except OSError:  # no /proc: nothing to compare with
        return False
    return True
