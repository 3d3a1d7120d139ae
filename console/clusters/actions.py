"""The cluster registry and the cluster overview: register, change, remove, test, describe."""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import ProtectedError

from console import access
from console.audit import recorded
from console.audit import store as audit
from console.audit.refusals import refused_as
from console.clusters import audit_names
from console.clusters.core import SECRETS, needs_secret, settings_errors, uses_tls
from console.clusters.overview import Overview, security
from console.clusters.probe import (
    ConnectionReport,
    connection_or_report,
    controller_and_quorum,
    server_certificate_of,
    test_connection,
)
from console.clusters.secrets import (
    PasswordRequired,
    audit_snapshot,
    connection_for,
    secrets_for,
)
from console.kafka import KafkaOperationError, close_idle, get_gateway, kerberos_available
from console.models import Cluster, Operation, OperationState
from console.models.clusters import canonical_endpoints
from console.models.reassignment import OWED_STATES, ThrottleEntry

# Fields an operator edits on the registry form (the secrets travel separately, write-only).
EDITABLE_FIELDS = (
    "name",
    "description",
    "bootstrap_servers",
    "bootstrap_controllers",
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "ca_certificate",
    "client_certificate",
    "ssl_check_hostname",
    "tls_min_version",
    "oauth_token_endpoint",
    "oauth_client_id",
    "oauth_scope",
    "oauth_extensions",
    "kerberos_principal",
    "kerberos_service_name",
    "kerberos_krb5_conf",
    "request_timeout_s",
    "acl_super_users",
    "acl_allow_if_no_acl",
)


_idle_swept = [0.0]  # when this process last closed idle gateways' clients (monotonic)


def gateway_for(cluster: Cluster):
    """The one way to reach a registered cluster: its gateway (one per connection per process).
    At most once a minute, the clients of gateways no call used for ``KAFKA_CLIENT_IDLE_S`` are
    closed (a cluster nobody looks at costs no threads or buffers; the next call reopens them), and
    at most ``KAFKA_CLIENTS_MAX`` gateways keep clients open (opening one more closes the least
    recently used idle one's)."""
    now = time.monotonic()
    if now - _idle_swept[0] >= 60.0:
        _idle_swept[0] = now
        close_idle(float(settings.KAFKA_CLIENT_IDLE_S))
    return get_gateway(connection_for(cluster), max_open=settings.KAFKA_CLIENTS_MAX)


def _snapshot(cluster: Cluster) -> dict[str, Any]:
    return audit_snapshot(cluster, EDITABLE_FIELDS)


def _targets(cluster: Cluster) -> list[str]:
    return [f"cluster:{cluster.name}"]


def _save(cluster: Cluster, actor, action: str, source_ip: str | None, **event) -> Cluster:
    """Save the registry's row with its event (after: its editable fields, secrets masked)."""
    return recorded.save(
        cluster, actor=actor, action=action, cluster=cluster, targets=_targets, after=_snapshot,
        source_ip=source_ip, **event,
    )  # fmt: skip


def _typed(secrets: Mapping[str, str] | None, sasl_password: str) -> dict[str, str]:
    typed = {k: v for k, v in (secrets or {}).items() if k in SECRETS and v}
    if sasl_password:
        typed["sasl_password"] = sasl_password
    return typed


def password_for(saved: Cluster | None, values: Mapping[str, Any], typed: str) -> str:
    """The SASL password a test or a save may use (``secrets_for``, for the password alone)."""
    return secrets_for(saved, values, {"sasl_password": typed})["sasl_password"]


def _check_settings(cluster: Cluster, secrets: Mapping[str, str]) -> None:
    """The settings the protocol and mechanism need, and each secret stored only where it is used."""
    values = {f: getattr(cluster, f) for f in EDITABLE_FIELDS}
    errors = settings_errors(
        values, {name: bool(secrets.get(name)) for name in SECRETS}, kerberos_available()
    )
    if errors:
        raise ValidationError(errors)
    for name in SECRETS:
        cluster.set_secret(name, secrets.get(name, "") if needs_secret(name, values) else "")
    if not values["security_protocol"].startswith("SASL"):
        cluster.sasl_mechanism, cluster.sasl_username = "", ""
    if not uses_tls(values):  # meaningless without TLS: kept at their defaults
        cluster.ssl_check_hostname, cluster.tls_min_version = True, "TLSv1.2"
        cluster.client_certificate = ""


class HostnameCheckRequired(PermissionDenied):
    """Only a superuser may turn hostname verification off."""


def _require_superuser_for_no_hostname_check(actor, saved: Cluster | None, values: Mapping[str, Any]) -> None:
    """Hostname verification off lets any certificate the CA signed stand in for the brokers."""
    protocol = values.get("security_protocol", getattr(saved, "security_protocol", ""))
    turning_off = (
        uses_tls({"security_protocol": protocol})
        and values.get("ssl_check_hostname", True) is False
        and (
            saved is None
            or saved.ssl_check_hostname
            or not uses_tls({"security_protocol": saved.security_protocol})
        )
    )
    if turning_off and not getattr(actor, "is_superuser", False):
        raise HostnameCheckRequired(
            "Only a superuser may turn hostname verification off (ssl.endpoint.identification.algorithm="
            '""): any certificate the CA issued would then be accepted for these brokers.'
        )


@refused_as(
    audit_names.CLUSTER_REGISTER,
    ValidationError,
    PasswordRequired,
    targets=lambda k: [f"cluster:{(k.get('values') or {}).get('name', '')}"],
)
def register_cluster(
    *,
    actor,
    values: Mapping[str, Any],
    sasl_password: str = "",
    secrets: Mapping[str, str] | None = None,
    source_ip: str | None = None,
) -> Cluster:
    """Add a cluster to the registry (superusers only); every secret is encrypted at rest."""
    access.require(actor, None, access.ADMINISTER)
    _require_superuser_for_no_hostname_check(actor, None, values)
    cluster = Cluster(**{k: v for k, v in values.items() if k in EDITABLE_FIELDS})
    _check_settings(cluster, _typed(secrets, sasl_password))
    cluster.full_clean()
    return _save(cluster, actor, audit_names.CLUSTER_REGISTER, source_ip)


def _audit_test(
    actor, cluster: Cluster | None, name: str, params: dict, report, source_ip: str | None
) -> None:
    with transaction.atomic():
        audit.record(
            actor=actor,
            action=audit_names.CLUSTER_TEST,
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
    secrets: Mapping[str, str] | None = None,
    source_ip: str | None = None,
) -> ConnectionReport:
    """ "Test connection" of settings being edited (or of a new cluster), audited.

    Stored secrets go only where they were saved for (``secrets_for``); nothing is sent otherwise."""
    access.require(actor, cluster, access.ADMINISTER)
    typed = _typed(secrets, sasl_password)
    usable = secrets_for(cluster, values, typed)
    unsaved = Cluster(**{k: v for k, v in values.items() if k in EDITABLE_FIELDS})
    _check_settings(unsaved, usable)
    report = test_connection(connection_or_report(unsaved, usable))
    shown = ("bootstrap_servers", "bootstrap_controllers", "security_protocol", "sasl_mechanism")
    params: dict[str, Any] = {f: str(values.get(f) or "").strip() for f in shown}
    params["ssl_check_hostname"] = values.get("ssl_check_hostname", True) is not False
    params["sasl_login_from"] = (
        "typed" if typed.get("sasl_password") else ("stored" if usable["sasl_password"] else "none")
    )
    # by name, in lists: the trail masks every value under a key that looks secret
    params["entered"] = [n for n in SECRETS if typed.get(n) and usable.get(n)]
    params["from_store"] = [n for n in SECRETS if usable.get(n) and not typed.get(n)]
    saved = cluster if cluster is not None and cluster.pk else None
    _audit_test(actor, saved, values.get("name") or getattr(cluster, "name", ""), params, report, source_ip)
    return report


ENDPOINT_FIELDS = ("bootstrap_servers", "bootstrap_controllers")


def _require_same_kafka(actor, saved: Cluster, values: Mapping[str, Any], secrets: Mapping[str, str]) -> None:
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
    new = test_connection(connection_or_report(unsaved, secrets))
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
    audit_names.CLUSTER_UPDATE,
    ValidationError,
    PasswordRequired,
    targets=lambda k: _targets(k["cluster"]),
)
def update_cluster(
    *,
    actor,
    cluster: Cluster,
    values: Mapping[str, Any],
    sasl_password: str = "",
    secrets: Mapping[str, str] | None = None,
    source_ip: str | None = None,
) -> Cluster:
    """Change a registered cluster (its admins). A secret left blank keeps the stored one, where the
    settings it is bound to are unchanged (else PasswordRequired, before anything changes)."""
    access.require(actor, cluster, access.ADMINISTER)
    saved = Cluster.objects.get(pk=cluster.pk)
    _require_superuser_for_no_hostname_check(actor, saved, values)
    typed = _typed(secrets, sasl_password)
    usable = secrets_for(saved, values, typed)
    _require_same_kafka(actor, saved, values, usable)
    before = _snapshot(saved)
    for field in EDITABLE_FIELDS:
        if field in values:
            setattr(cluster, field, values[field])
    _check_settings(cluster, usable)
    cluster.full_clean()
    entered = sorted(n for n in typed if cluster.has_secret(n))  # names, never values
    return _save(
        cluster, actor, audit_names.CLUSTER_UPDATE, source_ip, before=before, params={"entered": entered}
    )


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
            ThrottleEntry.objects.filter(cluster=cluster).exclude(state__in=OWED_STATES).delete()
            recorded.delete(
                cluster,
                actor=actor,
                action=audit_names.CLUSTER_REMOVE,
                cluster=cluster,
                targets=_targets(cluster),
                before=_snapshot(cluster),
                source_ip=source_ip,
            )
    except ProtectedError:
        _refuse_removal(actor, cluster, ["a reassignment recorded throttles on it meanwhile"], source_ip)


def _refuse_removal(actor, cluster: Cluster, reasons: list[str], source_ip: str | None) -> None:
    with transaction.atomic():
        audit.record(
            actor=actor,
            action=audit_names.CLUSTER_REMOVE,
            cluster=cluster,
            targets=_targets(cluster),
            params={"refused": reasons},
            outcome="refused",
            source_ip=source_ip,
        )
    raise ClusterInUse(f"Cluster '{cluster.name}' cannot be removed: " + "; ".join(reasons) + ".")


def test_registered(*, actor, cluster: Cluster, source_ip: str | None = None) -> ConnectionReport:
    """ "Test connection" of a registered cluster with its saved settings (audited)."""
    access.require(actor, cluster, access.VIEW)
    report = test_connection(connection_for(cluster))
    _audit_test(actor, cluster, cluster.name, {"settings": "saved"}, report, source_ip)
    return report


def overview(*, actor, cluster: Cluster) -> Overview:
    """Brokers and their states, the active controller and the brokers' certificate: read at once, so
    a broker that stopped answering costs the connect timeout once, not once per read. The page's
    topic counts come from the topic area's metadata snapshot (``brokers.overview``); the API and
    the CLI show none."""
    access.require(actor, cluster, access.VIEW)
    gateway = gateway_for(cluster)
    with ThreadPoolExecutor(2) as pool:
        status = pool.submit(gateway.broker_status)
        server = pool.submit(server_certificate_of, cluster)  # TLS only: the brokers' certificate
        try:
            info = gateway.describe_cluster()
        except KafkaOperationError as exc:
            return Overview(cluster=cluster, error=exc, security=security(cluster, server.result()))
        leader, unknown, quorum = controller_and_quorum(gateway, info)
        try:
            nodes = status.result()
        except KafkaOperationError:
            nodes = ()
    return Overview(
        cluster=cluster,
        info=info,
        active_controller=leader,
        controller_unknown=unknown,
        quorum=quorum,
        brokers=nodes,
        security=security(cluster, server.result()),
    )
