"""The cluster registry and the cluster overview: register, change, remove, test, describe."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import ProtectedError

from console import access
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.clusters.overview import Overview
from console.crypto import SecretUnreadable
from console.kafka import ClusterConnection, KafkaOperationError, get_gateway
from console.models import Cluster, Operation, OperationState
from console.models.clusters import canonical_endpoints
from console.models.reassignment import OWED_STATES, ThrottleEntry

# Fields an operator edits on the registry form (the password travels separately, write-only).
EDITABLE_FIELDS = (
    "name",
    "description",
    "bootstrap_servers",
    "bootstrap_controllers",
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "ca_certificate",
    "request_timeout_s",
    "acl_super_users",
    "acl_allow_if_no_acl",
)


def connection_for(cluster: Cluster, sasl_password: str | None = None) -> ClusterConnection:
    """Build the gateway's connection settings from a (possibly unsaved) cluster."""
    password = sasl_password if sasl_password is not None else cluster.sasl_password()
    return ClusterConnection(
        bootstrap_servers=canonical_endpoints(cluster.bootstrap_servers),
        bootstrap_controllers=canonical_endpoints(cluster.bootstrap_controllers),
        security_protocol=cluster.security_protocol,
        sasl_mechanism=cluster.sasl_mechanism or None,
        sasl_username=cluster.sasl_username or None,
        sasl_password=password,
        ca_cert_pem=cluster.ca_certificate or None,
        request_timeout_s=cluster.request_timeout_s,
        connect_timeout_s=min(cluster.request_timeout_s, settings.KAFKA_CONNECT_TIMEOUT_S),
    )


def gateway_for(cluster: Cluster):
    """The one way to reach a registered cluster: its gateway (one per connection per process)."""
    return get_gateway(connection_for(cluster))


def _snapshot(cluster: Cluster) -> dict[str, Any]:
    data = {f: getattr(cluster, f) for f in EDITABLE_FIELDS if f != "ca_certificate"}
    data["ca_certificate"] = "present" if cluster.ca_certificate else ""
    data["sasl_password"] = "set" if cluster.has_sasl_password else ""
    return data


class PasswordRequired(ValueError):
    """The stored password may not go to changed endpoints, protocol, mechanism or CA."""


@refused_as(
    "cluster.register",
    ValidationError,
    PasswordRequired,
    targets=lambda k: [f"cluster:{(k.get('values') or {}).get('name', '')}"],
)
def register_cluster(
    *, actor, values: Mapping[str, Any], sasl_password: str = "", source_ip: str | None = None
) -> Cluster:
    """Add a cluster to the registry (superusers only); the password is encrypted at rest."""
    access.require(actor, None, access.ADMINISTER)
    cluster = Cluster(**{k: v for k, v in values.items() if k in EDITABLE_FIELDS})
    cluster.set_sasl_password(sasl_password)
    cluster.full_clean()
    with transaction.atomic():
        cluster.save()
        audit.record(
            actor=actor,
            action="cluster.register",
            cluster=cluster,
            targets=[f"cluster:{cluster.name}"],
            after=_snapshot(cluster),
            outcome="success",
            source_ip=source_ip,
        )
    return cluster


# A stored SASL password is only ever sent where it was saved for: changing any of these in a
# test or a save needs the password typed again (else an admin could send it to a host they own).
SECRET_BOUND_FIELDS = (
    "bootstrap_servers",
    "bootstrap_controllers",
    "security_protocol",
    "sasl_mechanism",
    "ca_certificate",
)


def _norm(value: Any) -> str:
    return str(value or "").strip()


def password_for(saved: Cluster | None, values: Mapping[str, Any], typed: str) -> str:
    """The password a test or a save may use: the typed one, else the stored one, but only when
    the endpoints, protocol, mechanism and CA are the saved ones (PasswordRequired otherwise)."""
    if typed or not _norm(values.get("security_protocol")).startswith("SASL"):
        return typed
    fresh = Cluster.objects.filter(pk=getattr(saved, "pk", None)).first()  # the saved row, not an edited one
    if fresh is None or not fresh.has_sasl_password:
        return ""
    changed = [
        f for f in SECRET_BOUND_FIELDS if _norm(getattr(fresh, f)) != _norm(values.get(f, getattr(fresh, f)))
    ]
    if changed:
        raise PasswordRequired(
            "Enter the SASL password again: the stored one is only sent with the saved settings, and "
            + ", ".join(f.replace("_", " ") for f in changed)
            + (" has" if len(changed) == 1 else " have")
            + " changed."
        )
    try:
        return fresh.sasl_password()
    except SecretUnreadable as exc:
        raise PasswordRequired(
            "Enter the SASL password again: the stored one cannot be decrypted with the configured "
            "CONSOLE_ENCRYPTION_KEY (the key changed since it was saved)."
        ) from exc


def _audit_test(
    actor, cluster: Cluster | None, name: str, params: dict, report, source_ip: str | None
) -> None:
    with transaction.atomic():
        audit.record(
            actor=actor,
            action="cluster.test",
            cluster=cluster,
            targets=[f"cluster:{name}"],
            params=params,
            outcomes={"connection": {"ok": report.ok, "error": report.error_name}},
            outcome="success" if report.ok else "failure",
            source_ip=source_ip,
        )


def test_settings(
    *,
    actor,
    cluster: Cluster | None,
    values: Mapping[str, Any],
    sasl_password: str = "",
    source_ip: str | None = None,
) -> ConnectionReport:
    """ "Test connection" of settings being edited (or of a new cluster), audited.

    The stored password goes only where it was saved for (``password_for``)."""
    access.require(actor, cluster, access.ADMINISTER)
    password = password_for(cluster, values, sasl_password)
    unsaved = Cluster(**{k: v for k, v in values.items() if k in EDITABLE_FIELDS})
    report = test_connection(connection_for(unsaved, password))
    shown = ("bootstrap_servers", "bootstrap_controllers", "security_protocol", "sasl_mechanism")
    params = {f: _norm(values.get(f)) for f in shown}
    params["sasl_login_from"] = "typed" if sasl_password else ("stored" if password else "none")
    saved = cluster if cluster is not None and cluster.pk else None
    _audit_test(actor, saved, values.get("name") or getattr(cluster, "name", ""), params, report, source_ip)
    return report


ENDPOINT_FIELDS = ("bootstrap_servers", "bootstrap_controllers")


def _require_same_kafka(actor, saved: Cluster, values: Mapping[str, Any], password: str) -> None:
    """A cluster's admin may move its addresses, not point it at another Kafka cluster: that would
    be registering a cluster, which only superusers may do. The new addresses must answer with the
    cluster id the saved ones answer with."""
    changed = any(
        canonical_endpoints(str(values.get(f, getattr(saved, f)) or ""))
        != canonical_endpoints(getattr(saved, f))
        for f in ENDPOINT_FIELDS
    )
    if not changed or getattr(actor, "is_superuser", False):
        return
    unsaved = Cluster(**{k: values.get(k, getattr(saved, k)) for k in EDITABLE_FIELDS})
    new = test_connection(connection_for(unsaved, password))
    old = test_connection(connection_for(saved))
    if not (new.ok and old.ok and new.cluster_id and new.cluster_id == old.cluster_id):
        why = (
            f"the new addresses answer as cluster '{new.cluster_id}', the saved ones as '{old.cluster_id}'"
            if new.ok and old.ok
            else "the console could not reach both the saved and the new addresses to compare cluster ids"
        )
        raise PermissionDenied(
            "Only a superuser may point a registered cluster at another Kafka cluster: "
            f"{why}. Cluster admins may change addresses within the same cluster."
        )


@refused_as(
    "cluster.update", ValidationError, PasswordRequired, targets=lambda k: [f"cluster:{k['cluster'].name}"]
)
def update_cluster(
    *,
    actor,
    cluster: Cluster,
    values: Mapping[str, Any],
    sasl_password: str = "",
    source_ip: str | None = None,
) -> Cluster:
    """Change a registered cluster (its admins). A blank password keeps the stored one."""
    access.require(actor, cluster, access.ADMINISTER)
    password = password_for(cluster, values, sasl_password)  # PasswordRequired before anything changes
    saved = Cluster.objects.get(pk=cluster.pk)
    _require_same_kafka(actor, saved, values, password)
    before = _snapshot(saved)
    for field in EDITABLE_FIELDS:
        if field in values:
            setattr(cluster, field, values[field])
    if sasl_password:
        cluster.set_sasl_password(sasl_password)
    if not cluster.security_protocol.startswith("SASL"):
        cluster.sasl_mechanism, cluster.sasl_username = "", ""
        cluster.set_sasl_password("")
    cluster.full_clean()
    with transaction.atomic():
        cluster.save()
        audit.record(
            actor=actor,
            action="cluster.update",
            cluster=cluster,
            targets=[f"cluster:{cluster.name}"],
            before=before,
            after=_snapshot(cluster),
            outcome="success",
            source_ip=source_ip,
        )
    return cluster


class ClusterInUse(Exception):
    """Removing the cluster would orphan work on Kafka: live operations or throttles still owed."""


def removal_blockers(cluster: Cluster) -> list[str]:
    """Why the cluster cannot be forgotten yet (empty: it can): each reason names what to do."""
    reasons = []
    live = list(
        Operation.objects.filter(cluster=cluster, state__in=(OperationState.PENDING, OperationState.RUNNING))
        .order_by("pk")
        .values_list("pk", "kind")[:5]
    )
    if live:
        named = ", ".join(f"#{pk} ({kind})" for pk, kind in live)
        reasons.append(f"operations still running: {named}; cancel them or wait for them to end")
    owed = ThrottleEntry.objects.filter(cluster=cluster, state__in=OWED_STATES).count()
    if owed:
        reasons.append(
            f"{owed} throttle configs are still owed to Kafka (Throttles page); take them back first"
        )
    return reasons


def remove_cluster(*, actor, cluster: Cluster, source_ip: str | None = None) -> None:
    """Forget a cluster (the Kafka cluster itself is untouched); its audit history stays.

    Refused (``ClusterInUse``) while operations run on it or the throttle ledger still owes Kafka
    anything: the ledger is what takes throttles back, so it must outlive the work that set them.
    Settled ledger rows are deleted with the cluster. A reassignment that records a throttle
    while the removal runs makes the delete fail on the ledger's protected key: refused as well.
    """
    access.require(actor, cluster, access.ADMINISTER)
    reasons = removal_blockers(cluster)
    if reasons:
        _refuse_removal(actor, cluster, reasons, source_ip)
    try:
        with transaction.atomic():
            audit.record(
                actor=actor,
                action="cluster.remove",
                cluster=cluster,
                targets=[f"cluster:{cluster.name}"],
                before=_snapshot(cluster),
                outcome="success",
                source_ip=source_ip,
            )
            ThrottleEntry.objects.filter(cluster=cluster).exclude(state__in=OWED_STATES).delete()
            cluster.delete()
    except ProtectedError:
        _refuse_removal(actor, cluster, ["a reassignment recorded throttles on it meanwhile"], source_ip)


def _refuse_removal(actor, cluster: Cluster, reasons: list[str], source_ip: str | None) -> None:
    with transaction.atomic():
        audit.record(
            actor=actor,
            action="cluster.remove",
            cluster=cluster,
            targets=[f"cluster:{cluster.name}"],
            params={"refused": reasons},
            outcome="refused",
            source_ip=source_ip,
        )
    raise ClusterInUse(f"Cluster '{cluster.name}' cannot be removed: " + "; ".join(reasons) + ".")


@dataclass(frozen=True)
class ConnectionReport:
    """What "Test connection" shows: the cluster's identity, or the precise error."""

    ok: bool
    cluster_id: str = ""
    controller_id: int | None = None
    broker_count: int = 0
    mode: str = "brokers"
    error: str = ""
    error_name: str = ""


def _explain(exc: KafkaOperationError) -> str:
    """The operator-facing advice plus Kafka's own detail (address, direction) when it adds something."""
    text = exc.operator_text
    return text if not exc.message or exc.message in text else f"{text} ({exc.message})"


def test_connection(connection: ClusterConnection) -> ConnectionReport:
    """Reach the cluster within its timeout; never raises for Kafka or network trouble."""
    mode = "controllers" if connection.bootstrap_controllers else "brokers"
    gateway = get_gateway(connection)
    try:
        check = gateway.test_connection()
    except KafkaOperationError as exc:
        return ConnectionReport(ok=False, mode=mode, error=_explain(exc), error_name=exc.name)
    controller, _ = active_controller(gateway, check)  # None when unknown, never Metadata's broker
    return ConnectionReport(
        ok=True,
        cluster_id=check.cluster_id or "",
        controller_id=controller,
        broker_count=check.broker_count,
        mode=mode,
    )


def test_registered(*, actor, cluster: Cluster, source_ip: str | None = None) -> ConnectionReport:
    """ "Test connection" of a registered cluster with its saved settings (audited)."""
    access.require(actor, cluster, access.VIEW)
    report = test_connection(connection_for(cluster))
    _audit_test(actor, cluster, cluster.name, {"settings": "saved"}, report, source_ip)
    return report


def active_controller(gateway, info) -> tuple[int | None, str]:
    """The active controller: the metadata quorum's leader (DescribeQuorum, through the brokers or
    the controllers), never Metadata's controller id (under KRaft, a random live broker). ``info``
    is a ClusterInfo or a connection check (both carry endpoint_type and controller_id)."""
    if info is not None and info.endpoint_type == "controller":
        return info.controller_id, ""  # DescribeCluster to the controllers names the active one
    try:
        return gateway.describe_quorum().leader_id, ""
    except KafkaOperationError as exc:
        return None, f"DescribeQuorum failed: {exc.operator_text}"


def overview(*, actor, cluster: Cluster) -> Overview:
    """Brokers and their states, the active controller, topic health: read at once, so a broker that
    stopped answering costs the page the connect timeout once, not once per read."""
    access.require(actor, cluster, access.VIEW)
    gateway = gateway_for(cluster)
    with ThreadPoolExecutor(2) as pool:
        status = pool.submit(gateway.broker_status)
        health = None if cluster.controller_mode else pool.submit(gateway.topic_health)
        try:
            info = gateway.describe_cluster()
            summary = None if health is None else health.result()
        except KafkaOperationError as exc:
            return Overview(cluster=cluster, error=exc)
        leader, unknown = active_controller(gateway, info)
        try:
            nodes = status.result()
        except KafkaOperationError:
            nodes = ()
    return Overview(
        cluster=cluster,
        info=info,
        summary=summary,
        active_controller=leader,
        controller_unknown=unknown,
        brokers=nodes,
    )
