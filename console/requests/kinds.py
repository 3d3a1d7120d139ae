"""The request kinds offered, their values and labels, in one place for the area's modules."""

from __future__ import annotations

from console.models.requests import RequestKind

GROUP_RESET = RequestKind.GROUP_OFFSETS_RESET.value

CHOICES: list[tuple[str, str]] = list(RequestKind.choices)
VALUES: frozenset[str] = frozenset(RequestKind.values)
LABELS: dict[str, str] = dict(CHOICES)


def label(req) -> str:
    """A request's kind as the pages and notifications name it."""
    return LABELS.get(req.kind, req.kind)
