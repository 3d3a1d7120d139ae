"""Long-running admin work: an Operation row per job and an OperationItem per resource."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class OperationState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    # The runner gave up: a step kept failing past OPERATION_MAX_ATTEMPTS (or the kind is unknown).
    ERRORED = "errored", "Errored"


FINISHED_STATES = (
    OperationState.SUCCEEDED,
    OperationState.FAILED,
    OperationState.CANCELLED,
    OperationState.ERRORED,
)


class Operation(models.Model):
    """A job a worker runs step by step; its rows are the truth about progress, not Celery's."""

    kind = models.CharField(max_length=64, db_index=True)
    cluster = models.ForeignKey(
        "console.Cluster", null=True, blank=True, on_delete=models.SET_NULL, related_name="operations"
    )
    state = models.CharField(
        max_length=16, choices=OperationState.choices, default=OperationState.PENDING, db_index=True
    )
    params = models.JSONField(default=dict)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    progress = models.FloatField(default=0.0)  # 0..1
    progress_text = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    celery_task_id = models.CharField(max_length=64, blank=True)
    # Empty while nobody holds it (pending, or running but waiting for its next poll or retry).
    claimed_by = models.CharField(max_length=128, blank=True)
    # Failed attempts of the current step (a crash counts when the claim is recovered); reset
    # when a step completes. The runner gives up at settings.OPERATION_MAX_ATTEMPTS.
    attempts = models.PositiveIntegerField(default=0)
    # The runner's place: which path ("run" or "cancel") and the index of the next step on it.
    path = models.CharField(max_length=8, default="run")
    step = models.PositiveIntegerField(default=0)
    # When the operation may run next (a poll interval or a retry's backoff); null: at once.
    next_run_at = models.DateTimeField(null=True, blank=True, db_index=True)
    cancel_requested = models.BooleanField(default=False)
    last_error = models.TextField(blank=True)  # the latest failed attempt's error, while retrying
    # What steps hand to later steps (e.g. the health check's per-check outcomes), saved with the step.
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"operation #{self.pk} {self.kind} ({self.state})"

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES

    @property
    def percent(self) -> int:
        return round(max(0.0, min(1.0, self.progress)) * 100)


class OperationItem(models.Model):
    """One resource inside an operation (a topic, a partition, a binding) with its own outcome."""

    operation = models.ForeignKey(Operation, on_delete=models.CASCADE, related_name="items")
    resource = models.CharField(max_length=300)
    state = models.CharField(max_length=16, choices=OperationState.choices, default=OperationState.PENDING)
    progress = models.FloatField(default=0.0)
    message = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["operation", "resource"], name="uniq_item_per_op")]

    def __str__(self) -> str:
        return f"{self.resource}: {self.state}"
