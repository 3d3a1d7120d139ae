"""Per-cluster topic policy: the console-side create-topic / alter-config limits (like KIP-108/133)."""

from __future__ import annotations

from django.db import models


class TopicPolicy(models.Model):
    """Limits checked before anything reaches Kafka; one row per cluster (no row = the defaults).

    Empty lists mean "no restriction". ``config_ranges`` maps a config key to
    ``{"min": n, "max": n}`` (numbers) or ``{"choices": [...]}``. ``protected_topics`` holds
    regular expressions (full match) of topics that may never be deleted from the console.
    """

    cluster = models.OneToOneField("console.Cluster", on_delete=models.CASCADE, related_name="topic_policy")
    max_partitions = models.PositiveIntegerField(null=True, blank=True)
    allowed_replication_factors = models.JSONField(default=list, blank=True)
    allowed_config_keys = models.JSONField(default=list, blank=True)
    config_ranges = models.JSONField(default=dict, blank=True)
    name_pattern = models.CharField(max_length=500, blank=True)
    protected_topics = models.JSONField(default=list, blank=True)
    max_batch_size = models.PositiveIntegerField(null=True, blank=True)
    # {"<topic-name prefix>": {"required": [config keys], "defaults": {key: value}}}: what a new topic
    # in the namespace must set, and what it gets for the keys it does not set
    namespace_rules = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "topic policies"

    def __str__(self) -> str:
        return f"topic policy of {self.cluster.name}"
