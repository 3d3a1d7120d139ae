"""Routes of the KRaft quorum and controller area."""

from __future__ import annotations

from django.urls import path

from console.views import quorum

urlpatterns = [
    path("", quorum.quorum_page, name="quorum_page"),
    path("controllers/<int:node_id>/", quorum.controller_detail, name="controller_detail"),
]
