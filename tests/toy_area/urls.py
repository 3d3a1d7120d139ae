"""The test's route table: the console's, plus one line per web door for the toy area."""

from __future__ import annotations

from django.urls import path

from console.urls import urlpatterns as console_routes
from tests.toy_area import api, pages

urlpatterns = [
    path("api/v1/clusters/<slug:name>/retention/", api.Retention.as_view(), name="retention-api"),
    path("c/<slug:name>/retention/", pages.retention_page, name="retention"),
    *console_routes,
]
