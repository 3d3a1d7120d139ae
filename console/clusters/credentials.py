"""Reading the credentials an operator uploads for a secured cluster, with `cryptography`.

CA bundles, client certificate chains, private keys (a passphrase-protected PEM is opened with the
passphrase, which is never kept), PKCS#12 files (converted to a chain and an unencrypted PKCS#8 key),
keytabs (kept as base64) and OAUTHBEARER SASL extensions. Every bad input is a ValidationError whose
text names what is wrong and never quotes a secret.
"""

from __future__ import annotations

import base64
import binascii
import re

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from django.core.exceptions import ValidationError

from console.kafka import CertificateFacts
from console.kafka.tls import certificate_facts as facts_of

__all__ = [
    "certificate_facts",
    "client_credentials",
    "from_pkcs12",
    "keytab_text",
    "parse_certificates",
    "parse_extensions",
    "pem_text",
]

MAX_PEM_CHARS = 256 * 1024
MAX_PKCS12_BYTES = 256 * 1024
MAX_KEYTAB_BYTES = 64 * 1024
MAX_EXTENSIONS = 20
_PEM_CERT = re.compile(r"-----BEGIN CERTIFICATE-----\s*(.*?)\s*-----END CERTIFICATE-----", re.DOTALL)
# Kafka's OAuthBearerClientInitialResponse: extension names are letters, values printable ASCII, and
# "auth" is reserved for the token itself.
_EXTENSION_NAME = re.compile(r"[A-Za-z]+")
_EXTENSION_VALUE = re.compile(r"[\x21-\x7E \t]+")
_KEY_TYPES = (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey, ed448.Ed448PrivateKey)


def parse_certificates(pem: str, label: str) -> list[x509.Certificate]:
    """Every certificate of a PEM text (a CA bundle or a chain), each checked; the error names the
    bad one ("certificate 2 of 3"). Anything but certificates (a private key pasted by mistake) is refused."""
    text = (pem or "").strip()
    if not text:
        return []
    if len(text) > MAX_PEM_CHARS:
        raise ValidationError(f"{label}: at most {MAX_PEM_CHARS // 1024} KiB of PEM text.")
    if "PRIVATE KEY-----" in text:
        raise ValidationError(f"{label}: this holds a private key; paste certificates only.")
    blocks = _PEM_CERT.findall(text)
    if not blocks:
        raise ValidationError(
            f"{label}: paste PEM certificates, each from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----."
        )
    leftover = _PEM_CERT.sub("", text).strip()
    if leftover and not all(
        line.strip().startswith(("#", "subject=", "issuer=")) for line in leftover.splitlines()
    ):
        raise ValidationError(f"{label}: text outside the BEGIN/END CERTIFICATE lines is not a certificate.")
    certs = []
    for i, body in enumerate(blocks, 1):
        block = f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"
        try:
            certs.append(x509.load_pem_x509_certificate(block.encode("ascii")))
        except (ValueError, UnicodeEncodeError) as exc:
            where = f"certificate {i} of {len(blocks)}" if len(blocks) > 1 else "the certificate"
            raise ValidationError(f"{label}: {where} is not a valid X.509 certificate ({exc}).") from None
    return certs


def certificate_facts(pem: str) -> list[CertificateFacts]:
    """Subject, issuer, expiry and fingerprint of each certificate of a stored (already checked) PEM."""
    try:
        return [facts_of(c) for c in parse_certificates(pem, "certificate")]
    except ValidationError:
        return []


def pem_text(certs: list[x509.Certificate]) -> str:
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certs)


def _pkcs8(key) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")


def _check_pair(cert: x509.Certificate, key) -> None:
    if isinstance(key, dsa.DSAPrivateKey) or not isinstance(key, _KEY_TYPES):
        raise ValidationError("Client private key: use an RSA, EC or Ed25519/Ed448 key.")
    if cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    ) != key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    ):
        raise ValidationError(
            "Client private key: it does not belong to the client certificate (the first certificate of the "
            f"chain, {cert.subject.rfc4514_string()}). Upload the key that was issued with it."
        )


def _load_key(pem: str, passphrase: str):
    text = (pem or "").strip()
    if len(text) > MAX_PEM_CHARS:
        raise ValidationError(f"Client private key: at most {MAX_PEM_CHARS // 1024} KiB of PEM text.")
    if "PRIVATE KEY-----" not in text:
        raise ValidationError(
            "Client private key: paste a PEM private key (-----BEGIN PRIVATE KEY-----, "
            "-----BEGIN ENCRYPTED PRIVATE KEY-----, -----BEGIN RSA PRIVATE KEY----- or -----BEGIN EC PRIVATE KEY-----)."
        )
    password = passphrase.encode() if passphrase else None
    try:
        return serialization.load_pem_private_key(text.encode("ascii", "replace"), password=password)
    except TypeError:
        if password is None:
            raise ValidationError(
                "Client private key: it is encrypted; enter its passphrase (used once to open it, never stored)."
            ) from None
        raise ValidationError(
            "Client key passphrase: the key is not encrypted; leave the passphrase blank."
        ) from None
    except ValueError:
        if password is not None and "ENCRYPTED" in text:
            raise ValidationError(
                "Client key passphrase: it does not open the private key (wrong passphrase)."
            ) from None
        raise ValidationError("Client private key: not a readable PEM private key.") from None
    except Exception:  # cryptography raises UnsupportedAlgorithm for unknown key types
        raise ValidationError("Client private key: not a supported private key.") from None


def client_credentials(cert_pem: str, key_pem: str, passphrase: str = "") -> tuple[str, str]:
    """The client certificate chain (first: the client's own certificate) and its key as unencrypted
    PKCS#8 PEM, checked to belong together; the passphrase only opens the key."""
    chain = parse_certificates(cert_pem, "Client certificate")
    if not chain:
        raise ValidationError("Client certificate: paste the PEM certificate (chain) that goes with the key.")
    key = _load_key(key_pem, passphrase)
    _check_pair(chain[0], key)
    return pem_text(chain), _pkcs8(key)


def from_pkcs12(data: bytes, password: str) -> tuple[str, str, str]:
    """A PKCS#12 file (.p12/.pfx) opened with its password (never stored): the client chain PEM, its key
    as unencrypted PKCS#8 PEM, and the CA certificates it carries (PEM, may be "")."""
    if not data:
        raise ValidationError("PKCS#12 file: the file is empty.")
    if len(data) > MAX_PKCS12_BYTES:
        raise ValidationError(f"PKCS#12 file: at most {MAX_PKCS12_BYTES // 1024} KiB.")
    try:
        bundle = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError:
        raise ValidationError(
            "PKCS#12 password: it does not open the file (wrong password), or the file is not PKCS#12."
        ) from None
    except Exception:
        raise ValidationError("PKCS#12 file: not a readable PKCS#12 (.p12/.pfx) file.") from None
    if bundle.key is None or bundle.cert is None:
        raise ValidationError("PKCS#12 file: it must hold the client certificate and its private key.")
    _check_pair(bundle.cert.certificate, bundle.key)
    extra = [c.certificate for c in bundle.additional_certs]
    issued = [c for c in extra if c.subject != c.issuer]  # intermediates travel with the client certificate
    roots = [c for c in extra if c.subject == c.issuer]
    return pem_text([bundle.cert.certificate, *issued]), _pkcs8(bundle.key), pem_text(roots)


def keytab_text(data: bytes) -> str:
    """A keytab file as the base64 text the registry stores; checked to be a keytab (format 0x0502)."""
    if not data:
        raise ValidationError("Keytab: the file is empty.")
    if len(data) > MAX_KEYTAB_BYTES:
        raise ValidationError(f"Keytab: at most {MAX_KEYTAB_BYTES // 1024} KiB.")
    if data[:2] not in (b"\x05\x02", b"\x05\x01"):
        raise ValidationError("Keytab: not a Kerberos keytab file (made by ktutil or kadmin's ktadd).")
    return base64.b64encode(data).decode("ascii")


def keytab_from_base64(text: str) -> bytes:
    """The keytab bytes of a base64 field (API, CLI); ValidationError when it is not base64."""
    try:
        return base64.b64decode((text or "").strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError("Keytab: not valid base64.") from None


def parse_extensions(text: str) -> tuple[tuple[str, str], ...]:
    """SASL/OAUTHBEARER extensions (KIP-342), one name=value a line, as Kafka checks them: names are
    letters only, "auth" is reserved, values printable ASCII. Sorted pairs, blank lines skipped."""
    pairs: dict[str, str] = {}
    for number, raw in enumerate((text or "").splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        name, sep, value = line.partition("=")
        name, value = name.strip(), value.strip()
        if not sep:
            raise ValidationError(f"SASL extensions, line {number}: write name=value.")
        if not _EXTENSION_NAME.fullmatch(name):
            raise ValidationError(
                f"SASL extensions, line {number}: the name '{name[:40]}' may hold letters only (Kafka's rule)."
            )
        if name == "auth":
            raise ValidationError(f"SASL extensions, line {number}: 'auth' is reserved for the token itself.")
        if not _EXTENSION_VALUE.fullmatch(value):
            raise ValidationError(
                f"SASL extensions, line {number}: the value of '{name}' must be printable ASCII, not empty."
            )
        if name in pairs:
            raise ValidationError(f"SASL extensions, line {number}: '{name}' is given twice.")
        pairs[name] = value
    if len(pairs) > MAX_EXTENSIONS:
        raise ValidationError(f"SASL extensions: at most {MAX_EXTENSIONS}.")
    return tuple(sorted(pairs.items()))
