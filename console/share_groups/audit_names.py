"""The audit action names of the share groups area; stored as written."""

from __future__ import annotations

SHARE_OFFSETS_RESET = "share_group.offsets.reset"
SHARE_OFFSETS_DELETE = "share_group.offsets.delete"
SHARE_GROUP_DELETE = "share_group.delete"
