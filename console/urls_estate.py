"""Routes of the estate as code: the page, the export download, plan, submit for approval."""

from __future__ import annotations

from django.urls import path

from console.views import estate

urlpatterns = [
    path("", estate.estate_page, name="estate"),
    path("export/", estate.estate_export, name="estate_export"),
    path("plan/", estate.estate_plan, name="estate_plan"),
    path("submit/", estate.estate_submit, name="estate_submit"),
]
