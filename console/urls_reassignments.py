"""Routes of the reassignments area."""

from __future__ import annotations

urlpatterns: list = []
