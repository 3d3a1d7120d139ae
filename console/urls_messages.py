"""Routes of the messages area under /c/<name>/: a topic's message browser and produce form (beside the
topic's other pages) and the cluster's data-access page (grants and masking rules)."""

from __future__ import annotations

from django.urls import path

from console.views import messages

urlpatterns = [
    path("topics/<str:topic>/messages/", messages.messages_page, name="messages"),
    path("topics/<str:topic>/messages/produce/", messages.messages_produce, name="messages_produce"),
    path("data-access/", messages.data_access_page, name="data_access"),
    path("data-access/grants/<int:grant_id>/remove/", messages.data_grant_remove, name="data_grant_remove"),
    path("data-access/rules/<int:rule_id>/remove/", messages.masking_rule_remove, name="masking_rule_remove"),
]
