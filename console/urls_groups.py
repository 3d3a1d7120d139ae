"""Routes of the consumer groups area, under /c/<name>/groups/.

A group id may hold any character, "/" included, so it is a ``path`` segment; the group's own
pages end in ``/-/<action>/`` ("-" is never a Kafka-made path segment of ours). The topic page's
section lives under ``-/topic/<topic>/``.
"""

from __future__ import annotations

from django.urls import path

from console.views import groups

urlpatterns = [
    path("", groups.group_list, name="group_list"),
    path("-/topic/<str:topic>/", groups.group_topic_consumers, name="group_topic_consumers"),
    path("<path:group>/-/reset/", groups.group_reset, name="group_reset"),
    path("<path:group>/-/delete/", groups.group_delete, name="group_delete"),
    path("<path:group>/-/offsets/delete/", groups.group_offsets_delete, name="group_offsets_delete"),
    path("<path:group>/", groups.group_detail, name="group_detail"),
]
