"""Self-service request checks: the requester policy of the held kind a request asks for.

Each area declares how a requester asks for its held kinds (``changes.kinds.Requested``: the
namespaces, the console's policy and Kafka's validate-only answer); this runs that check on submit
and again on approval (the cluster may have changed). It returns the clean payload the worker will
run, or raises RequestInvalid naming every problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.changes import kinds as held_kinds
from console.changes.kinds import ChangeInvalid, Checked
from console.changes.queue import RequestInvalid
from console.kafka import KafkaOperationError
from console.models import Cluster

__all__ = ["Checked", "RequestInvalid", "check_again", "check_request"]


def check_request(
    *, requester, cluster: Cluster, kind: str, payload: Mapping[str, Any], approving: bool = False
) -> Checked:
    """Namespace, console policy and Kafka validate-only; raises RequestInvalid naming every problem.

    ``approving``: the stored payload is checked again before it is approved."""
    asked = held_kinds.requested(kind)
    if asked is None:
        raise RequestInvalid([f"unknown request kind '{str(kind)[:40]}'"])
    if asked.needs_brokers and cluster.controller_mode:
        raise RequestInvalid(
            [
                "this cluster is reached through its controllers (KIP-919): "
                f"{asked.needs_brokers} requests need brokers"
            ]
        )
    try:
        return asked.check(requester, cluster, payload, approving=approving)
    except ChangeInvalid as exc:
        raise RequestInvalid(exc.errors) from None
    except KafkaOperationError as exc:
        raise RequestInvalid([f"could not validate with Kafka: {exc.operator_text}"]) from None


def check_again(req) -> Checked:
    """A stored request checked against the cluster as it is now (at its approval, and before a
    request that waited for its time runs)."""
    return check_request(
        requester=req.requested_by, cluster=req.cluster, kind=req.kind, payload=req.payload, approving=True
    )
