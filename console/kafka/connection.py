"""Cluster connection settings, checked when made (the two clients' configurations are built from
them in ``clientconf.py``; reaching the addresses is ``diagnose.probe_addresses``)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from . import tls
from .sasl import KerberosSettings, OAuthSettings
from .tls import TLS_VERSIONS

__all__ = [
    "ClusterConnection",
    "KerberosSettings",
    "OAuthSettings",
    "SASL_MECHANISMS",
    "SECURITY_PROTOCOLS",
    "TLS_VERSIONS",
    "parse_addresses",
]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI")

_ADDRESS = re.compile(r"^(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<host>[A-Za-z0-9_.\-]+)):(?P<port>\d{1,5})$")


@functools.lru_cache(maxsize=256)
def parse_addresses(value: str) -> tuple[tuple[str, int], ...]:
    """Parse ``"host:port,host:port"``; raise ValueError naming the bad entry. Remembered per value:
    every page builds its cluster's connection (and so checks its addresses) again, ~1.5 ms for a
    list of 200 brokers."""
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
    """How to reach one cluster: bootstrap servers OR bootstrap controllers (KIP-919), and how to
    secure it. Hashable (the gateway registry keys on it); no secret appears in its repr."""

    bootstrap_servers: str = ""
    bootstrap_controllers: str = ""
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ca_cert_pem: str | None = field(default=None, repr=False)
    request_timeout_s: float = 15.0
    connect_timeout_s: float = 5.0
    client_cert_pem: str | None = field(default=None, repr=False)
    client_key_pem: str | None = field(default=None, repr=False)
    ssl_check_hostname: bool = True
    tls_min_version: str = "TLSv1.2"
    oauth: OAuthSettings | None = None
    kerberos: KerberosSettings | None = None

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
        self._check_sasl()
        self._check_tls()
        if self.request_timeout_s <= 0 or self.connect_timeout_s <= 0:
            raise ValueError("timeouts must be positive")

    def _check_sasl(self) -> None:
        mech = self.sasl_mechanism
        if not self.uses_sasl:
            if mech or self.oauth or self.kerberos:
                raise ValueError(
                    f"a SASL mechanism needs the SASL_PLAINTEXT or SASL_SSL protocol, not {self.security_protocol}"
                )
            return
        if mech not in SASL_MECHANISMS:
            raise ValueError(f"SASL mechanism must be one of {', '.join(SASL_MECHANISMS)}")
        if mech == "OAUTHBEARER":
            if self.oauth is None:
                raise ValueError(
                    "OAUTHBEARER needs the OAuth settings (token endpoint, client id and secret)"
                )
        elif self.oauth is not None:
            raise ValueError("OAuth settings are used only with the OAUTHBEARER mechanism")
        if mech == "GSSAPI":
            if self.kerberos is None:
                raise ValueError("GSSAPI needs the Kerberos settings (principal and keytab)")
        elif self.kerberos is not None:
            raise ValueError("Kerberos settings are used only with the GSSAPI mechanism")
        if mech in ("OAUTHBEARER", "GSSAPI"):
            if self.sasl_username or self.sasl_password:
                raise ValueError(f"{mech} takes no SASL user name or password")
        elif not self.sasl_username:
            raise ValueError(f"a SASL user name is required for {mech}")

    def _check_tls(self) -> None:
        if self.tls_min_version not in TLS_VERSIONS:
            raise ValueError(f"the minimum TLS version must be one of {', '.join(TLS_VERSIONS)}")
        if not self.uses_ssl:
            given = [
                what
                for what, value in (
                    ("a CA bundle", self.ca_cert_pem),
                    ("a client certificate", self.client_cert_pem),
                    ("a client key", self.client_key_pem),
                    ("hostname verification off", not self.ssl_check_hostname),
                    ("a minimum TLS version", self.tls_min_version != "TLSv1.2"),
                )
                if value
            ]
            if given:
                raise ValueError(
                    f"TLS settings ({', '.join(given)}) need the SSL or SASL_SSL protocol, "
                    f"not {self.security_protocol}"
                )
            return
        if self.ca_cert_pem:
            tls.check_ca_bundle(self.ca_cert_pem)
        if bool(self.client_cert_pem) != bool(self.client_key_pem):
            raise ValueError("give both the client certificate and its private key, or neither")
        if self.client_cert_pem and self.client_key_pem:
            tls.check_client_pair(self.client_cert_pem, self.client_key_pem)

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
