"""URL routes. Every page hangs under a cluster except login, the cluster registry and home."""

from __future__ import annotations

from django.urls import path

urlpatterns: list = []
