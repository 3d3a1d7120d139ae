"""Secured listeners: what a sandbox's nodes require (TLS, mTLS, SASL) and the server TLS context.

``SandboxSecurity`` plays the part of a Kafka listener's security settings, shared by every node
(brokers and controllers alike)::

    protocol            listener security protocol: SSL, SASL_PLAINTEXT or SASL_SSL
    server_cert_pem     ssl.keystore.* (the node's certificate chain, PEM) and
    server_key_pem      its unencrypted private key (PEM)
    client_ca_pem       ssl.client.auth=required + ssl.truststore.*: client certificates are
                        required and must chain to this CA bundle (mTLS)
    mechanisms          sasl.enabled.mechanisms (OAUTHBEARER only when oauth_jwks_url is set)
    users               PLAIN and SCRAM credentials (user -> password)
    oauth_jwks_url      sasl.oauthbearer.jwks.endpoint.url (http(s):// or file://)
    oauth_audience      sasl.oauthbearer.expected.audience
    oauth_issuer        sasl.oauthbearer.expected.issuer
    tls_min_version     the lowest TLS version served (ssl.enabled.protocols); TLSv1.2 or TLSv1.3
    tls_max_version     the highest (None: the highest the runtime supports)
    connections_max_reauth_ms  connections.max.reauth.ms: every SASL session's longest life
                        (0: only OAUTHBEARER sessions end, when their token expires)
"""

from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass, field

PROTOCOLS = ("SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
TLS_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
ANONYMOUS = "User:ANONYMOUS"


@dataclass(frozen=True)
class SandboxSecurity:
    """How every node's listener is secured (see the module docstring for each field)."""

    protocol: str
    server_cert_pem: str | None = None
    server_key_pem: str | None = field(default=None, repr=False)
    client_ca_pem: str | None = None
    mechanisms: tuple[str, ...] = MECHANISMS
    users: dict[str, str] = field(default_factory=lambda: {"admin": "admin-secret"}, repr=False)
    oauth_jwks_url: str | None = None
    oauth_audience: str | None = None
    oauth_issuer: str | None = None
    tls_min_version: str = "TLSv1.2"
    tls_max_version: str | None = None
    oauth_clock_skew_s: int = 30  # sasl.oauthbearer.clock.skew.seconds
    connections_max_reauth_ms: int = 0

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {self.protocol!r}")
        if self.tls and not (self.server_cert_pem and self.server_key_pem):
            raise ValueError(f"{self.protocol} needs server_cert_pem and server_key_pem")
        if not self.tls and self.client_ca_pem:
            raise ValueError("client_ca_pem (mTLS) needs SSL or SASL_SSL")
        unknown = set(self.mechanisms) - set(MECHANISMS)
        if unknown:
            raise ValueError(f"unsupported SASL mechanisms: {', '.join(sorted(unknown))}")
        if self.sasl and not self.enabled_mechanisms:
            raise ValueError("a SASL listener needs at least one usable mechanism")
        for version in (self.tls_min_version, self.tls_max_version):
            if version is not None and version not in TLS_VERSIONS:
                raise ValueError(f"TLS version must be one of {', '.join(TLS_VERSIONS)}, not {version!r}")

    @property
    def tls(self) -> bool:
        """Whether connections are TLS (SSL, SASL_SSL)."""
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        """Whether clients must authenticate with SASL before any other request."""
        return self.protocol.startswith("SASL_")

    @property
    def enabled_mechanisms(self) -> list[str]:
        """The mechanisms SaslHandshake offers: OAUTHBEARER needs a JWKS to validate tokens with."""
        return [m for m in self.mechanisms if m != "OAUTHBEARER" or self.oauth_jwks_url]

    def server_ssl_context(self) -> ssl.SSLContext | None:
        """The listeners' TLS context (None for SASL_PLAINTEXT): TLS 1.2+ unless narrowed,
        client certificates required and verified against ``client_ca_pem`` when it is set."""
        if not self.tls:
            return None
        assert self.server_cert_pem and self.server_key_pem
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = TLS_VERSIONS[self.tls_min_version]
        if self.tls_max_version:
            ctx.maximum_version = TLS_VERSIONS[self.tls_max_version]
        _load_chain(ctx, self.server_cert_pem, self.server_key_pem)
        if self.client_ca_pem:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(cadata=self.client_ca_pem)
        return ctx


def _load_chain(ctx: ssl.SSLContext, cert_pem: str, key_pem: str) -> None:
    """ssl loads certificates and keys only from files: write them 0600 in a private directory
    that is removed right after."""
    with tempfile.TemporaryDirectory(prefix="sandbox-tls-") as tmp:  # mode 0700
        cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        for path, text in ((cert, cert_pem), (key, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
        ctx.load_cert_chain(cert, key)


def ssl_principal(ssl_object: ssl.SSLObject | None) -> str:
    """Kafka's principal for a TLS connection: ``User:<subject DN>`` of the client certificate
    (RFC 2253 order, as DefaultKafkaPrincipalBuilder's default mapping), else ANONYMOUS."""
    if ssl_object is None:
        return ANONYMOUS
    der = ssl_object.getpeercert(binary_form=True)
    if not der:
        return ANONYMOUS
    from cryptography import x509

    return "User:" + x509.load_der_x509_certificate(der).subject.rfc4514_string()


__all__ = ["ANONYMOUS", "MECHANISMS", "PROTOCOLS", "SandboxSecurity", "ssl_principal"]
