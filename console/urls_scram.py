"""Routes of the SCRAM users area, under /c/<name>/scram-users/."""

from __future__ import annotations

from django.urls import path

from console.views import scram

urlpatterns = [
    path("", scram.scram_users, name="scram_users"),
    path("delete/", scram.scram_delete, name="scram_delete"),
]
