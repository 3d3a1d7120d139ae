"""Change windows (console/windows): per-cluster freeze and maintenance windows, the cluster's
"changes only in maintenance windows" setting, and the scheduled run of an approved held change
(console/changes/schedule.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class WindowKind(models.TextChoices):
    FREEZE = "freeze", "Freeze (no changes, except break glass)"
    MAINTENANCE = "maintenance", "Maintenance window"


class ChangeWindow(models.Model):
    """A freeze or maintenance window of a cluster: one-off (``starts_at`` .. ``ends_at``) or weekly
    (``weekday`` at ``start_time`` for ``duration_min`` minutes in ``time_zone``, from ``starts_at``
    until ``ends_at`` when set). Ending a window early sets ``ended_at``: nothing after it counts."""

    cluster = models.ForeignKey("console.Cluster", on_delete=models.CASCADE, related_name="change_windows")
    kind = models.CharField(max_length=16, choices=WindowKind.choices)
    reason = models.CharField(max_length=500)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField(null=True, blank=True)  # a one-off's end; a weekly one's "until"
    weekday = models.PositiveSmallIntegerField(null=True, blank=True)  # 0 = Monday; None: one-off
    start_time = models.TimeField(null=True, blank=True)
    duration_min = models.PositiveIntegerField(null=True, blank=True)
    time_zone = models.CharField(max_length=64, default="UTC")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by_name = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by_name = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["starts_at", "id"]
        indexes = [models.Index(fields=["cluster", "kind"])]

    def __str__(self) -> str:
        return f"{self.kind} window #{self.pk} on {self.cluster_id}: {self.reason[:40]}"

    @property
    def weekly(self) -> bool:
        return self.weekday is not None


class WindowSettings(models.Model):
    """A cluster's window rule: with ``maintenance_only`` a change may be scheduled (or run from
    an approval) only inside a maintenance window."""

    cluster = models.OneToOneField(
        "console.Cluster", on_delete=models.CASCADE, related_name="window_settings"
    )
    maintenance_only = models.BooleanField(default=False)
    updated_by_name = models.CharField(max_length=150, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"windows of cluster {self.cluster_id}: maintenance only={self.maintenance_only}"


class ScheduleState(models.TextChoices):
    WAITING = "waiting", "Scheduled"
    QUEUED = "queued", "Queued to run"
    REFUSED = "refused", "Refused at its time"
    CANCELLED = "cancelled", "Cancelled"


class ScheduledChange(models.Model):
    """When an approved held change runs: not before ``run_at``. The tick takes it with a
    conditional UPDATE (waiting -> queued), so of two workers only one queues its run; a run refused
    at its time (a freeze began meanwhile) keeps the reason in ``note``."""

    request = models.OneToOneField("console.ChangeRequest", on_delete=models.CASCADE, related_name="schedule")
    run_at = models.DateTimeField(db_index=True)
    state = models.CharField(max_length=16, choices=ScheduleState.choices, default=ScheduleState.WAITING)
    scheduled_by_name = models.CharField(max_length=150)
    taken_by = models.CharField(max_length=128, blank=True)
    note = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run_at", "id"]
        indexes = [models.Index(fields=["state", "run_at"])]

    def __str__(self) -> str:
        return f"change #{self.request_id} at {self.run_at:%Y-%m-%d %H:%M} ({self.state})"
