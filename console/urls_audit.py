"""Routes of the audit area."""

from __future__ import annotations

urlpatterns: list = []
