"""The KRaft lifecycle's held changes: a features change (its review is Kafka's validate-only answer,
pinned to the features' current levels), a voter added or removed (the console's safety checks,
pinned to the voter set and its leader) and a broker unregistered (pinned to its registration state
and that it hosts no replica). Each run converges: levels already set, a voter already in or out, a
broker already unregistered are success."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import gate
from console.changes.kinds import (
    ChangeInvalid,
    HeldKind,
    Indeterminate,
    Prepared,
    checked,
    kafka_text,
    register,
    review,
)
from console.kafka import KafkaOperationError
from console.quorum import core, features, unregister, voters

FEATURES_KIND = "change.features"  # the held kinds (stored with the change request)
VOTER_KIND = "change.voter"
UNREGISTER_KIND = "change.unregister"
FEATURES_GATE = gate.declare(features.GATE, "Feature level changes (metadata.version...)", access.ADMINISTER)
VOTER_GATE = gate.declare(voters.GATE, "Controller voter changes (KIP-853)", access.ADMINISTER)
UNREGISTER_GATE = gate.declare(unregister.GATE, "Broker unregistrations", access.ADMINISTER)
ADD, REMOVE = "add", "remove"


def _outcome(result) -> tuple[bool, str]:
    if result.error is not None and result.error.retriable:
        raise Indeterminate(kafka_text(result.error))
    return result.ok, result.message


# -- features ------------------------------------------------------------------------------------


def _features_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    updates, kind = dict(payload["updates"]), payload["upgrade_type"]
    columns = ["feature", "finalized now", "wanted", "upgrade type"]
    try:
        now = features.finalized(cluster)
        features.check(updates, kind, now)
        error = features.first_error(cluster, updates, kind)
    except KafkaOperationError as exc:
        rows = [[n, "unknown", str(v), kind] for n, v in updates.items()]
        return review(columns, rows, ok=False, kafka=kafka_text(exc), pinned=["unreadable"])
    except (core.KraftInvalid, core.KraftRefused) as exc:
        rows = [[n, "", str(v), kind] for n, v in updates.items()]
        return review(columns, rows, ok=False, kafka=str(exc), pinned=["refused"])
    rows = [[n, str(now.get(n, 0)), str(v), kind] for n, v in updates.items()]
    answer = (
        "Kafka's validate-only answer: valid" if error is None else f"Kafka: {error.name}: {error.message}"
    )
    return review(
        columns, rows, ok=error is None, kafka=answer, pinned=[[n, now.get(n, 0)] for n in sorted(updates)]
    )


def prepare_features(actor, cluster, updates, upgrade_type: str = core.UPGRADE) -> Prepared:
    """A features change held with Kafka's dry run as its review."""
    access.require(actor, cluster, access.ADMINISTER)
    wanted = core.feature_updates(updates)
    kind = core.upgrade_type(upgrade_type)
    payload = {"updates": wanted, "upgrade_type": kind}
    text = ", ".join(f"{n}={v}" for n, v in wanted.items())
    return checked(
        Prepared(FEATURES_KIND, FEATURES_GATE, features.TARGET, payload,
                 _features_review(actor, cluster, payload), f"features {kind}: {text}")
    )  # fmt: skip


def _features_run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    updates = dict(payload["updates"])
    if retry:
        try:
            now = features.finalized(cluster)
        except KafkaOperationError as exc:
            raise Indeterminate(kafka_text(exc)) from None
        if all(now.get(n, 0) == v for n, v in updates.items()):
            return True, "the features are at the wanted levels"
    result = features.update_features(
        actor=actor, cluster=cluster, updates=updates, upgrade_type=payload["upgrade_type"],
        on_behalf_of=on_behalf_of, request_id=request_id,
    )  # fmt: skip
    return _outcome(result)


# -- voters --------------------------------------------------------------------------------------


def _voter_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    op, node = payload["op"], int(payload["node_id"])
    columns = ["change", "controller", "directory id", "endpoint", "voters now"]
    try:
        if op == REMOVE:
            info, directory = voters.check_remove(
                cluster, node, payload.get("directory_id") or None, bool(payload.get("allow_leader"))
            )
            where = ""
        else:
            info, directory, endpoint = voters.check_add(
                cluster, node, payload.get("directory_id") or None, payload.get("endpoint", "")
            )
            where = core.endpoint_text(*endpoint)
    except KafkaOperationError as exc:
        return review(
            columns,
            [[op, str(node), "", "", "unknown"]],
            ok=False,
            kafka=kafka_text(exc),
            pinned=["unreadable"],
        )
    except (core.KraftInvalid, core.KraftRefused) as exc:
        return review(columns, [[op, str(node), "", "", ""]], ok=False, kafka=str(exc), pinned=["refused"])
    ids = sorted(v.id for v in info.voters)
    row = [op, str(node), directory, where, ", ".join(map(str, ids)) + f" (leader {info.leader_id})"]
    kafka = "the console's checks pass (caught-up voters keep a majority); Kafka checks again when it runs"
    return review(columns, [row], ok=True, kafka=kafka, pinned=[ids, info.leader_id])


def prepare_voter(
    actor, cluster, op: str, node_id, directory_id: str = "", endpoint: str = "", allow_leader: bool = False
) -> Prepared:
    """A voter added or removed, held with the console's checks as its review."""
    access.require(actor, cluster, access.ADMINISTER)
    if op not in (ADD, REMOVE):
        raise ChangeInvalid([f"unknown voter change {op!r}"])
    node = core.node_id(node_id)
    payload = {
        "op": op,
        "node_id": node,
        "directory_id": core.directory_id(directory_id) if directory_id else "",
        "endpoint": core.endpoint_text(*core.endpoint(endpoint)) if endpoint else "",
        "allow_leader": bool(allow_leader),
    }
    summary = f"{op} controller {node} {'to' if op == ADD else 'from'} the KRaft voters"
    return checked(
        Prepared(
            VOTER_KIND,
            VOTER_GATE,
            voters.target(node),
            payload,
            _voter_review(actor, cluster, payload),
            summary,
        )
    )


def _voter_run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    op, node = payload["op"], int(payload["node_id"])
    if retry:
        try:
            now = voters.members(cluster)[0]
        except KafkaOperationError as exc:
            raise Indeterminate(kafka_text(exc)) from None
        if (now.voter(node) is not None) == (op == ADD):
            return True, f"controller {node} is {'a voter' if op == ADD else 'no voter'} already"
    common = {
        "actor": actor,
        "cluster": cluster,
        "node_id": node,
        "directory_id": payload.get("directory_id", ""),
    }
    if op == ADD:
        result = voters.add_voter(
            **common, endpoint=payload.get("endpoint", ""), on_behalf_of=on_behalf_of, request_id=request_id
        )
    else:
        result = voters.remove_voter(
            **common,
            allow_leader=bool(payload.get("allow_leader")),
            on_behalf_of=on_behalf_of,
            request_id=request_id,
        )
    return _outcome(result)


# -- unregister ----------------------------------------------------------------------------------


def _unregister_review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    broker = int(payload["broker_id"])
    columns = ["change", "broker", "registration now", "replicas on it"]
    try:
        state, hosted = unregister.check(cluster, broker)
    except KafkaOperationError as exc:
        return review(
            columns,
            [["unregister", str(broker), "unknown", ""]],
            ok=False,
            kafka=kafka_text(exc),
            pinned=["unreadable"],
        )
    except core.KraftRefused as exc:
        return review(
            columns, [["unregister", str(broker), "", ""]], ok=False, kafka=str(exc), pinned=["refused"]
        )
    kafka = (
        "the broker is fenced and hosts no replica"
        if state == "fenced"
        else f"the broker is {state}: Kafka will answer BROKER_ID_NOT_REGISTERED"
    )
    return review(
        columns,
        [["unregister", str(broker), state, str(len(hosted))]],
        ok=state == "fenced",
        kafka=kafka,
        pinned=[broker, state, len(hosted)],
    )


def prepare_unregister(actor, cluster, broker_id) -> Prepared:
    access.require(actor, cluster, access.ADMINISTER)
    broker = core.node_id(broker_id, "the broker id")
    payload = {"broker_id": broker}
    return checked(
        Prepared(UNREGISTER_KIND, UNREGISTER_GATE, unregister.target(broker), payload,
                 _unregister_review(actor, cluster, payload), f"unregister broker {broker}")
    )  # fmt: skip


def _unregister_run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    broker = int(payload["broker_id"])
    result = unregister.unregister_broker(
        actor=actor, cluster=cluster, broker_id=broker, on_behalf_of=on_behalf_of, request_id=request_id
    )
    if retry and result.error is not None and result.error.name == "BROKER_ID_NOT_REGISTERED":
        return True, f"broker {broker} is unregistered"
    return _outcome(result)


register(HeldKind(FEATURES_KIND, FEATURES_GATE, prepare_features, _features_review, _features_run))
register(HeldKind(VOTER_KIND, VOTER_GATE, prepare_voter, _voter_review, _voter_run))
register(HeldKind(UNREGISTER_KIND, UNREGISTER_GATE, prepare_unregister, _unregister_review, _unregister_run))
