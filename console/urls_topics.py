"""Routes of the topics and configs area, under /c/<name>/topics/.

Broker configs live under ``-/brokers/`` ("-" cannot clash: a topic named "-" has no
"brokers" sub-page).
"""

from __future__ import annotations

from django.urls import path

from console.views import configs, topics

urlpatterns = [
    path("", topics.topic_list, name="topic_list"),
    path("-/new/", topics.topic_create, name="topic_create"),
    path("-/batch/", topics.topic_batch_create, name="topic_batch_create"),
    path("-/delete/", topics.topic_delete, name="topic_delete"),
    path("-/policy/", topics.topic_policy, name="topic_policy"),
    path("-/brokers/", configs.broker_configs, name="broker_configs_default"),
    path("-/brokers/<str:broker>/", configs.broker_configs, name="broker_configs"),
    path("<str:topic>/", topics.topic_detail, name="topic_detail"),
    path("<str:topic>/partitions/", topics.topic_add_partitions, name="topic_add_partitions"),
    path("<str:topic>/configs/", configs.topic_configs, name="topic_configs"),
]
