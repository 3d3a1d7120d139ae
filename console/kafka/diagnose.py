"""What exactly fails when a cluster cannot be reached: DNS, TCP, TLS, token endpoint, Kerberos.

``check(conn)`` probes in that order with Python's own socket and ssl (every step bounded by the
connect timeout) and raises the first failure as a :class:`KafkaOperationError` whose name says
which step failed and whose message says why (for a refused server certificate: its subject,
issuer and expiry, and OpenSSL's reason: unknown CA, hostname mismatch, expired; a refused client
certificate: the alert; a SASL mechanism the listener does not enable: the ones it does).
Authentication itself is then tried by kafka-python in ``test_connection``. ``probe`` is also what
the gateway runs before its first use (``probe_addresses``), so a server that negotiates
less than the connection's minimum TLS version is refused on both client paths (librdkafka has no
minimum-version property).
"""

from __future__ import annotations

import datetime as dt
import socket
import ssl
import struct
import time
from dataclasses import dataclass

from cryptography import x509

from .connection import ClusterConnection
from .errors import KafkaOperationError, network_error
from .tls import CertificateFacts, certificate_facts, client_certificate, ssl_context

__all__ = ["ConnectionCheck", "TlsPeer", "check", "probe", "probe_addresses", "server_certificate"]

SSL_AUTHENTICATION_FAILED = 57

# OpenSSL alert reasons a server sends when it refuses the client's certificate (or its absence)
_CLIENT_CERT_ALERTS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "certificate required",
    "SSLV3_ALERT_BAD_CERTIFICATE": "bad certificate",
    "TLSV1_ALERT_UNKNOWN_CA": "unknown CA",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED": "certificate expired",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN": "certificate unknown",
    "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE": "unsupported certificate",
    "TLSV1_ALERT_DECRYPT_ERROR": "decrypt error",
}
_VERSION_REASONS = (
    "UNSUPPORTED_PROTOCOL",
    "TLSV1_ALERT_PROTOCOL_VERSION",
    "WRONG_SSL_VERSION",
    "NO_PROTOCOLS_AVAILABLE",
)
_NOT_TLS_REASONS = ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG")


@dataclass(frozen=True)
class ConnectionCheck:
    """The outcome of ``test_connection``: what answered, and the certificates' facts (TLS only)."""

    cluster_id: str | None
    controller_id: int | None
    broker_count: int
    endpoint_type: str
    elapsed_s: float
    server_certificate: CertificateFacts | None = None
    client_certificate: CertificateFacts | None = None
    tls_version: str | None = None


@dataclass(frozen=True)
class TlsPeer:
    """One completed TLS handshake: the address, the version and the server's certificate."""

    address: str
    tls_version: str
    server_certificate: CertificateFacts | None


def _tls_error(name: str, message: str) -> KafkaOperationError:
    return KafkaOperationError(SSL_AUTHENTICATION_FAILED, name, message, False)


def _connect(conn: ClusterConnection, deadline: float) -> tuple[socket.socket, str]:
    """A TCP connection to the first bootstrap address that accepts (DNS and TCP failures named)."""
    failures = []
    for host, port in conn.addresses:
        remaining = max(0.2, deadline - time.monotonic())
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            failures.append(f"{host}:{port} (cannot resolve host: {exc.strerror or exc})")
            continue
        try:
            sock = socket.create_connection((host, port), timeout=remaining)
        except TimeoutError:
            failures.append(f"{host}:{port} (no answer within {conn.connect_timeout_s:g} s)")
        except OSError as exc:
            failures.append(f"{host}:{port} ({exc.strerror or exc})")
        else:
            del infos
            return sock, f"{host}:{port}"
    raise network_error(", ".join(failures) or conn.address_text)


def _facts(der: bytes | None) -> CertificateFacts | None:
    return certificate_facts(x509.load_der_x509_certificate(der)) if der else None


def _describe(facts: CertificateFacts | None) -> str:
    if facts is None:
        return "no certificate"
    return f"subject '{facts.subject}', issuer '{facts.issuer}', valid until {facts.not_after:%Y-%m-%d %H:%M} UTC"


def _unverified_peer(conn: ClusterConnection, deadline: float) -> CertificateFacts | None:
    """The server certificate, read without verifying it (to describe a refused one)."""
    try:
        sock, address = _connect(conn, deadline)
        host = address.rsplit(":", 1)[0].strip("[]")
        with ssl_context(conn, verify=False).wrap_socket(sock, server_hostname=host) as tls_sock:
            return _facts(tls_sock.getpeercert(binary_form=True))
    except (OSError, KafkaOperationError):
        return None


def _request(api_key: int, version: int, body: bytes = b"") -> bytes:
    client_id = b"kafka-operator-console"
    msg = struct.pack(">hhih", api_key, version, 0x7EA1, len(client_id)) + client_id + body
    return struct.pack(">i", len(msg)) + msg


def _read(sock: socket.socket, n: int) -> bytes:
    got = b""
    while len(got) < n:
        chunk = sock.recv(n - len(got))
        if not chunk:
            raise ConnectionResetError("connection closed")
        got += chunk
    return got


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    """Send one request and read its whole answer (after the correlation id). A server that refused
    the client certificate after a TLS 1.3 handshake says so (alert) on this first read."""
    sock.sendall(request)
    (size,) = struct.unpack(">i", _read(sock, 4))
    return _read(sock, size)[4:]


def _sasl_mechanisms(answer: bytes) -> tuple[int, list[str]]:
    """A SaslHandshake v1 answer: (error code, the listener's enabled mechanisms)."""
    code, count = struct.unpack_from(">hi", answer)
    pos, names = 6, []
    for _ in range(max(0, count)):
        (n,) = struct.unpack_from(">h", answer, pos)
        names.append(answer[pos + 2 : pos + 2 + n].decode())
        pos += 2 + n
    return code, names


def _client_cert_note(conn: ClusterConnection) -> str:
    facts = client_certificate(conn)
    if facts is None:
        return "no client certificate is configured"
    note = f"the client certificate is '{facts.subject}' issued by '{facts.issuer}'"
    if facts.not_after <= dt.datetime.now(dt.UTC):
        note += f", EXPIRED on {facts.not_after:%Y-%m-%d %H:%M} UTC"
    return note


def _probe(conn: ClusterConnection, request: bytes) -> tuple[TlsPeer | None, bytes]:
    """Connect (TLS when the connection says so), send ``request``, return the peer and the answer."""
    deadline = time.monotonic() + conn.connect_timeout_s
    sock, address = _connect(conn, deadline)
    host = address.rsplit(":", 1)[0].strip("[]")
    sock.settimeout(max(0.2, deadline - time.monotonic()))
    try:
        if not conn.uses_ssl:
            with sock:
                return None, _exchange(sock, request)
        ctx = ssl_context(conn)
        with ctx.wrap_socket(sock, server_hostname=host) as tls_sock:
            peer = _facts(tls_sock.getpeercert(binary_form=True))
            version = tls_sock.version() or "?"
            return TlsPeer(address, version, peer), _exchange(tls_sock, request)
    except ssl.SSLCertVerificationError as exc:
        peer = _unverified_peer(conn, deadline + conn.connect_timeout_s)
        why = exc.verify_message or exc.reason or "verification failed"
        raise _tls_error(
            "TLS_SERVER_CERTIFICATE_REJECTED",
            f"{address}: the server certificate was not accepted: {why} ({_describe(peer)})",
        ) from None
    except ssl.SSLError as exc:
        reason = exc.reason or ""
        if reason in _CLIENT_CERT_ALERTS:
            raise _tls_error(
                "TLS_CLIENT_CERTIFICATE_REFUSED",
                f"{address}: the server refused the client certificate ({_CLIENT_CERT_ALERTS[reason]}); "
                f"{_client_cert_note(conn)}",
            ) from None
        if reason in _VERSION_REASONS:
            raise _tls_error(
                "TLS_VERSION_REFUSED",
                f"{address}: no TLS version both sides accept (the console requires {conn.tls_min_version} or newer)",
            ) from None
        if reason in _NOT_TLS_REASONS:
            raise _tls_error(
                "TLS_HANDSHAKE_FAILED",
                f"{address}: the server did not answer TLS (is this listener PLAINTEXT?)",
            ) from None
        raise _tls_error(
            "TLS_HANDSHAKE_FAILED", f"{address}: TLS handshake failed: {reason or exc}"
        ) from None
    except TimeoutError:
        raise KafkaOperationError(
            7, "REQUEST_TIMED_OUT", f"{address}: no answer within {conn.connect_timeout_s:g} s", True
        ) from None
    except (OSError, struct.error) as exc:
        if not conn.uses_ssl:
            raise network_error(
                address,
                f"the server closed the connection at the first request (is this listener TLS?): {exc}",
            ) from None
        if conn.client_cert_pem is None:
            detail = "the server closed the connection during the TLS handshake (does it require a client certificate?)"
        else:
            detail = f"the server closed the connection during the TLS handshake ({_client_cert_note(conn)})"
        raise network_error(address, f"{detail}: {getattr(exc, 'strerror', None) or exc}") from None


def server_certificate(conn: ClusterConnection) -> CertificateFacts | None:
    """The server certificate of the first bootstrap address that answers (read unverified, so an
    expired or unknown one is described as well); None for a connection without TLS."""
    if not conn.uses_ssl:
        return None
    return _unverified_peer(conn, time.monotonic() + conn.connect_timeout_s)


def probe(conn: ClusterConnection) -> TlsPeer | None:
    """DNS, TCP, TLS (verified, with the minimum version), and for SASL whether the listener
    enables the mechanism (SaslHandshake: Kafka answers its enabled list): the first failure raised."""
    if not conn.uses_sasl:
        return _probe(conn, _request(18, 0))[0]
    mechanism = (conn.sasl_mechanism or "").encode()
    peer, answer = _probe(conn, _request(17, 1, struct.pack(">h", len(mechanism)) + mechanism))
    code, enabled = _sasl_mechanisms(answer)
    if code == 33:
        raise KafkaOperationError(
            33,
            "UNSUPPORTED_SASL_MECHANISM",
            f"the listener does not enable {conn.sasl_mechanism}; it enables: {', '.join(enabled) or 'none'}",
            False,
        )
    return peer


def check(conn: ClusterConnection) -> TlsPeer | None:
    """:func:`probe`, then the token endpoint or the Kerberos login: the first failure raised.
    (Authentication itself is then tried by kafka-python.)"""
    peer = probe(conn)
    if conn.sasl_mechanism == "OAUTHBEARER" and conn.oauth is not None:
        from .oauth import token_source

        token = token_source(conn.oauth, conn.ca_cert_pem).token(conn.request_timeout_s)
        if token.expires_at <= time.time():
            raise KafkaOperationError(58, "TOKEN_EXPIRED", "the token endpoint answered an expired token")
    if conn.sasl_mechanism == "GSSAPI" and conn.kerberos is not None:
        from . import kerberos

        kerberos.login_for(conn.kerberos).credentials()
    return peer


def probe_addresses(conn: ClusterConnection) -> None:
    """Open a TCP connection to each bootstrap address within the connect timeout.

    Returns as soon as one address accepts; raises NETWORK_EXCEPTION naming every address
    and why it failed when none does. This is how "unreachable" fails fast and precisely.
    """
    if conn.uses_ssl or conn.uses_sasl:
        # a verified TLS handshake with the connection's own minimum version (librdkafka has no
        # minimum-version setting: this is where a server offering less is refused, on both paths)
        # and whether the listener enables the SASL mechanism (librdkafka only logs its answer)
        probe(conn)
        return
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
