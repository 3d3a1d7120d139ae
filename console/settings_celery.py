"""Celery settings (imported by ``console/settings.py``): the Redis broker and how tasks are taken."""

from __future__ import annotations

import os

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6390/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
