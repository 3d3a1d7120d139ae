"""Routes of the requests area, under /c/<name>/requests/."""

from __future__ import annotations

from django.urls import path

from console.views import changes, requests

urlpatterns = [
    path("", requests.request_list, name="request_list"),
    path("new/", requests.request_new, name="request_new"),
    path("rules/", requests.request_rules, name="request_rules"),
    path("change-control/", changes.change_policy, name="change_policy"),
    path("<int:request_id>/", requests.request_detail, name="request_detail"),
    path("<int:request_id>/status/", requests.request_status, name="request_status"),
    path("<int:request_id>/approve/", requests.request_approve, name="request_approve"),
    path("<int:request_id>/reject/", requests.request_reject, name="request_reject"),
    path("<int:request_id>/cancel/", requests.request_cancel, name="request_cancel"),
]
