"""A test PKI made at run time: a CA and the server and client certificates it issues.

Nothing here is ever written to the repository: tests and ``python -m sandbox --tls-dir`` make
fresh keys for every run. Keys are EC P-256 by default (instant to make) or RSA 2048; private keys
are unencrypted PKCS#8 PEM, certificates PEM. Server certificates carry ``serverAuth``, client
certificates ``clientAuth``; both name their hosts as DNS and IP subject alternative names.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
DEFAULT_LIFETIME = dt.timedelta(days=30)
BACKDATE = dt.timedelta(hours=1)  # tolerate clocks a little behind


def _new_key(key_type: str) -> PrivateKey:
    if key_type == "ec":
        return ec.generate_private_key(ec.SECP256R1())
    if key_type == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    raise ValueError(f"unknown key type {key_type!r} (ec or rsa)")


def _key_pem(key: PrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _cert_pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _validity(
    not_before: dt.datetime | None, not_after: dt.datetime | None
) -> tuple[dt.datetime, dt.datetime]:
    now = dt.datetime.now(dt.UTC)
    start = not_before or now - BACKDATE
    return start, not_after or now + DEFAULT_LIFETIME


def _san(names: tuple[str, ...] | list[str]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


def _certificate(
    subject: x509.Name, issuer: x509.Name, key: PrivateKey, start: dt.datetime, end: dt.datetime, *, ca: bool
) -> x509.CertificateBuilder:
    """What every certificate here carries: names, key, serial, validity, basic constraints (a CA:
    path length 0), key usage (a CA signs certificates and CRLs; a leaf signs, and an RSA leaf
    enciphers keys for TLS 1.2's RSA suites) and its subject key id."""
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=not ca and isinstance(key, rsa.RSAPrivateKey),
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )


@dataclass(frozen=True)
class CA:
    """A certificate authority: its certificate and (unencrypted PKCS#8) key, both PEM."""

    cert_pem: str
    key_pem: str = field(repr=False)

    def issue(
        self,
        common_name: str,
        sans: tuple[str, ...] | list[str] = (),
        client: bool = False,
        not_before: dt.datetime | None = None,
        not_after: dt.datetime | None = None,
        key_type: str = "ec",
        organization: str | None = None,
    ) -> tuple[str, str]:
        """Issue a server (``client=False``) or client certificate; return (cert PEM, key PEM).

        ``sans`` are host names or IP addresses (each becomes a DNS or IP SAN). The validity
        defaults to one hour ago .. 30 days from now; pass ``not_after`` in the past for an
        expired certificate.
        """
        ca_cert = x509.load_pem_x509_certificate(self.cert_pem.encode())
        ca_key = serialization.load_pem_private_key(self.key_pem.encode(), password=None)
        key = _new_key(key_type)
        start, end = _validity(not_before, not_after)
        attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
        if organization:
            attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        builder = (
            _certificate(x509.Name(attrs), ca_cert.subject, key, start, end, ca=False)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),  # type: ignore[arg-type]
                critical=False,
            )
        )
        if sans:
            builder = builder.add_extension(_san(sans), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
        return _cert_pem(cert), _key_pem(key)


def make_ca(
    name: str = "Sandbox Test CA",
    not_before: dt.datetime | None = None,
    not_after: dt.datetime | None = None,
    key_type: str = "ec",
) -> CA:
    """A self-signed CA (basic constraints CA, path length 0, keyCertSign + cRLSign)."""
    key = _new_key(key_type)
    start, end = _validity(not_before, not_after)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = _certificate(subject, subject, key, start, end, ca=True).sign(key, hashes.SHA256())
    return CA(_cert_pem(cert), _key_pem(key))


TLS_DIR_FILES = ("ca.pem", "ca-key.pem", "server.pem", "server-key.pem", "client.pem", "client-key.pem")
TLS_DIR_LIFETIME = dt.timedelta(days=365)


def tls_dir(path: str, hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")) -> dict[str, str]:
    """A CA, a server certificate for ``hosts`` and a client certificate (CN=console) as PEM files
    in ``path`` (made 0700, keys 0600); existing files are kept while the certificates are valid,
    so a restarted sandbox keeps the CA its clients trust. Returns the file paths by name."""
    import os

    os.makedirs(path, mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)
    files = {name: os.path.join(path, name) for name in TLS_DIR_FILES}
    if not all(os.path.exists(f) for f in files.values()) or _expiring(files):
        end = dt.datetime.now(dt.UTC) + TLS_DIR_LIFETIME
        ca = make_ca("Sandbox Test CA", not_after=end)
        server = ca.issue(hosts[0], sans=hosts, not_after=end)
        client = ca.issue("console", client=True, not_after=end)
        pems = (ca.cert_pem, ca.key_pem, *server, *client)
        for name, text in zip(TLS_DIR_FILES, pems, strict=True):
            fd = os.open(files[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
    return files


def _expiring(files: dict[str, str]) -> bool:
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    for name in ("ca.pem", "server.pem", "client.pem"):
        with open(files[name], "rb") as fh:
            if x509.load_pem_x509_certificate(fh.read()).not_valid_after_utc < soon:
                return True
    return False


__all__ = ["CA", "make_ca", "tls_dir"]
