"""What a change of many items answers: each item's outcome, and the counts every door shows
(pages, API, CLI). Pure Python: an area's result dataclass adds its ``outcomes`` field."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar


class _Outcome(Protocol):
    ok: bool


OutcomeT = TypeVar("OutcomeT", bound=_Outcome)


class BatchOutcomes(Generic[OutcomeT]):
    """A base for a frozen dataclass with ``outcomes``: one per item, each ``ok`` or not."""

    outcomes: Sequence[OutcomeT]

    @property
    def ok_count(self) -> int:
        return sum(o.ok for o in self.outcomes)

    @property
    def failed(self) -> list[OutcomeT]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def all_ok(self) -> bool:
        return bool(self.outcomes) and not self.failed
