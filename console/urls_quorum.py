"""Routes of the KRaft quorum and controller area."""

from __future__ import annotations

from django.urls import path

from console.views import kraft, quorum

urlpatterns = [
    path("", quorum.quorum_page, name="quorum_page"),
    path("controllers/<int:node_id>/", quorum.controller_detail, name="controller_detail"),
    path("features/", kraft.kraft_features, name="quorum_features"),
    path("voters/", kraft.kraft_voters, name="quorum_voters"),
    path("unregister/<int:broker_id>/", kraft.broker_unregister, name="broker_unregister"),
]
