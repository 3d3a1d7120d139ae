"""The audit action names of the consumer groups area; stored as written."""

from __future__ import annotations

GROUP_OFFSETS_RESET = "group.offsets.reset"
GROUP_OFFSETS_DELETE = "group.offsets.delete"
GROUP_DELETE = "group.delete"
