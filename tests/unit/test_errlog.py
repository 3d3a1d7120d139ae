"""Repeated Kafka connection errors: the first logged, the rest counted, one line when it recovers."""

from __future__ import annotations

import logging

import pytest

from console.kafka.errlog import RUNS, ErrorRuns
from console.telemetry.snapshots import collect_all_snapshots

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_open_runs():
    RUNS.clear()
    yield
    RUNS.clear()


def test_it_logs_a_run_of_errors_once_then_the_recovery_with_the_count(caplog):
    runs = ErrorRuns(logging.getLogger("test.errlog"), reminder_s=3600)
    caplog.set_level(logging.INFO, logger="test.errlog")
    assert runs.failed("Kafka brokers h:1", "describe_cluster failed with NETWORK_EXCEPTION")
    for _ in range(99):
        assert not runs.failed("Kafka brokers h:1", "topic_health failed with REQUEST_TIMED_OUT")
    assert runs.open_runs() == {"Kafka brokers h:1": 100}
    assert runs.recovered("Kafka brokers h:1")
    assert not runs.recovered("Kafka brokers h:1")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            "Kafka brokers h:1: describe_cluster failed with NETWORK_EXCEPTION "
            "(repeats are counted, not logged; until it recovers)",
        ),
        (
            "INFO",
            "Kafka brokers h:1: recovered after 100 errors over 0 s (last: topic_health failed with REQUEST_TIMED_OUT)",
        ),
    ]


def test_it_reminds_of_a_run_still_failing_once_per_reminder_period(caplog):
    runs = ErrorRuns(logging.getLogger("test.errlog"), reminder_s=0)
    caplog.set_level(logging.INFO, logger="test.errlog")
    runs.failed("k", "a")
    runs.failed("k", "b")
    assert [r.getMessage() for r in caplog.records] == [
        "k: a (repeats are counted, not logged; until it recovers)",
        "k: still failing, 2 errors in 0 s; latest: b",
    ]


def test_it_logs_an_unreachable_cluster_once_over_many_telemetry_ticks(offline_cluster, caplog):
    """Beat's telemetry tick logged a warning per cluster per tick for as long as Kafka was down."""
    caplog.set_level(logging.INFO)
    for _ in range(5):
        assert "offline" in collect_all_snapshots()
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    # kafka-python's own lines follow their own rule (each kind once, a reminder every 600 s, process-wide):
    # whether one shows here depends on what earlier tests logged, so they are checked apart.
    library = [r.getMessage() for r in loud if r.name.startswith("kafka.")]
    assert len(library) == len(set(library)), library
    warnings = sorted(r.getMessage() for r in loud if not r.name.startswith("kafka."))
    assert len(warnings) == 2, warnings  # the cluster's run (its gateway calls), the tick's run
    assert warnings[0].startswith("Kafka brokers 127.0.0.1:1: ")
    assert warnings[1].startswith("telemetry snapshot of offline: failed: ")
    assert RUNS.open_runs()["telemetry snapshot of offline"] == 5
