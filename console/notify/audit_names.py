"""The audit action names of notification channels; stored as written."""

from __future__ import annotations

CHANNEL_CREATE = "notify.channel.create"
CHANNEL_UPDATE = "notify.channel.update"
CHANNEL_DELETE = "notify.channel.delete"
CHANNEL_TEST = "notify.channel.test"  # "requested" when queued, the outcome when delivered or given up
