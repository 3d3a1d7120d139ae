"""console.collector: the cyclic collector paused while plan-sized bursts of objects are alive."""

from __future__ import annotations

import gc
import threading

import pytest

from console import collector


@pytest.fixture(autouse=True)
def _collector_on():
    gc.enable()
    yield
    assert collector._pauses == 0
    gc.enable()


def test_a_pause_disables_and_restores():
    with collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with collector.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_nested_pauses_resume_only_at_the_last():
    with collector.paused():
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()


def test_an_exception_still_resumes():
    with pytest.raises(KeyError), collector.paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_as_a_decorator_each_call_pauses():
    seen = []

    @collector.paused()
    def work(n):
        seen.append((n, gc.isenabled()))
        return n * 2

    assert work(1) == 2 and work(2) == 4
    assert seen == [(1, False), (2, False)]
    assert gc.isenabled()


def test_overlapping_pauses_in_threads():
    """Thread A pauses, B pauses, A ends while B still runs: the collector stays off until B ends."""
    a_in, b_in, a_out, b_go = (threading.Event() for _ in range(4))
    states = {}

    def a():
        with collector.paused():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b():
        a_in.wait(5)
        with collector.paused():
            b_in.set()
            a_out.wait(5)
            states["after A ended"] = gc.isenabled()
            b_go.wait(5)

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    a_out.wait(5)
    b_go.set()
    for t in threads:
        t.join(5)
    assert states == {"after A ended": False}
    assert gc.isenabled()


def test_collect_young_only_when_the_collector_resumes(monkeypatch):
    calls = []
    monkeypatch.setattr(collector.gc, "collect", lambda gen=2: calls.append(gen))
    with collector.paused():
        with collector.paused(collect_young=True):
            pass
        assert calls == []  # still paused by the outer block: nothing moved yet
    with collector.paused(collect_young=True):
        pass
    assert calls == [1]
    gc.disable()
    with collector.paused(collect_young=True):
        pass
    assert calls == [1]  # the collector was off before: left as it was
