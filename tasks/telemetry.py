"""Telemetry tasks: the snapshot fan-out (beat's dispatcher, one task per cluster) and the Spark pipeline.

Beat's ``collect_snapshots`` only sends: one ``collect_cluster_snapshot(cluster_id)`` per cluster to
the batch queue, where ``BATCH_SLOTS`` run at once (the batch worker's concurrency). Each message
expires after the snapshot interval, so a backlog behind a slow interval is dropped, not piled up:
the next interval's dispatch sends a fresh one. Two tasks for one cluster never snapshot it at once
(a lock in Redis, ``snapshot_lock``); two in one interval are one snapshot (the lake's
``snapshot_exists``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from tasks.celery import app

log = logging.getLogger(__name__)

LOCK_KEY = "console:telemetry:snapshot-lock:{}"
BUSY = "busy"  # the task's answer when another slot is snapshotting the same cluster
REDIS_TIMEOUT_S = 2.0


@app.task(name="tasks.telemetry.collect_snapshots")
def collect_snapshots() -> dict[str, str]:
    """Beat: send one snapshot task per cluster to the batch queue, each expiring after the interval;
    returns {cluster name: task id}."""
    from console.models import Cluster
    from pipeline.config import load

    expires = float(load().snapshot_interval_s)
    return {
        name: collect_cluster_snapshot.apply_async((pk,), expires=expires).id or ""
        for pk, name in Cluster.objects.order_by("pk").values_list("pk", "name")
    }


@app.task(name="tasks.telemetry.collect_cluster_snapshot", acks_late=True)
def collect_cluster_snapshot(cluster_id: int) -> str:
    """One cluster's snapshot in this interval: "ok", "skipped" (taken already, or controller mode),
    "busy" (another slot is taking it), "gone" (the cluster was removed) or why Kafka could not be read."""
    from console.models import Cluster
    from console.telemetry import snapshots
    from pipeline.config import load

    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return "gone"
    with snapshot_lock(cluster_id, ttl_s=load().snapshot_interval_s) as held:
        if not held:
            return BUSY
        result = snapshots.collect_for(cluster)
    return result if isinstance(result, str) else ("skipped" if result.skipped else "ok")


@contextmanager
def snapshot_lock(cluster_id: int, *, ttl_s: float) -> Iterator[bool]:
    """Hold the cluster's snapshot lock (True), or learn another holds it (False).

    A lock in Redis (SET NX with a token and an expiry; redis-py's ``Lock``), not a database row: no
    transaction stays open across the Kafka reads, and a worker killed mid-snapshot leaves a lock that
    expires after ``ttl_s`` (the interval: a snapshot longer than that is already a missed interval).
    When Redis cannot be reached (a direct call; a Celery task arrived through Redis) the snapshot
    runs unlocked: the lake's one-file-per-interval check still applies."""
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S
    )
    lock = client.lock(LOCK_KEY.format(cluster_id), timeout=ttl_s, blocking=False)
    try:
        held = lock.acquire()
    except (redis.RedisError, OSError) as exc:
        log.warning("snapshot lock of cluster %s not taken (%s); snapshotting unlocked", cluster_id, exc)
        held, lock = True, None
    try:
        yield held
    finally:
        if lock is not None and held:
            try:
                lock.release()
            except (redis.RedisError, OSError) as exc:  # expired, or Redis went away: it expires
                log.warning("snapshot lock of cluster %s not released: %s", cluster_id, exc)
        client.close()


@app.task(name="tasks.telemetry.schedule_pipeline_runs")
def schedule_pipeline_runs() -> list[int]:
    """Beat: start a pipeline run for every cluster with snapshots (not while one is in flight)."""
    from console.telemetry import capacity

    return capacity.start_scheduled_runs()
