"""The audit action names of Operations: the kind, then the stage (``reassignment.requested``,
``topic.batch.cancel``, ``reassignment.succeeded``); stored as written."""

from __future__ import annotations

REQUESTED = "requested"
CANCEL = "cancel"
REOPENED = "reopened"  # the runner picked an ended operation up again to reconcile it from Kafka


def of(kind: str, stage: str) -> str:
    """The action of ``kind`` at ``stage`` (one of the above, or the state it ended in)."""
    return f"{kind}.{stage}"
