"""Secured sandboxes for the end-to-end and secret-leak tests (issue 31): one test PKI made at run time,
and one small sandbox per kind of listener the sandbox speaks (TLS, mTLS, SASL_SSL SCRAM-SHA-512,
SASL_SSL OAUTHBEARER validated against the test identity provider's JWKS, and a TLS listener whose
certificate names another host).

Nothing here is committed key material: every key is made when a test session starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from console.kafka import close_all
from sandbox.pki import CA, make_ca
from sandbox.security import SandboxSecurity
from sandbox.testing import running_sandbox

SCRAM_USER = "console"


@dataclass(frozen=True)
class Pki:
    """The run's CA, the brokers' certificate (127.0.0.1, localhost), the console's client certificate,
    a certificate for another host, and a CA the brokers never used."""

    ca: CA
    other_ca: CA
    server: tuple[str, str]
    elsewhere: tuple[str, str] = field(repr=False)  # names only kafka.elsewhere.example
    client: tuple[str, str] = field(repr=False)


def make_pki() -> Pki:
    ca = make_ca("Secured Sandbox CA")
    return Pki(
        ca=ca,
        other_ca=make_ca("Some Other CA"),
        server=ca.issue("sandbox-broker", sans=("localhost", "127.0.0.1")),
        elsewhere=ca.issue("kafka.elsewhere.example", sans=("kafka.elsewhere.example",)),
        client=ca.issue("console", client=True, organization="Console Tests"),
    )


def pkcs12_bytes(cert_pem: str, key_pem: str, passphrase: str, ca_pem: str = "") -> bytes:
    """A PKCS#12 keystore of the client certificate and key (and the CA), encrypted with ``passphrase``."""
    cert = x509.load_pem_x509_certificate(cert_pem.encode())
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    cas = [x509.load_pem_x509_certificate(ca_pem.encode())] if ca_pem else None
    return pkcs12.serialize_key_and_certificates(
        b"console",
        key,  # type: ignore[arg-type]
        cert,
        cas,
        serialization.BestAvailableEncryption(passphrase.encode()),
    )


@contextmanager
def tls_sandbox(
    ca: CA, protocol: str = "SSL", *, client_ca: bool = False, users=None, controllers: int = 0
) -> Iterator:
    """A one-broker sandbox serving ``protocol`` with a certificate of ``ca`` for localhost and 127.0.0.1,
    asking for a client certificate of ``ca`` when ``client_ca``, with SCRAM ``users`` under SASL_SSL."""
    cert, key = ca.issue("localhost", sans=("localhost", "127.0.0.1"))
    extra = {"client_ca_pem": ca.cert_pem} if client_ca else {}
    if users is not None:
        extra["users"] = users
    security = SandboxSecurity(protocol=protocol, server_cert_pem=cert, server_key_pem=key, **extra)
    with running_sandbox(brokers=1, controllers=controllers, speed=0, security=security) as cluster:
        yield cluster


def encrypted_key_pem(key_pem: str, passphrase: str) -> str:
    """The key as a passphrase-protected PKCS#8 PEM."""
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(passphrase.encode()),
    ).decode()


@dataclass
class SecuredSandboxes:
    """The running sandboxes by kind: ssl, mtls, scram, oauth, elsewhere (bootstrap addresses)."""

    pki: Pki
    clusters: dict
    scram_password: str = field(repr=False)

    def bootstrap(self, kind: str) -> str:
        return self.clusters[kind].bootstrap_servers


@contextmanager
def secured_sandboxes(provider, scram_password: str) -> Iterator[SecuredSandboxes]:
    """The sandboxes of every kind on a new PKI, the OAuth one checking ``provider``'s tokens; on leaving, the
    console's cached clients are closed (they would keep reconnecting) and the sandboxes stopped."""
    with ExitStack() as stack:
        yield start_secured_sandboxes(
            stack,
            make_pki(),
            scram_password,
            jwks_url=provider.jwks_url,
            issuer=provider.issuer,
            audience=provider.audience,
        )
        close_all()


def start_secured_sandboxes(
    stack: ExitStack, pki: Pki, scram_password: str, jwks_url: str, issuer: str, audience: str
) -> SecuredSandboxes:
    """One broker and one controller per kind (enough for a topic list and a topic), all stopped by ``stack``."""
    server_cert, server_key = pki.server
    kinds = {
        "ssl": SandboxSecurity(protocol="SSL", server_cert_pem=server_cert, server_key_pem=server_key),
        "mtls": SandboxSecurity(
            protocol="SSL",
            server_cert_pem=server_cert,
            server_key_pem=server_key,
            client_ca_pem=pki.ca.cert_pem,
        ),
        "scram": SandboxSecurity(
            protocol="SASL_SSL",
            server_cert_pem=server_cert,
            server_key_pem=server_key,
            mechanisms=("SCRAM-SHA-512",),
            users={SCRAM_USER: scram_password},
        ),
        "oauth": SandboxSecurity(
            protocol="SASL_SSL",
            server_cert_pem=server_cert,
            server_key_pem=server_key,
            mechanisms=("OAUTHBEARER",),
            users={},
            oauth_jwks_url=jwks_url,
            oauth_audience=audience,
            oauth_issuer=issuer,
        ),
        "elsewhere": SandboxSecurity(
            protocol="SSL", server_cert_pem=pki.elsewhere[0], server_key_pem=pki.elsewhere[1]
        ),
    }
    clusters = {
        kind: stack.enter_context(running_sandbox(brokers=1, controllers=1, security=security, seed=kind))
        for kind, security in kinds.items()
    }
    return SecuredSandboxes(pki=pki, clusters=clusters, scram_password=scram_password)
