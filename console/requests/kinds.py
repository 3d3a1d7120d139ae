"""The request kinds offered, their values and labels, in one place for the area's modules."""

from __future__ import annotations

from console.changes.queue import LABELS, label
from console.models.requests import RequestKind

__all__ = ["CHOICES", "GROUP_RESET", "LABELS", "VALUES", "label"]

GROUP_RESET = RequestKind.GROUP_OFFSETS_RESET.value

# What a requester may ask for; the "change.*" kinds are operators' actions held by change control.
CHOICES: list[tuple[str, str]] = [c for c in RequestKind.choices if not c[0].startswith("change.")]
VALUES: frozenset[str] = frozenset(value for value, _ in CHOICES)
