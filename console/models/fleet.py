"""The fleet: each cluster's latest summary, written when a snapshot is taken and read by the fleet
home, the API and ``manage.py kafka fleet`` without a call to Kafka."""

from __future__ import annotations

from django.db import models


class ClusterSummary(models.Model):
    """One row per cluster: what its latest look at Kafka found (or why Kafka could not be reached).

    ``principals`` is the ACL principals seen then, as ``[[principal, acl_count], ...]`` (the
    cross-cluster search finds principals here; topics and groups it reads from the lake)."""

    cluster = models.OneToOneField("console.Cluster", on_delete=models.CASCADE, related_name="summary")
    taken_at = models.DateTimeField()
    reachable = models.BooleanField(default=False)
    error = models.CharField(max_length=500, blank=True)
    kafka_version = models.CharField(max_length=32, blank=True)
    metadata_version = models.CharField(max_length=32, blank=True)
    controller_id = models.IntegerField(null=True, blank=True)
    brokers_up = models.IntegerField(default=0)
    brokers_total = models.IntegerField(default=0)
    topics = models.IntegerField(default=0)
    partitions = models.IntegerField(default=0)
    under_replicated = models.IntegerField(default=0)
    offline = models.IntegerField(default=0)
    under_min_isr = models.IntegerField(default=0)
    # the topics with the most partitions under min ISR then, [[topic, partitions], ...], most first
    under_min_isr_topics = models.JSONField(default=list, blank=True)
    consumer_groups = models.IntegerField(null=True, blank=True)
    principals = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"summary of {self.cluster_id} at {self.taken_at:%Y-%m-%d %H:%M:%S}"
