"""Test connection: reach a cluster within its timeout and report who answered, or exactly what failed."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from console.clusters.secrets import connection_for
from console.crypto import SecretUnreadable
from console.kafka import ClusterConnection, KafkaOperationError, get_gateway
from console.kafka.diagnose import server_certificate
from console.models import Cluster

__all__ = [
    "ConnectionReport",
    "active_controller",
    "controller_and_quorum",
    "connection_or_report",
    "server_certificate_of",
    "test_connection",
]


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
    # TLS connections: what the handshake showed (console.kafka's CertificateFacts), never key material.
    tls_version: str = ""
    server_certificate: Any = None
    client_certificate: Any = None

    @property
    def server_certificate_expired(self) -> bool:
        return _expired(self.server_certificate)

    @property
    def client_certificate_expired(self) -> bool:
        return _expired(self.client_certificate)


def _expired(facts: Any) -> bool:
    return facts is not None and facts.not_after <= dt.datetime.now(dt.UTC)


def _explain(exc: KafkaOperationError) -> str:
    """The operator-facing advice plus Kafka's own detail (address, direction) when it adds something."""
    text = exc.operator_text
    return text if not exc.message or exc.message in text else f"{text} ({exc.message})"


def test_connection(connection: ClusterConnection | ConnectionReport) -> ConnectionReport:
    """Reach the cluster within its timeout; never raises for Kafka or network trouble."""
    if isinstance(connection, ConnectionReport):  # the settings were refused before any connection
        return connection
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
        tls_version=getattr(check, "tls_version", None) or "",
        server_certificate=getattr(check, "server_certificate", None),
        client_certificate=getattr(check, "client_certificate", None),
    )


def connection_or_report(
    cluster: Cluster, secrets: Mapping[str, str]
) -> ClusterConnection | ConnectionReport:
    try:
        return connection_for(cluster, secrets)
    except ValueError as exc:  # the connection's own checks (messages name settings, never values)
        return ConnectionReport(
            ok=False, error=f"The settings cannot be used: {exc}.", error_name="INVALID_SETTINGS"
        )


def active_controller(gateway, info) -> tuple[int | None, str]:
    """The active controller: the metadata quorum's leader (DescribeQuorum, through the brokers or
    the controllers), never Metadata's controller id (under KRaft, a random live broker). ``info``
    is a ClusterInfo or a connection check (both carry endpoint_type and controller_id)."""
    leader, unknown, _ = controller_and_quorum(gateway, info)
    return leader, unknown


def controller_and_quorum(gateway, info) -> tuple[int | None, str, Any]:
    """``active_controller``'s answer and the ``QuorumInfo`` it was read from (voters, their lag),
    None when it was not asked (DescribeCluster to the controllers named the leader) or failed."""
    if info is not None and info.endpoint_type == "controller":
        return info.controller_id, "", None  # DescribeCluster to the controllers names the active one
    try:
        quorum = gateway.describe_quorum()
    except KafkaOperationError as exc:
        return None, f"DescribeQuorum failed: {exc.operator_text}", None
    return quorum.leader_id, "", quorum


def server_certificate_of(cluster: Cluster) -> Any:
    """The certificate the brokers present (console.kafka's facts, read by a TLS probe within the connect
    timeout): None without TLS or when no address answers; the page shows it and warns before it expires."""
    if not cluster.security_protocol.endswith("SSL"):
        return None
    try:
        return server_certificate(connection_for(cluster))
    except (KafkaOperationError, OSError, ValueError, SecretUnreadable):
        return None
