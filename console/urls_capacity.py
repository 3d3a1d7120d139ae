"""Routes of the capacity area."""

from __future__ import annotations

urlpatterns: list = []
