"""Routes of the purge area under /c/<name>/: a topic's purge page (beside the topic's other pages)."""

from __future__ import annotations

from django.urls import path

from console.views import purge

urlpatterns = [
    path("topics/<str:topic>/purge/", purge.purge_page, name="topic_purge"),
]
