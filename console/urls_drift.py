"""Routes of drift detection, under /c/<name>/drift/."""

from __future__ import annotations

from django.urls import path

from console.views import drift

urlpatterns = [
    path("recent/", drift.drift_recent, name="drift_recent"),
]
