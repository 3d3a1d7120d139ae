"""Drift detection's memory: each cluster's last look at what Kafka holds (issue 37 item 2)."""

from __future__ import annotations

from django.db import models


class DriftBaseline(models.Model):
    """One row per cluster: the state the previous snapshot found (topics with partition count,
    replication factor and overridden configs; ACL bindings), kept compressed (``drift.store`` is the
    only reader and writer of ``state``), and the audit trail's last event id when that look began,
    so the next look knows which of the console's own changes happened in between."""

    cluster = models.OneToOneField("console.Cluster", on_delete=models.CASCADE, related_name="drift_baseline")
    taken_at = models.DateTimeField()
    audit_mark = models.BigIntegerField(default=0)
    state = models.BinaryField()
    topics = models.IntegerField(default=0)
    acls = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"drift baseline of {self.cluster_id} at {self.taken_at:%Y-%m-%d %H:%M:%S}"
