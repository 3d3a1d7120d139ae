"""The request kinds offered, their values and labels, in one place for the area's modules."""

from __future__ import annotations

from console.models.requests import RequestKind

GROUP_RESET = RequestKind.GROUP_OFFSETS_RESET.value

# What a requester may ask for; the "change.*" kinds are operators' actions held by change control.
CHOICES: list[tuple[str, str]] = [c for c in RequestKind.choices if not c[0].startswith("change.")]
VALUES: frozenset[str] = frozenset(value for value, _ in CHOICES)
LABELS: dict[str, str] = dict(RequestKind.choices)


def label(req) -> str:
    """A request's kind as the pages and notifications name it."""
    return LABELS.get(req.kind, req.kind)
