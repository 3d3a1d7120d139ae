"""Routes of the client quotas area, under /c/<name>/quotas/."""

from __future__ import annotations

from django.urls import path

from console.views import quotas

urlpatterns = [
    path("", quotas.quotas_page, name="quotas"),
]
