"""Cluster connection settings and the client configurations derived from them."""

from __future__ import annotations

import re
import socket
import ssl
import time
from dataclasses import dataclass, field

from .errors import KafkaOperationError, network_error

__all__ = ["ClusterConnection", "SECURITY_PROTOCOLS", "SASL_MECHANISMS", "parse_addresses", "probe_addresses"]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

_ADDRESS = re.compile(r"^(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<host>[A-Za-z0-9_.\-]+)):(?P<port>\d{1,5})$")


def parse_addresses(value: str) -> tuple[tuple[str, int], ...]:
    """Parse ``"host:port,host:port"``; raise ValueError naming the bad entry."""
    out = []
    for raw in value.split(","):
        item = raw.strip()
        if not item:
            continue
        m = _ADDRESS.match(item)
        if not m:
            raise ValueError(f"'{item}' is not host:port")
        port = int(m.group("port"))
        if not 0 < port < 65536:
            raise ValueError(f"'{item}': port must be between 1 and 65535")
        out.append((m.group("v6") or m.group("host"), port))
    if not out:
        raise ValueError("at least one host:port is required")
    return tuple(out)


@dataclass(frozen=True)
class ClusterConnection:
    """How to reach one cluster: bootstrap servers OR bootstrap controllers (KIP-919)."""

    bootstrap_servers: str = ""
    bootstrap_controllers: str = ""
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ca_cert_pem: str | None = field(default=None, repr=False)
    request_timeout_s: float = 15.0
    connect_timeout_s: float = 5.0

    def __post_init__(self) -> None:
        servers = (self.bootstrap_servers or "").strip()
        controllers = (self.bootstrap_controllers or "").strip()
        if servers and controllers:
            raise ValueError(
                "give bootstrap servers or bootstrap controllers, not both (KIP-919): "
                "a connection talks either to the brokers or directly to the controller quorum"
            )
        if not servers and not controllers:
            raise ValueError("give bootstrap servers (brokers) or bootstrap controllers (KIP-919)")
        object.__setattr__(self, "bootstrap_servers", servers)
        object.__setattr__(self, "bootstrap_controllers", controllers)
        parse_addresses(servers or controllers)
        if self.security_protocol not in SECURITY_PROTOCOLS:
            raise ValueError(f"security protocol must be one of {', '.join(SECURITY_PROTOCOLS)}")
        if self.uses_sasl:
            if self.sasl_mechanism not in SASL_MECHANISMS:
                raise ValueError(f"SASL mechanism must be one of {', '.join(SASL_MECHANISMS)}")
            if not self.sasl_username:
                raise ValueError("a SASL user name is required for SASL security protocols")
        if self.request_timeout_s <= 0 or self.connect_timeout_s <= 0:
            raise ValueError("timeouts must be positive")

    @property
    def controller_mode(self) -> bool:
        """True when this connection talks directly to the KRaft controllers (KIP-919)."""
        return bool(self.bootstrap_controllers)

    @property
    def addresses(self) -> tuple[tuple[str, int], ...]:
        return parse_addresses(self.bootstrap_controllers or self.bootstrap_servers)

    @property
    def address_text(self) -> str:
        return ",".join(f"{h}:{p}" for h, p in self.addresses)

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL")

    @property
    def uses_ssl(self) -> bool:
        return self.security_protocol.endswith("SSL")

    # -- client configurations ------------------------------------------------------------

    def confluent_config(self) -> dict[str, object]:
        """librdkafka configuration for an AdminClient (broker mode only)."""
        timeout_ms = int(self.request_timeout_s * 1000)
        conf: dict[str, object] = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
            "socket.connection.setup.timeout.ms": max(1000, int(self.connect_timeout_s * 1000)),
            "socket.timeout.ms": max(10, timeout_ms),
            "metadata.request.timeout.ms": max(10, timeout_ms),
            "reconnect.backoff.ms": 100,
            "reconnect.backoff.max.ms": 2000,
            "topic.metadata.refresh.interval.ms": -1,
            "log_level": 0,
            "logger": _SilentLogger(),
            "client.id": "kafka-operator-console",
        }
        if self.uses_sasl:
            conf["sasl.mechanism"] = self.sasl_mechanism
            conf["sasl.username"] = self.sasl_username
            conf["sasl.password"] = self.sasl_password or ""
        if self.uses_ssl and self.ca_cert_pem:
            conf["ssl.ca.pem"] = self.ca_cert_pem
        return conf

    def kafka_python_config(self) -> dict[str, object]:
        """kafka-python KafkaConnectionManager / NetworkSelector configuration."""
        conf: dict[str, object] = {
            "bootstrap_servers": [f"{h}:{p}" for h, p in self.addresses],
            "client_id": "kafka-operator-console",
            "security_protocol": self.security_protocol,
            "request_timeout_ms": int(self.request_timeout_s * 1000),
            "socket_connection_setup_timeout_ms": int(self.connect_timeout_s * 1000),
            "socket_connection_setup_timeout_max_ms": int(self.connect_timeout_s * 1000),
            "reconnect_backoff_ms": 50,
            "reconnect_backoff_max_ms": 1000,
            "receive_message_max_bytes": 512 * 1024 * 1024,
            "metadata_max_age_ms": 24 * 3600 * 1000,
        }
        if self.uses_sasl:
            conf["sasl_mechanism"] = self.sasl_mechanism
            conf["sasl_plain_username"] = self.sasl_username
            conf["sasl_plain_password"] = self.sasl_password or ""
        if self.uses_ssl:
            ctx = (
                ssl.create_default_context(cadata=self.ca_cert_pem)
                if self.ca_cert_pem
                else (ssl.create_default_context())
            )
            conf["ssl_context"] = ctx
        return conf


class _SilentLogger:
    """librdkafka log sink: errors surface through results, not stderr noise."""

    def log(self, *args: object, **kwargs: object) -> None:  # pragma: no cover - trivial
        return None

    def __getattr__(self, name: str):  # debug/info/warning/error/...
        return self.log


def probe_addresses(conn: ClusterConnection) -> None:
    """Open a TCP connection to each bootstrap address within the connect timeout.

    Returns as soon as one address accepts; raises NETWORK_EXCEPTION naming every address
    and why it failed when none does. This is how "unreachable" fails fast and precisely.
    """
    failures = []
    deadline = time.monotonic() + conn.connect_timeout_s
    for host, port in conn.addresses:
        remaining = max(0.2, deadline - time.monotonic())
        try:
            with socket.create_connection((host, port), timeout=remaining):
                return
        except socket.gaierror as exc:
            failures.append(f"{host}:{port} (cannot resolve host: {exc.strerror or exc})")
        except TimeoutError:
            failures.append(f"{host}:{port} (no answer within {conn.connect_timeout_s:g} s)")
        except OSError as exc:
            failures.append(f"{host}:{port} ({exc.strerror or exc})")
    raise (
        network_error(", ".join(failures))
        if failures
        else KafkaOperationError(13, "NETWORK_EXCEPTION", "no address to connect to", True)
    )
