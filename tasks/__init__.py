"""Celery application, tasks and beat schedule. Tasks are thin: ids in, a service call, nothing else."""

from __future__ import annotations

from tasks.celery import app

__all__ = ["app"]
