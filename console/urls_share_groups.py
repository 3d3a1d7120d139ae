"""Routes of the share groups area under /c/<name>/share-groups/: the list, a group, its reset and
its deletion (of the group, or of its offsets of topics)."""

from __future__ import annotations

from django.urls import path

from console.views import share_groups

urlpatterns = [
    path("", share_groups.share_groups_page, name="share_groups"),
    path("g/<str:group_id>/", share_groups.share_group_detail, name="share_group"),
    path("g/<str:group_id>/reset/", share_groups.share_group_reset, name="share_group_reset"),
    path("g/<str:group_id>/delete/", share_groups.share_group_delete, name="share_group_delete"),
]
