"""Celery application, tasks and beat schedule."""
