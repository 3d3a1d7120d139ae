"""The audit action names of change windows; stored as written."""

from __future__ import annotations

WINDOW_CREATE = "window.create"
WINDOW_END = "window.end"
WINDOW_SETTINGS = "window.settings.update"
