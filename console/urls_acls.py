"""Routes of the acls area."""

from __future__ import annotations

urlpatterns: list = []
