"""A process that has shown many clusters keeps a bounded amount of what it read for them (issue 36):
topic sizes for at most TOPIC_METADATA_CACHE_CLUSTERS clusters, lag-trend files up to a cap whatever
the clusters, and the brokers pages' per-snapshot figures gone with their snapshot."""

from __future__ import annotations

import gc
from datetime import timedelta

from django.utils import timezone

from console.brokers import figures
from console.groups import trend
from console.telemetry import sizes
from pipeline import generate


def test_it_keeps_the_sizes_of_at_most_the_metadata_cap_of_clusters(telemetry_lake, settings, monkeypatch):
    settings.TOPIC_METADATA_CACHE_CLUSTERS = 2
    start = timezone.now() - timedelta(hours=2)
    shape = generate.Shape(topics=2, partitions=1, snapshots=1)
    for name in ("c1", "c2", "c3"):
        generate.write_lake(telemetry_lake, name, shape, start)
    read = []
    real = sizes.read_sizes
    monkeypatch.setattr(sizes, "read_sizes", lambda path: read.append(path.parts[-3]) or real(path))

    for name in ("c1", "c2", "c1", "c3", "c1", "c2"):
        assert set(sizes.latest_sizes(name).topics) == {"topic-000", "topic-001"}
    # c1 read once (kept: read again before c3 came), c2 dropped for c3 and read again, c3 once
    assert read == ["cluster=c1", "cluster=c2", "cluster=c3", "cluster=c2"]


def test_it_keeps_at_most_max_files_of_lag_trend_whatever_the_clusters(telemetry_lake, monkeypatch):
    monkeypatch.setattr(trend, "MAX_FILES", 3)
    start = timezone.now() - timedelta(hours=6)
    shape = generate.Shape(topics=1, partitions=1, snapshots=2, interval_s=3600)
    for name in ("t1", "t2"):
        generate.write_lake(telemetry_lake, name, shape, start)
    read = []
    real = trend._per_group
    monkeypatch.setattr(trend, "_per_group", lambda path: read.append(path) or real(path))

    first = trend.lag_trend("t1", "any")
    second = trend.lag_trend("t2", "any")
    assert (first.snapshots, second.snapshots) == (2, 2) and not first.error and not second.error
    assert len(read) == 4
    trend.lag_trend("t2", "any")  # t2's two files are the newest kept: nothing read again
    assert len(read) == 4
    trend.lag_trend("t1", "any")  # one of t1's files was dropped for the cap: read again
    assert len(read) == 5


class _Snapshot:
    """Stands for a metadata snapshot: figures only keys on its identity and life."""


def test_it_forgets_a_snapshots_figures_when_the_snapshot_is_gone():
    snap = _Snapshot()
    assert figures.per_snapshot(snap, "counts", lambda: [1, 2, 3]) == [1, 2, 3]
    key = (id(snap), "counts")
    assert key in figures._derived
    del snap
    gc.collect()
    assert key not in figures._derived  # before: kept until any later per_snapshot call
