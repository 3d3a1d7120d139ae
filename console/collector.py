"""Pausing Python's cyclic garbage collector while a burst of acyclic objects is alive.

A 10,000-partition plan, a 100,000-partition snapshot or a poll cycle's answers are tens or
hundreds of thousands of small objects that hold no reference cycles. While they are alive,
every young collection promotes the survivors and soon triggers a full collection, which walks
all of them again: measured, a quarter of a reassignment's start and first steps went to
collections that found nothing. Paused, they are freed by reference counting as always; the
collector runs again once the last pause ends.

One process-wide count of pauses (threads of a web process may pause at once): the collector is
disabled by the first and enabled again by the last, and only if it was enabled before. The
gateway's whole-cluster Metadata reads pause through it too, so pauses nest whoever starts them.
Standard library only: every layer, ``console.kafka`` included, may use it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0
_resume = False  # whether the collector was enabled when the first pause began


@contextmanager
def paused(*, collect_young: bool = False) -> Iterator[None]:
    """Collector off for the block (usable as a decorator).

    ``collect_young``: when this pause ends the last one, a collection of the young generations
    (``gc.collect(1)``) moves what the block kept (e.g. a cached snapshot) to the old generation
    in one walk, rather than letting the next young collections walk it twice.
    """
    global _pauses, _resume
    with _lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            resume = _resume and _pauses == 0
            if resume:
                gc.enable()
        if collect_young and resume:
            gc.collect(1)
