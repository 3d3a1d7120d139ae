"""Routes of the KRaft quorum and controller area."""

from __future__ import annotations

urlpatterns: list = []
