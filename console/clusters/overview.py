"""The cluster overview's data (``actions.overview`` reads it from Kafka) and its security panel."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from console.clusters.credentials import certificate_facts
from console.kafka import CertificateFacts, KafkaOperationError
from console.models import Cluster

__all__ = ["Overview", "Security", "security"]


@dataclass(frozen=True)
class Overview:
    """The cluster overview's data; error is set when Kafka could not be reached. ``summary`` (the
    topic counts) and the ages are the page's (``brokers.overview``), from the metadata snapshot."""

    cluster: Cluster
    info: Any = None
    summary: Any = None
    counts_age_s: float | None = None  # how old the metadata snapshot the counts come from is
    states_age_s: float | None = None  # how long ago the brokers' states were read
    states_read_at: float | None = None  # when (epoch seconds): the kept states' identity
    error: KafkaOperationError | None = None
    active_controller: int | None = None  # the KRaft quorum leader; None when it could not be read
    controller_unknown: str = ""  # why it is unknown
    quorum: Any = None  # the QuorumInfo the active controller was read from (None: not asked, or failed)
    brokers: tuple = ()  # BrokerStatus of every registered (or earlier seen) node, by id
    security: Security | None = None  # the TLS/SASL panel

    @property
    def down(self) -> tuple:
        """The nodes that are fenced, unreachable or missing (``KafkaGateway.broker_status``)."""
        return tuple(s for s in self.brokers if s.state != "up")


EXPIRY_WARNING_DAYS = 30


@dataclass(frozen=True)
class CertificateLine:
    """One certificate as the cluster page shows it, with its warning (expired, or within 30 days)."""

    role: str
    facts: CertificateFacts  # a stored certificate's, or the broker's as the TLS probe saw it
    expired: bool
    expiring: bool


@dataclass(frozen=True)
class Security:
    """The cluster page's TLS/SASL panel: how the console authenticates, and what to warn about."""

    protocol: str
    mechanism: str
    tls: bool
    hostname_check_off: bool
    tls_min_version: str
    certificates: tuple[CertificateLine, ...] = ()  # the stored ones: client chain's first, CA bundle
    server: CertificateLine | None = None  # what the brokers presented to the page's probe

    @property
    def warnings(self) -> tuple[CertificateLine, ...]:
        shown = ((self.server,) if self.server else ()) + self.certificates
        return tuple(c for c in shown if c.expired or c.expiring)


def _line(role: str, facts: Any, now: dt.datetime) -> CertificateLine:
    """``facts``: a certificate's subject, issuer and validity (the registry's or the TLS probe's)."""
    expired = facts.not_after <= now
    soon = facts.not_after <= now + dt.timedelta(days=EXPIRY_WARNING_DAYS)
    return CertificateLine(role, facts, expired, soon and not expired)


def security(cluster: Cluster, server: Any = None, now: dt.datetime | None = None) -> Security:
    """The stored certificates' facts (no I/O) and the server's, when a probe read it."""
    now = now or dt.datetime.now(dt.UTC)
    tls = cluster.security_protocol in ("SSL", "SASL_SSL")
    lines = []
    if tls:
        client = certificate_facts(cluster.client_certificate)
        lines += [_line("client", client[0], now)] if client else []
        lines += [_line("CA", facts, now) for facts in certificate_facts(cluster.ca_certificate)]
    return Security(
        protocol=cluster.security_protocol,
        mechanism=cluster.sasl_mechanism if cluster.security_protocol.startswith("SASL") else "",
        tls=tls,
        hostname_check_off=tls and not cluster.ssl_check_hostname,
        tls_min_version=cluster.tls_min_version if tls else "",
        certificates=tuple(lines),
        server=_line("server", server, now) if tls and server is not None else None,
    )
