"""Routes of the requests area."""

from __future__ import annotations

urlpatterns: list = []
