"""Routes of the reassignments area (under /c/<name>/reassignments/)."""

from __future__ import annotations

from django.urls import path

from console.views import elections
from console.views import reassignment as views

urlpatterns = [
    path("", views.reassign_list, name="reassign_list"),
    path("new/", views.reassign_new, name="reassign_new"),
    path("export/", views.reassign_export, name="reassign_export"),
    path("external/cancel/", views.reassign_external_cancel, name="reassign_external_cancel"),
    path("throttles/", elections.throttle_list, name="throttle_list"),
    path("throttles/cleanup/", elections.throttle_cleanup, name="throttle_cleanup"),
    path("elections/", elections.election_page, name="election_page"),
    path("<int:rid>/", views.reassign_detail, name="reassign_detail"),
    path("<int:rid>/progress/", views.reassign_progress, name="reassign_progress"),
    path("<int:rid>/throttle/", views.reassign_throttle, name="reassign_throttle"),
    path("<int:rid>/cancel/", views.reassign_cancel, name="reassign_cancel"),
    path("<int:rid>/pause/", views.reassign_pause, name="reassign_pause"),
    path("<int:rid>/resume/", views.reassign_resume, name="reassign_resume"),
    path("<int:rid>/rollback/", views.reassign_rollback, name="reassign_rollback"),
]
