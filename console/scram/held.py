"""Held SCRAM credential changes (set or delete). A held set keeps the password encrypted with
``console.crypto`` under the payload key ``value_encrypted`` (the change row's encrypted key, so key
rotation re-encrypts it); its review shows only the user, the mechanism, the iterations and
"password: set", pinned to the iterations the user's credential had for that mechanism."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access, crypto
from console.changes import gate
from console.changes.kinds import HeldKind, Indeterminate, Prepared, checked, kafka_text, register, review
from console.kafka import KafkaOperationError
from console.scram import actions, core, reads

KIND = "change.scram"  # the held kind (stored with the change request)
GATE = gate.declare(actions.GATE, "SCRAM credential changes", access.ADMINISTER)
SET, DELETE = "set", "delete"


def _review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    user, mechanism, op = payload["user"], payload["mechanism"], payload["op"]
    columns = ["change", "user", "mechanism", "iterations", "password"]
    password = f"password: {core.PASSWORD_SHOWN}"
    if cluster.controller_mode:  # the controllers cannot describe credentials (Kafka 4.1)
        row = [
            op,
            user,
            mechanism,
            "" if op == DELETE else str(payload["iterations"]),
            "" if op == DELETE else password,
        ]
        kafka = "the user's credentials cannot be read through the controllers; Kafka checks the change when it runs"
        return review(columns, [row], ok=True, kafka=kafka, pinned=[user, mechanism, "unreadable"])
    try:
        now = reads.current(cluster, user)
    except KafkaOperationError as exc:
        return review(
            columns,
            [[op, user, mechanism, "", ""]],
            ok=False,
            kafka=f"the user's credentials cannot be read: {kafka_text(exc)}",
            pinned=[user, mechanism, "unreadable"],
        )
    had = {c.mechanism: c.iterations for c in now.credentials} if now is not None else {}
    before = had.get(mechanism)
    if op == DELETE:
        row = ["delete", user, mechanism, "" if before is None else str(before), ""]
        ok, kafka = (
            before is not None,
            (
                "the credential is there now (DescribeUserScramCredentials)"
                if before is not None
                else f"{user} has no {mechanism} credential to delete"
            ),
        )
    else:
        row = [
            "rotate" if before is not None else "create",
            user,
            mechanism,
            str(payload["iterations"]),
            password,
        ]
        ok, kafka = True, "the console checked the input; Kafka checks it again when it runs"
    return review(columns, [row], ok=ok, kafka=kafka, pinned=[user, mechanism, before])


def prepare_set(actor, cluster, user: str, mechanism: str, iterations: int, password: str) -> Prepared:
    """A credential to create or rotate, held: the password encrypted in the payload."""
    access.require(actor, cluster, access.ADMINISTER)
    change = core.check_set(user, mechanism, iterations, password)
    payload = {
        "op": SET,
        "user": change.user,
        "mechanism": change.mechanism,
        "iterations": change.iterations,
        "value_encrypted": crypto.encrypt(change.password),
    }
    return checked(
        Prepared(
            KIND, GATE, change.target, payload, _review(actor, cluster, payload),
            f"SCRAM {change.mechanism} credential of {change.user} ({change.iterations} iterations, password: set)",
        )
    )  # fmt: skip


def prepare_delete(actor, cluster, user: str, mechanism: str) -> Prepared:
    access.require(actor, cluster, access.ADMINISTER)
    name, mech = core.check_delete(user, mechanism)
    payload = {"op": DELETE, "user": name, "mechanism": mech}
    return checked(
        Prepared(
            KIND, GATE, core.target(name), payload, _review(actor, cluster, payload),
            f"delete the SCRAM {mech} credential of {name}",
        )
    )  # fmt: skip


def _run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    """Setting the same credential again converges; a retried delete whose credential is gone did it."""
    if payload["op"] == SET:
        result = actions.set_credential(
            actor=actor,
            cluster=cluster,
            user=payload["user"],
            mechanism=payload["mechanism"],
            iterations=payload["iterations"],
            password=crypto.decrypt(payload["value_encrypted"]),
            on_behalf_of=on_behalf_of,
            request_id=request_id,
        )
    else:
        result = actions.delete_credential(
            actor=actor,
            cluster=cluster,
            user=payload["user"],
            mechanism=payload["mechanism"],
            on_behalf_of=on_behalf_of,
            request_id=request_id,
        )
        if retry and result.error is not None and result.error.name == "RESOURCE_NOT_FOUND":
            return True, f"{payload['mechanism']} credential of {payload['user']} is gone"
    if result.error is not None and result.error.retriable:
        raise Indeterminate(kafka_text(result.error))
    return result.ok, result.message


def prepare(
    actor, cluster, op: str, user: str, mechanism: str, iterations: int = 0, password: str = ""
) -> Prepared:
    """``prepare_set`` or ``prepare_delete`` by ``op``."""
    if op == DELETE:
        return prepare_delete(actor, cluster, user, mechanism)
    return prepare_set(actor, cluster, user, mechanism, iterations, password)


register(HeldKind(KIND, GATE, prepare, _review, _run))
