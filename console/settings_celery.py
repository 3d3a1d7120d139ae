"""Celery settings (imported by ``console/settings.py``): the broker and the queues split by latency.

Three queues, so a long task never sits in front of a short one (docs/scaling.md):

* ``poll``  - beat's 1 s operation tick (reassignment progress polls, waits that are due), the
  throttle janitor, the re-dispatch of lost operations: short, frequent, latency-bound.
* ``admin`` - the steps of operations (reassignments, elections, requests, health checks),
  notification deliveries, the audit outcome reconciler: seconds of Kafka calls each.
* ``batch`` - telemetry snapshots (one task per cluster, ``BATCH_SLOTS`` at once) and the Spark
  pipeline (``pipeline.run`` operations, and ``audit.verify``, the full chain re-verification):
  minutes, CPU- and memory-bound.

Every task is routed here by name; ``tasks.operations.run_operation`` goes to the queue of its
operation's kind (``OPERATION_QUEUES``, the rest to ``admin``) through ``tasks.routing``.
"""

from __future__ import annotations

import os

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6390/0")
CELERY_BROKER_URL = REDIS_URL
# No results are kept by default (progress is rows); a deployment or a test may name a backend.
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}

QUEUE_POLL, QUEUE_ADMIN, QUEUE_BATCH = "poll", "admin", "batch"
WORKER_QUEUES = (QUEUE_POLL, QUEUE_ADMIN, QUEUE_BATCH)  # what `make run` starts workers for
# A task nobody routed would land here rather than on a queue no worker reads.
CELERY_TASK_DEFAULT_QUEUE = QUEUE_ADMIN
# The batch worker's slots (its --concurrency in `make run`): snapshots fan out one task per cluster,
# so this many clusters are snapshotted at once (docs/scaling.md).
BATCH_SLOTS = max(1, int(os.environ.get("BATCH_SLOTS", "2")))
# The poll worker runs each tick's due operations on this many threads (they mostly wait on Kafka).
POLL_THREADS = max(1, int(os.environ.get("POLL_THREADS", "4")))
# Operation kinds whose run is batch work; every other kind runs on "admin".
OPERATION_QUEUES = {"pipeline.run": QUEUE_BATCH, "audit.verify": QUEUE_BATCH}
CELERY_TASK_ROUTES = (
    "tasks.routing.route_operation",  # run_operation: by its operation's kind
    {
        "tasks.operations.tick": {"queue": QUEUE_POLL},
        "tasks.operations.requeue_pending": {"queue": QUEUE_POLL},
        "tasks.reassignment.sweep_throttles": {"queue": QUEUE_POLL},
        "tasks.windows.tick": {"queue": QUEUE_POLL},  # starts the scheduled changes that are due
        "tasks.alerts.evaluate": {"queue": QUEUE_POLL},  # hands clusters to its own threads at once
        "tasks.operations.run_operation": {"queue": QUEUE_ADMIN},
        "tasks.notify.deliver": {"queue": QUEUE_ADMIN},
        "tasks.notify.tick": {"queue": QUEUE_ADMIN},
        "tasks.audit.reconcile_outcomes": {"queue": QUEUE_ADMIN},
        "tasks.telemetry.collect_snapshots": {"queue": QUEUE_BATCH},
        "tasks.telemetry.collect_cluster_snapshot": {"queue": QUEUE_BATCH},
        "tasks.telemetry.schedule_pipeline_runs": {"queue": QUEUE_BATCH},
    },
)
