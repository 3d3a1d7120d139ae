"""What every held action kind is made of: its prepared form (payload + review) and its handler."""

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
    kind: str  # RequestKind value
    gate: str  # console.changes.gate.KINDS key
    resource: str
    payload: dict[str, Any]
    review: dict[str, Any]
    summary: str


@dataclass(frozen=True)
class Handler:
    gate: str | Callable[[Mapping[str, Any]], str]  # the gate kind (or a function of the payload)
    review: Callable[[Any, Any, Mapping[str, Any]], dict[str, Any]]  # (actor, cluster, payload)
    run: Callable[
        [Any, Any, Mapping[str, Any], str], tuple[bool, str]
    ]  # (actor, cluster, payload, request_id)

    def gate_of(self, payload: Mapping[str, Any]) -> str:
        return self.gate(payload) if callable(self.gate) else self.gate


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
