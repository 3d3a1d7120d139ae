"""Routes of the brokers area, under /c/<name>/brokers/ (a broker's configs stay under the topics area's
``-/brokers/<id>/``)."""

from __future__ import annotations

from django.urls import path

from console.views import brokers

urlpatterns = [
    path("", brokers.broker_list, name="broker_list"),
    path("<str:broker>/", brokers.broker_detail, name="broker_detail"),
]
