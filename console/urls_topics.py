"""Routes of the topics and configs area, under /c/<name>/topics/."""

from __future__ import annotations

urlpatterns: list = []
