"""The typed confirmation of a topic delete held for review: checked before the delete is submitted,
as the delete itself checks it when it runs (console/topics/delete.py)."""

from __future__ import annotations

from console.topics.delete import ConfirmationError, delete_confirmation


def check_held_delete(names: list[str], confirmation: str) -> None:
    """Refused unless ``confirmation`` is what the delete asks to type (the name, or the count)."""
    if confirmation.strip() != delete_confirmation(names):
        raise ConfirmationError("The confirmation does not match; nothing was submitted.")
