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

A requester's self-service request is the same held kind asked for under the requester policy:
``Requested`` names the stored request kind (``topic.create``, ...), its check (namespaces,
console policy, Kafka validate-only) and how its stored payload reads as the held kind's. The
``request.execute`` worker runs both through ``get(kind).run``: one table, one run per action.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from console import access
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


class Indeterminate(Exception):
    """Kafka did not answer in time: the change may or may not have happened. The runner retries;
    the re-run converges ("already exists" or "already has the partitions" is success)."""


@dataclass(frozen=True)
class Checked:
    """A self-service request as it is stored: the clean payload, its resource and a summary."""

    resource: str
    payload: dict[str, Any]
    summary: str


@dataclass(frozen=True)
class Requested:
    """A held kind as a requester asks for it: ``name`` the stored request kind, ``check``
    (requester, cluster, payload, *, approving -> Checked; ChangeInvalid naming every problem)
    the requester policy, ``as_held`` the stored payload as the held kind's, ``needs_brokers``
    what a controller-only cluster cannot do ("topic", "consumer group"; "" when it can),
    ``partitions`` the partitions a stored request creates or sets (the auto-approve rule's limit;
    None: it sets none)."""

    name: str
    check: Callable[..., Checked]
    as_held: Callable[[Mapping[str, Any]], dict[str, Any]] = dict
    needs_brokers: str = ""
    partitions: Callable[[Mapping[str, Any]], int | None] = lambda payload: None


@dataclass(frozen=True)
class HeldKind:
    """One held action of an area: ``prepare`` (the operator's input -> Prepared, the dry run),
    ``review`` (actor, cluster, payload -> the review with its ``pinned`` part, computed again at
    approval and before the run), ``run`` (actor, cluster, payload, request_id, *, on_behalf_of,
    retry, pinned -> ok, message; converging when ``retry``: an earlier attempt may have done it;
    ``pinned``: the cluster matched the approved review's drift pin just before; raises
    Indeterminate when Kafka did not say), ``requested``: how a requester asks for it, if at all."""

    name: str  # RequestKind value
    gate: str | Callable[[Mapping[str, Any]], str]  # the policy kind (or a function of the payload)
    prepare: Callable[..., Prepared]
    review: Callable[[Any, Any, Mapping[str, Any]], dict[str, Any]]
    run: Callable[..., tuple[bool, str]]
    requested: Requested | None = None

    def gate_of(self, payload: Mapping[str, Any]) -> str:
        return self.gate(payload) if callable(self.gate) else self.gate


_KINDS: dict[str, HeldKind] = {}
_REQUESTED: dict[str, HeldKind] = {}


def register(kind: HeldKind) -> HeldKind:
    """Declare a held kind (at import of the area's held.py); declaring it again replaces it."""
    _KINDS[str(kind.name)] = kind
    if kind.requested is not None:
        _REQUESTED[str(kind.requested.name)] = kind
    return kind


def get(name: str) -> HeldKind:
    """The held kind stored with a change request or asked for by a self-service request
    (KeyError: its area's held.py was not loaded)."""
    return _KINDS[str(name)] if str(name) in _KINDS else _REQUESTED[str(name)]


def requested(name: str) -> Requested | None:
    """How a requester asks for the action of this request kind (None: not a request kind)."""
    kind = _REQUESTED.get(str(name))
    return kind.requested if kind is not None else None


def held_payload(name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """A stored payload as its held kind's run reads it (a request's is mapped, a held one is)."""
    asked = requested(name)
    return asked.as_held(payload) if asked is not None else dict(payload)


def run(
    name: str,
    actor,
    cluster,
    payload: Mapping[str, Any],
    request_id: str,
    *,
    on_behalf_of: str = "",
    retry: bool = False,
    pinned: bool = False,
) -> tuple[bool, str]:
    """Run a stored request or held change through its kind (the caller opens the gate).
    ``pinned``: the cluster matched the approved review's drift pin just before (a held change)."""
    return get(name).run(
        actor, cluster, held_payload(name, payload), request_id,
        on_behalf_of=on_behalf_of, retry=retry, pinned=pinned,
    )  # fmt: skip


def registered() -> dict[str, HeldKind]:
    return dict(_KINDS)


# -- helpers for the areas' reviews and request checks ---------------------------------------------


def outside_namespace(user, cluster, what: str, name: str) -> list[str]:
    """The requester policy: a request names only what is inside the requester's namespaces."""
    if user is None or not access.can(user, cluster, access.REQUEST, name):
        return [f"{what} '{name[:120]}' is outside your namespaces on {cluster.name}."]
    return []


def payload_int(payload: Mapping, key: str, errors: list[str]) -> int:
    try:
        return int(payload.get(key))
    except (TypeError, ValueError):
        errors.append(f"{key.replace('_', ' ')} must be a whole number")
        return 0


def payload_mapping(payload: Mapping, key: str, errors: list[str]) -> dict:
    value = payload.get(key) or {}
    if not isinstance(value, Mapping):
        errors.append(f"{key} must be an object of names and values")
        return {}
    return dict(value)


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
