"""Reassignments: the plan and per-partition progress rows, and the ledger of throttles they set."""

from __future__ import annotations

import json

import orjson
from django.db import models


class FastJSONEncoder(json.JSONEncoder):
    """Writes a JSON field's value with orjson (C) instead of the stdlib's pure-Python encoder:
    ``Reassignment.live`` holds every moving partition's progress and is rewritten each poll cycle
    (10,000 partitions: ~60 ms of a cycle's ~350 ms in the stdlib, ~5 ms here). The same JSON
    for what the console stores (integer keys become strings, as the stdlib writes them); non-ASCII
    text is written as UTF-8 rather than escaped, which every JSON reader reads the same."""

    def encode(self, o):
        return orjson.dumps(o, option=orjson.OPT_NON_STR_KEYS).decode()


class Stage(models.TextChoices):
    """Where a reassignment's worker is; each stage converges when re-entered after a crash."""

    THROTTLING = "throttling", "Setting throttles"
    SUBMITTING = "submitting", "Submitting"
    MOVING = "moving", "Moving"
    CANCELLING = "cancelling", "Cancelling"
    FINISHED = "finished", "Finished"


class Reassignment(models.Model):
    """One console reassignment: its Operation, throttle and totals (the poller's summary)."""

    operation = models.OneToOneField(
        "console.Operation", on_delete=models.CASCADE, related_name="reassignment"
    )
    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="reassignments")
    throttle_bytes_per_s = models.BigIntegerField(null=True, blank=True)  # None: not throttled
    # Paced moves (issue 39): separate leader / follower rates (None: ``throttle_bytes_per_s``), per-broker
    # overrides of both ({"3": bytes/s}), at most N partitions in flight per broker (None: all at once)
    # and whether submitting is paused. The queue is the rows still pending, in id (plan) order.
    leader_throttle_bytes_per_s = models.BigIntegerField(null=True, blank=True)
    follower_throttle_bytes_per_s = models.BigIntegerField(null=True, blank=True)
    broker_throttles = models.JSONField(default=dict, blank=True)
    max_moves_per_broker = models.PositiveIntegerField(null=True, blank=True)
    paused = models.BooleanField(default=False)
    elect_preferred = models.BooleanField(default=False)
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.THROTTLING, db_index=True)
    cancel_requested = models.BooleanField(default=False)
    bytes_total = models.BigIntegerField(default=0)
    bytes_done = models.BigIntegerField(default=0)
    rate_bytes_per_s = models.FloatField(default=0.0)
    partitions_total = models.PositiveIntegerField(default=0)
    partitions_done = models.PositiveIntegerField(default=0)
    polls = models.PositiveIntegerField(default=0)
    last_poll_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    throttles_removed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, blank=True)  # succeeded / diverged / cancelled / failed
    # The poller's latest per-partition progress of the moving partitions, written in one UPDATE
    # per cycle: {"topic|partition": [bytes_total, bytes_done, [{broker, status, bytes, new}]]}.
    # Partition rows are written only when their state changes (10,000 rows per second would not be).
    live = models.JSONField(default=dict, blank=True, encoder=FastJSONEncoder)
    # Leader offsets of the moving partitions for the "~N messages" estimates, read every
    # OFFSETS_EVERY_S: {"topic|partition": [log start, log end], "_at": epoch s}.
    offsets = models.JSONField(default=dict, blank=True)
    # [[epoch s, bytes done], ...] over the last REASSIGN_RATE_WINDOW_S: the smoothed rate's samples.
    rate_samples = models.JSONField(default=list, blank=True)
    # The highest overall percentage shown so far: the bar never goes backwards.
    percent_high = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"reassignment #{self.pk} ({self.stage})"

    @property
    def throttled(self) -> bool:
        """Whether the move sets replication throttles at all (any of its rates)."""
        return bool(
            self.throttle_bytes_per_s
            or self.leader_throttle_bytes_per_s
            or self.follower_throttle_bytes_per_s
            or self.broker_throttles
        )

    @property
    def paced(self) -> bool:
        """At most ``max_moves_per_broker`` partitions in flight per broker; the rest queued."""
        return self.max_moves_per_broker is not None

    @property
    def percent(self) -> int:
        """Bytes done of bytes to move, never below what was shown before (see ``percent_high``)."""
        if self.bytes_total <= 0:
            now = 100 if self.partitions_total and self.partitions_done >= self.partitions_total else 0
        else:
            now = min(100, round(100 * self.bytes_done / self.bytes_total))
        return max(now, self.percent_high)


class PartitionState(models.TextChoices):
    PENDING = "pending", "Pending"
    REFUSED = "refused", "Refused"
    MOVING = "moving", "Moving"
    DONE = "done", "Done"
    DIVERGED = "diverged", "Diverged"
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"


OPEN_PARTITION_STATES = (PartitionState.PENDING, PartitionState.MOVING)


class ReassignmentPartition(models.Model):
    """A moving partition: original and target replicas, bytes copied, KIP-179 state per new replica."""

    reassignment = models.ForeignKey(Reassignment, on_delete=models.CASCADE, related_name="partitions")
    topic = models.CharField(max_length=249)
    partition = models.PositiveIntegerField()
    original = models.JSONField(default=list)
    target = models.JSONField(default=list)
    state = models.CharField(max_length=16, choices=PartitionState.choices, default=PartitionState.PENDING)
    bytes_total = models.BigIntegerField(default=0)
    bytes_done = models.BigIntegerField(default=0)
    # [{"broker": 4, "status": "Behind: ~120 messages / 1.2 MB", "bytes": 123, "in_isr": false}]
    replicas = models.JSONField(default=list, blank=True)
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["topic", "partition"]
        constraints = [
            models.UniqueConstraint(
                fields=["reassignment", "topic", "partition"], name="uniq_reassign_partition"
            )
        ]
        indexes = [
            models.Index(fields=["reassignment", "state"], name="reassign_part_state"),
            # which reassignments hold a given partition (the submit-time conflict check)
            models.Index(fields=["topic", "partition"], name="reassign_part_tp"),
        ]

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}: {self.state}"

    @property
    def percent(self) -> int:
        if self.state == PartitionState.DONE:
            return 100
        if self.bytes_total <= 0:
            return 0
        return min(100, round(100 * self.bytes_done / self.bytes_total))


class EntryState(models.TextChoices):
    RECORDED = "recorded", "Recorded (not yet set)"
    SET = "set", "Set"
    REMOVED = "removed", "Removed or restored"
    LEFT = "left", "Left in place (changed by someone else)"
    FAILED = "failed", "Removal failed"


# Entries whose config may still be on Kafka: the ledger owes their removal (or restore).
OWED_STATES = (EntryState.RECORDED, EntryState.SET)


class ThrottleEntry(models.Model):
    """The throttle ledger: one config a reassignment sets, written before it is set.

    ``previous`` is the value before we touched it (None: unset). For the throttled-replicas
    lists ``added`` holds the entries we added, so removal takes back only ours.
    """

    # PROTECT: the ledger is what lets anyone take a throttle back, so nothing deletes it in
    # passing (removing a cluster with owed throttles is refused; see clusters.remove_cluster).
    reassignment = models.ForeignKey(Reassignment, on_delete=models.PROTECT, related_name="throttles")
    cluster = models.ForeignKey("console.Cluster", on_delete=models.PROTECT, related_name="+")
    resource_type = models.CharField(max_length=8)  # TOPIC or BROKER
    resource_name = models.CharField(max_length=249)
    config = models.CharField(max_length=64)
    value = models.TextField()
    previous = models.JSONField(null=True, blank=True)  # a string, or null when it was unset
    added = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=16, choices=EntryState.choices, default=EntryState.RECORDED)
    message = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["reassignment", "resource_type", "resource_name", "config"],
                name="uniq_throttle_entry",
            )
        ]
        indexes = [models.Index(fields=["cluster", "state"], name="throttle_cluster_state")]

    def __str__(self) -> str:
        return f"{self.resource_type} {self.resource_name} {self.config}={self.value} ({self.state})"
