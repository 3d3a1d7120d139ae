"""Routes of the capacity area."""

from __future__ import annotations

from django.urls import path

from console.views import capacity

urlpatterns = [
    path("", capacity.capacity_overview, name="capacity"),
    path("run/", capacity.capacity_run, name="capacity_run"),
    path("snapshot/", capacity.capacity_snapshot, name="capacity_snapshot"),
]
