"""The request kinds offered: the model's ``RequestKind`` and the kinds this area adds to it.

``group.offsets.reset`` is not (yet) one of ``RequestKind``'s choices: the column is a plain string
and Django shows a value outside the choices as itself, so the label is looked up here. Once the
model lists it, this adds nothing.
"""

from __future__ import annotations

from console.models.requests import RequestKind

GROUP_RESET = "group.offsets.reset"
_ADDED = ((GROUP_RESET, "Consumer group offset reset"),)

CHOICES: list[tuple[str, str]] = [
    *RequestKind.choices,
    *((value, label) for value, label in _ADDED if value not in RequestKind.values),
]
VALUES: frozenset[str] = frozenset(value for value, _ in CHOICES)
LABELS: dict[str, str] = dict(CHOICES)


def label(req) -> str:
    """A request's kind as the pages and notifications name it."""
    return LABELS.get(req.kind, req.kind)
