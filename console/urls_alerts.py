"""Routes of the alerts area, under /c/<name>/alerts/."""

from __future__ import annotations

from django.urls import path

from console.views import alerts

urlpatterns = [
    path("", alerts.alert_list, name="alert_list"),
    path("glance/", alerts.alert_glance, name="alert_glance"),  # the overview's box (htmx)
    path("<int:alert_id>/acknowledge/", alerts.alert_acknowledge, name="alert_acknowledge"),
    path("silences/", alerts.alert_silence_create, name="alert_silence_create"),
    path("silences/<int:silence_id>/end/", alerts.alert_silence_end, name="alert_silence_end"),
    path("rules/<slug:rule>/", alerts.alert_rule_set, name="alert_rule_set"),
]
