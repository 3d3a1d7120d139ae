"""Routes of change windows, under /c/<name>/windows/: the calendar with its forms, and scheduling a
held change (from its page)."""

from __future__ import annotations

from django.urls import path

from console.views import windows

urlpatterns = [
    path("", windows.windows_page, name="windows_page"),
    path("<int:window_id>/end/", windows.window_end, name="window_end"),
    path("settings/", windows.window_settings, name="window_settings"),
    path("schedule/<int:request_id>/", windows.change_schedule, name="change_schedule"),
    path("unschedule/<int:request_id>/", windows.change_unschedule, name="change_unschedule"),
]
