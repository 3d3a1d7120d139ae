"""Celery beat's app (``celery -A tasks.beat beat``): the console's schedule and broker settings,
without Django's set-up or the task modules.

Beat only sends the schedule's tasks by name; their routes are names too (``tasks.routing`` looks
a model up only for ``run_operation``, which beat never sends). Started with the workers' app
(``tasks.celery``), beat imported everything a worker does - Django's apps, every area, pyarrow -
and held ~130 MB of its own for it; this app has no Django fix-up and imports no task module, so
beat holds what reading the settings takes.
"""

from __future__ import annotations

from celery import Celery

from tasks.celery import app as workers_app

app = Celery(workers_app.main, fixups=[], set_as_current=False)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = ()
app.conf.beat_schedule = workers_app.conf.beat_schedule
