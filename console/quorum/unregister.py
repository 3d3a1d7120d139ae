"""Unregistering a broker that is gone (UnregisterBroker), as ``kafka-cluster.sh unregister`` does.

Kafka answers UnregisterBroker for any registered broker, a live one included (it then registers
again at its next heartbeat, its replicas dropping out of the ISR meanwhile). The console refuses
first, with the reason, a broker that is alive (registered and not fenced) or that still has
replicas placed on it (named, a few). It needs a broker connection to check that (Metadata and
DescribeCluster with the fenced brokers). ``cluster.admin``, the ``kraft.unregister`` gate, audited
requested/outcome, and confirmed by reading the registrations again.
"""

from __future__ import annotations

from django.conf import settings

from console import access
from console.audit import outcomes
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.quorum import audit_names, core

GATE = "kraft.unregister"  # the policy kind (declared in held.py)


def target(broker: int) -> str:
    return f"broker:{broker}"


def _state(live: tuple[int, ...], fenced: tuple[int, ...], broker: int) -> str:
    return "alive" if broker in live else ("fenced" if broker in fenced else "not registered")


def check(cluster, broker: int) -> tuple[str, list[str]]:
    """(registration state, hosted replicas); KraftRefused when unregistering it is unsafe."""
    if cluster.controller_mode:
        raise core.KraftRefused(
            [
                "unregistering a broker needs a connection through the brokers: the console first checks "
                "that no replica is placed on it (Metadata), which the controllers do not answer"
            ]
        )
    gw = gateway_for(cluster)
    live, fenced = gw.broker_registrations()
    hosted = list(gw.replicas_hosted(broker))
    problems = core.unregister_problems(broker, broker in live, hosted)
    if problems:
        raise core.KraftRefused(problems)
    return _state(live, fenced, broker), hosted


def _targets(kwargs) -> list[str]:
    broker = kwargs.get("broker_id")
    return [target(broker)] if isinstance(broker, int) else []


@refused_as(audit_names.BROKER_UNREGISTER, core.KraftInvalid, core.KraftRefused, targets=_targets)
def unregister_broker(
    *,
    actor,
    cluster,
    broker_id,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> core.KraftResult:
    """Remove a stopped broker's registration; Kafka's BROKER_ID_NOT_REGISTERED is the result's error."""
    access.require(actor, cluster, access.ADMINISTER)
    broker = core.node_id(broker_id, "the broker id")
    gate.check(actor, cluster, GATE)
    before, _ = check(cluster, broker)
    params = {"broker_id": broker}
    req = outcomes.requested(
        actor=actor, action=audit_names.BROKER_UNREGISTER, cluster=cluster, targets=[target(broker)],
        params=params, source_ip=source_ip, on_behalf_of=on_behalf_of, request_id=request_id,
    )  # fmt: skip
    gw = gateway_for(cluster)
    error = None
    try:
        gw.unregister_broker(broker)
    except KafkaOperationError as exc:
        error = exc
    regs, confirmed = core.until(
        gw.broker_registrations,
        lambda r: broker not in r[0] and broker not in r[1],
        float(settings.CONFIG_CONFIRM_TIMEOUT_S) if error is None else 0,
    )
    after = _state(*regs, broker) if regs is not None else None
    event_id = outcomes.settle_change(
        req, target=target(broker), params=params, before=before, after=after, error=error
    )
    message = (
        f"broker {broker}'s registration removed" + ("" if confirmed else " (DescribeCluster still lists it)")
        if error is None
        else f"Kafka refused unregistering broker {broker}: {error.name}: {error.message}"
    )
    return core.KraftResult(
        "broker.unregister", target(broker), False, error, message, before, after, confirmed, event_id
    )


def _reread(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the broker's registration now (alive, fenced or not registered)."""
    live, fenced = gateway_for(cluster).broker_registrations()
    broker = int(params["broker_id"])
    return {target(broker): _state(live, fenced, broker)}


outcomes.register_reader(audit_names.BROKER_UNREGISTER, _reread)
