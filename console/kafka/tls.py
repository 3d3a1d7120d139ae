"""TLS material of a cluster connection: PEM checks, certificate facts, and Python's SSLContext.

Checks run when a :class:`~console.kafka.connection.ClusterConnection` is made (cached by the PEM
text, so rebuilding a connection per request costs nothing). Python's ``load_cert_chain`` reads
only files: the client chain and key are written to one mode-0600 file in a private 0700
directory, loaded, and the directory removed at once, before the context is used.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import shutil
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

__all__ = [
    "CertificateFacts",
    "TLS_VERSIONS",
    "certificate_facts",
    "check_ca_bundle",
    "check_client_pair",
    "client_certificate",
    "private_dir",
    "ssl_context",
    "TlsSettings",
]

TLS_VERSIONS = ("TLSv1.2", "TLSv1.3")


class TlsSettings(Protocol):
    """The TLS fields of a connection (``ClusterConnection`` has them; this module sits below it)."""

    ca_cert_pem: str | None
    client_cert_pem: str | None
    client_key_pem: str | None
    tls_min_version: str
    ssl_check_hostname: bool


PY_TLS_VERSION = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


@dataclass(frozen=True)
class CertificateFacts:
    """What the console shows about a certificate (it is public; never key material): a stored
    one's on the registry pages and in the audit trail, a broker's as the TLS handshake showed it."""

    subject: str
    issuer: str
    not_before: dt.datetime
    not_after: dt.datetime
    sans: tuple[str, ...] = ()
    sha256: str = ""

    def expires_within(self, days: int, now: dt.datetime | None = None) -> bool:
        return self.not_after <= (now or dt.datetime.now(dt.UTC)) + dt.timedelta(days=days)

    def expired(self, now: dt.datetime | None = None) -> bool:
        return self.not_after <= (now or dt.datetime.now(dt.UTC))

    def as_json(self) -> dict[str, str]:
        """The audit trail's and the API's view of a stored certificate."""
        return {
            "subject": self.subject,
            "issuer": self.issuer,
            "not_after": self.not_after.isoformat(),
            "sha256": self.sha256,
        }


def certificate_facts(cert: x509.Certificate) -> CertificateFacts:
    """Subject, issuer, validity, DNS/IP names and SHA-256 fingerprint of one X.509 certificate."""
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        sans = tuple(str(v) for v in ext.get_values_for_type(x509.DNSName)) + tuple(
            str(v) for v in ext.get_values_for_type(x509.IPAddress)
        )
    except x509.ExtensionNotFound:
        sans = ()
    return CertificateFacts(
        subject=cert.subject.rfc4514_string(),
        issuer=cert.issuer.rfc4514_string(),
        not_before=cert.not_valid_before_utc,
        not_after=cert.not_valid_after_utc,
        sans=sans,
        sha256=cert.fingerprint(hashes.SHA256()).hex(":").upper(),
    )


@functools.lru_cache(maxsize=256)
def _certificates(pem: str) -> tuple[x509.Certificate, ...]:
    try:
        certs = tuple(x509.load_pem_x509_certificates(pem.encode()))
    except ValueError:
        certs = ()
    return certs


def check_ca_bundle(pem: str) -> None:
    """Raise ValueError unless ``pem`` holds at least one PEM certificate."""
    if not _certificates(pem):
        raise ValueError("the CA bundle must be one or more PEM certificates (-----BEGIN CERTIFICATE-----)")


@functools.lru_cache(maxsize=256)
def check_client_pair(cert_pem: str, key_pem: str) -> None:
    """Raise ValueError (naming no key material) unless the chain and the unencrypted key match."""
    certs = _certificates(cert_pem)
    if not certs:
        raise ValueError(
            "the client certificate must be a PEM certificate chain (-----BEGIN CERTIFICATE-----)"
        )
    try:
        key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    except TypeError:
        raise ValueError("the client private key is encrypted: give it unencrypted (PKCS#8 PEM)") from None
    except (ValueError, Exception):  # noqa: BLE001 - cryptography raises several types; none is shown
        raise ValueError("the client private key is not a readable PEM private key") from None
    fmt = serialization.PublicFormat.SubjectPublicKeyInfo
    enc = serialization.Encoding.DER
    if key.public_key().public_bytes(enc, fmt) != certs[0].public_key().public_bytes(enc, fmt):
        raise ValueError(
            "the client private key does not belong to the client certificate (first in the chain)"
        )


def client_certificate(conn: TlsSettings) -> CertificateFacts | None:
    """The facts of the connection's client (mTLS) certificate, the first of its chain."""
    if not conn.client_cert_pem:
        return None
    certs = _certificates(conn.client_cert_pem)
    return certificate_facts(certs[0]) if certs else None


@contextlib.contextmanager
def private_dir(prefix: str = "console-") -> Iterator[str]:
    """A fresh 0700 directory, removed with everything in it on exit."""
    path = tempfile.mkdtemp(prefix=prefix)  # mkdtemp makes it 0700
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def write_private(directory: str, name: str, data: bytes) -> str:
    """Write ``data`` to ``directory/name`` with mode 0600 (created so, never wider)."""
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def ssl_context(conn: TlsSettings, *, verify: bool = True) -> ssl.SSLContext:
    """Python's client context for ``conn``: its CA bundle (else the system's), hostname check,
    minimum TLS version and client certificate. ``verify=False`` (diagnosis only) accepts any
    server certificate so that its facts can be read."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = PY_TLS_VERSION[conn.tls_min_version]
    if verify:
        ctx.check_hostname = conn.ssl_check_hostname
        ctx.verify_mode = ssl.CERT_REQUIRED
        if conn.ca_cert_pem:
            ctx.load_verify_locations(cadata=conn.ca_cert_pem)
        else:
            ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if conn.client_cert_pem and conn.client_key_pem:
        with private_dir("console-tls-") as directory:
            chain = write_private(
                directory,
                "client.pem",
                (conn.client_cert_pem.strip() + "\n" + conn.client_key_pem.strip() + "\n").encode(),
            )
            ctx.load_cert_chain(chain)
    return ctx
