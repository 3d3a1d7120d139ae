"""The held kinds: what an area declares for each action change control can hold, and the registry.

An area declares its held kinds in its ``held.py`` (``register(HeldKind(...))``), as it declares
Operation kinds in its ``worker.py``; console/apps.py imports those modules in every process, so
the approval (which reviews again) and the requests worker (which runs) find every kind.

A held kind turns the operator's input into a JSON payload (what will run, exactly) and a review
(what it will do, as the approver sees it: rows of before -> after, Kafka's or the console's dry-run
answer, optional ``facts``). ``review`` is computed again right before running; when its
``pinned`` part (the drift pin) differs from the reviewed one the cluster drifted and the change
goes back for a fresh review. Holding one needs the permission of its policy kind
(``gate.PERMISSIONS``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from console.kafka import KafkaOperationError


class ChangeInvalid(ValueError):
    """The action cannot be held for review as it is (``errors`` are shown on the form)."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Prepared:
    """An action ready to hold: its exact payload, the review the approver sees, a one-line summary."""

    kind: str  # RequestKind value: the held kind
    gate: str  # console.changes.gate.KINDS key: the policy kind that holds it
    resource: str
    payload: dict[str, Any]
    review: dict[str, Any]
    summary: str


@dataclass(frozen=True)
class HeldKind:
    """One held action of an area: ``prepare`` (the operator's input -> Prepared, the dry run),
    ``review`` (actor, cluster, payload -> the review with its ``pinned`` part, computed again at
    approval and before the run), ``run`` (actor, cluster, payload, request_id -> ok, message)."""

    name: str  # RequestKind value
    gate: str | Callable[[Mapping[str, Any]], str]  # the policy kind (or a function of the payload)
    prepare: Callable[..., Prepared]
    review: Callable[[Any, Any, Mapping[str, Any]], dict[str, Any]]
    run: Callable[[Any, Any, Mapping[str, Any], str], tuple[bool, str]]

    def gate_of(self, payload: Mapping[str, Any]) -> str:
        return self.gate(payload) if callable(self.gate) else self.gate


_KINDS: dict[str, HeldKind] = {}


def register(kind: HeldKind) -> HeldKind:
    """Declare a held kind (at import of the area's held.py); declaring it again replaces it."""
    _KINDS[str(kind.name)] = kind
    return kind


def get(name: str) -> HeldKind:
    """The held kind stored with a change request (KeyError: its area's held.py was not loaded)."""
    return _KINDS[str(name)]


def registered() -> dict[str, HeldKind]:
    return dict(_KINDS)


# -- helpers for the areas' reviews ---------------------------------------------------------------


def kafka_text(err: KafkaOperationError) -> str:
    return f"Kafka: {err.name}: {err.operator_text}"


def review(columns, rows, *, ok: bool, kafka: str, pinned, **extra) -> dict[str, Any]:
    """A review as the change page shows it: a table of before -> after, Kafka's (or the
    console's) dry-run answer, and ``pinned``: what must still hold right before the run."""
    return {"columns": list(columns), "rows": rows, "kafka": kafka, "ok": ok, "pinned": pinned, **extra}


def checked(prepared: Prepared) -> Prepared:
    """A prepared action whose dry run refused it cannot be held."""
    if not prepared.review["ok"]:
        raise ChangeInvalid([f"It would not run as it is: {prepared.review['kafka']}"])
    return prepared
