"""console.kafka.heap.give_back: a freed burst's pages go back to the OS."""

from __future__ import annotations

import os

from console.kafka import heap


def _resident_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def test_give_back_returns_a_freed_bursts_pages_to_the_os():
    """200 MB of 1 KB objects freed while every 50th survives among them: the heap keeps the pages
    resident (nothing at its top to trim) until ``give_back``."""
    burst = [bytes(1000) + i.to_bytes(4, "big") for i in range(200_000)]
    kept = burst[::50]
    del burst
    freed = _resident_mb()
    heap.give_back()
    assert freed - _resident_mb() > 100, "the freed burst's pages are still resident"
    assert len(kept) == 4000


def test_trim_when_grown_gives_back_once_the_process_grew_and_not_after_a_light_call(monkeypatch):
    heap.trim_when_grown(by=0)  # counts from here
    assert heap.trim_when_grown(by=64 * 1024 * 1024) is False  # nothing grew since
    burst = [bytes(1000) + i.to_bytes(4, "big") for i in range(200_000)]
    kept = burst[::50]
    del burst
    grown = _resident_mb()
    assert heap.trim_when_grown(by=64 * 1024 * 1024) is True
    assert grown - _resident_mb() > 100, "the freed burst's pages are still resident"
    assert heap.trim_when_grown(by=64 * 1024 * 1024) is False  # counts from the size it came down to
    assert len(kept) == 4000


def test_each_web_request_and_each_task_ends_with_trim_when_grown(monkeypatch):
    from celery.signals import task_postrun

    import console.gunicorn_conf as conf
    import tasks.celery  # noqa: F401 - connects its task_postrun receiver

    calls = []
    monkeypatch.setattr(heap, "trim_when_grown", lambda: calls.append(1) or False)
    conf.post_request(None, None, {}, None)
    task_postrun.send(sender=None, task_id="t", task=None)
    assert calls == [1, 1]
