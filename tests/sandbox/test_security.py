"""Secured sandbox listeners (issue 31): TLS, mTLS, SASL PLAIN/SCRAM/OAUTHBEARER, seen by both clients.

Every case runs confluent-kafka (librdkafka) and kafka-python 3 against the sandbox, as the
console does; the assertions name what each client reports for each refusal.
"""

from __future__ import annotations

import datetime as dt
import logging
import socket
import ssl
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient
from kafka.protocol.metadata import ApiVersionsRequest

from sandbox import SandboxCluster
from sandbox.pki import CA, make_ca
from sandbox.security import SandboxSecurity
from sandbox.testing import running_sandbox
from tests.sandbox.conftest import addr, call, recv_exact

REFUSED_S, REFUSED_MS = 1.5, 1500  # a refused client reports the cause within milliseconds


# ---- the PKI of this module (its CA and the brokers' pair: tests/conftest.py) ----------------
@pytest.fixture(scope="module")
def client_pair(ca: CA) -> tuple[str, str]:
    return ca.issue("console", sans=(), client=True, organization="Ops")


def _files(tmp: Path, **pems: str) -> dict[str, str]:
    out = {}
    for name, text in pems.items():
        path = tmp / f"{name}.pem"
        path.write_text(text)
        path.chmod(0o600)
        out[name] = str(path)
    return out


# ---- the two clients ------------------------------------------------------------------------
class _Lines(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def confluent_metadata(
    cluster: SandboxCluster, conf: dict[str, Any], timeout: float = 10
) -> tuple[Any, list[str]]:
    """(metadata or None, what librdkafka reported: its errors and log lines) for one list_topics."""
    errors: list[str] = []
    logger = logging.getLogger(f"rdkafka.test.{id(errors)}")
    logger.propagate = False
    logger.addHandler(_Lines(errors))
    admin = AdminClient(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "error_cb": lambda err: errors.append(err.str()),
            "logger": logger,
            "reconnect.backoff.ms": 100,
            **conf,
        }
    )
    try:
        return admin.list_topics(timeout=timeout), errors
    except KafkaException as exc:
        errors.append(str(exc))
        return None, errors
    finally:
        admin.poll(0.2)  # serves error_cb and the log lines


def python_cluster(cluster: SandboxCluster, timeout_ms: int = 8000, **conf: Any) -> tuple[Any, str | None]:
    """(the brokers kafka-python's admin client sees or None, on failure the exception and what
    kafka-python logged: it raises only a bootstrap timeout and logs the cause)."""
    from kafka.net.compat import KafkaNetClient

    made: list[Any] = []

    class Client(KafkaNetClient):  # to stop it when the admin client's constructor fails
        def __init__(self, **configs: Any) -> None:
            super().__init__(**configs)
            made.append(self)

    lines: list[str] = []
    handler = _Lines(lines)
    logging.getLogger("kafka").addHandler(handler)
    # the console (when Django is set up) collapses kafka-python's repeated lines with a filter on
    # its loggers; lift it for this call so that each case sees its own cause
    loggers = [
        logging.getLogger(n) for n in list(logging.root.manager.loggerDict) if n.split(".")[0] == "kafka"
    ]
    filters = {lg.name: list(lg.filters) for lg in loggers}
    for lg in loggers:
        lg.filters.clear()
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=cluster.bootstrap_servers,
            bootstrap_timeout_ms=timeout_ms,
            request_timeout_ms=timeout_ms,
            kafka_client=Client,
            **conf,
        )
    except Exception as exc:  # the bootstrap failure kafka-python raises
        # kafka-python 3.0.12 leaves the failed client's IO thread reconnecting forever: stop it
        for client in made:
            client.close()
            client._manager._net.stop()
        return None, "\n".join([f"{type(exc).__name__}: {exc}", *lines])
    finally:
        logging.getLogger("kafka").removeHandler(handler)
        for lg in loggers:
            lg.filters[:] = filters[lg.name]
    try:
        return sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"]), None
    finally:
        admin.close()


def tls_call(hostport: str, ctx: ssl.SSLContext, request: Any, version: int) -> Any:
    """One request over TLS with the raw codec (any node, controllers included)."""
    raw = socket.create_connection(addr(hostport), timeout=5)
    sock = ctx.wrap_socket(raw, server_hostname="localhost")
    try:
        return call(hostport, request, version, sock=sock)
    finally:
        sock.close()


def client_ctx(
    ca_pem: str, cert_pem: str | None = None, key_pem: str | None = None, tmp: Path | None = None
) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=ca_pem)
    if cert_pem and key_pem and tmp:
        f = _files(tmp, c=cert_pem, k=key_pem)
        ctx.load_cert_chain(f["c"], f["k"])
    return ctx


API_VERSIONS = ApiVersionsRequest(client_software_name="t", client_software_version="1")


# ---- TLS ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tls_cluster(server_pair: tuple[str, str]) -> Iterator[SandboxCluster]:
    cert, key = server_pair
    sec = SandboxSecurity(protocol="SSL", server_cert_pem=cert, server_key_pem=key)
    with running_sandbox(brokers=2, controllers=1, speed=0, security=sec) as c:
        c.create_topic("secured", partitions=2, replication_factor=2)
        yield c


def test_it_serves_metadata_over_tls_to_both_clients(tls_cluster, ca, tmp_path):
    md, errors = confluent_metadata(tls_cluster, {"security.protocol": "SSL", "ssl.ca.pem": ca.cert_pem})
    assert md is not None, errors
    assert sorted(md.brokers) == [1, 2]
    assert {t: len(md.topics[t].partitions) for t in md.topics} == {"secured": 2}

    f = _files(tmp_path, ca=ca.cert_pem)
    brokers, error = python_cluster(tls_cluster, security_protocol="SSL", ssl_cafile=f["ca"])
    assert (brokers, error) == ([1, 2], None)


def test_it_secures_every_node_listener_brokers_and_controllers(tls_cluster, ca):
    nodes = tls_cluster.bootstrap_servers.split(",") + tls_cluster.bootstrap_controllers.split(",")
    assert len(nodes) == 3
    for hostport in nodes:
        resp = tls_call(hostport, client_ctx(ca.cert_pem), API_VERSIONS, 3)
        assert resp.error_code == 0 and resp.api_keys
        # plaintext on a TLS port gets no Kafka answer: the TLS layer ends the connection
        sock = socket.create_connection(addr(hostport), timeout=5)
        API_VERSIONS.with_header(correlation_id=1, client_id="plain")
        sock.sendall(API_VERSIONS.encode(version=3, header=True, framed=True))
        answer = sock.recv(64)
        assert answer == b"" or answer[0] == 0x15  # closed, or a TLS alert record
        sock.close()


def test_it_is_refused_by_a_client_that_does_not_trust_the_server_ca(tls_cluster):
    other = make_ca("Someone Else's CA")
    md, errors = confluent_metadata(
        tls_cluster, {"security.protocol": "SSL", "ssl.ca.pem": other.cert_pem}, REFUSED_S
    )
    assert md is None
    assert any("certificate verify failed" in e for e in errors), errors


def test_it_fails_hostname_verification_for_a_name_not_in_the_certificate(ca, tmp_path):
    cert, key = ca.issue("kafka.example.org", sans=("kafka.example.org",))
    sec = SandboxSecurity(protocol="SSL", server_cert_pem=cert, server_key_pem=key)
    with running_sandbox(brokers=1, controllers=0, speed=0, security=sec) as c:
        md, errors = confluent_metadata(c, {"security.protocol": "SSL", "ssl.ca.pem": ca.cert_pem}, REFUSED_S)
        assert md is None
        assert any("certificate verify failed" in e for e in errors), errors
        f = _files(tmp_path, ca=ca.cert_pem)
        brokers, error = python_cluster(c, REFUSED_MS, security_protocol="SSL", ssl_cafile=f["ca"])
        assert brokers is None
        assert "IP address mismatch" in error or "Hostname mismatch" in error, error
        # the same listener without hostname verification works
        brokers, error = python_cluster(
            c, security_protocol="SSL", ssl_cafile=f["ca"], ssl_check_hostname=False
        )
        assert (brokers, error) == ([1], None)


def test_it_serves_only_the_tls_versions_it_is_given(server_pair, ca):
    cert, key = server_pair
    sec = SandboxSecurity(protocol="SSL", server_cert_pem=cert, server_key_pem=key, tls_max_version="TLSv1.2")
    with running_sandbox(brokers=1, controllers=0, speed=0, security=sec) as c:
        md, errors = confluent_metadata(c, {"security.protocol": "SSL", "ssl.ca.pem": ca.cert_pem})
        assert md is not None, errors
        ctx = client_ctx(ca.cert_pem)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        with pytest.raises(ssl.SSLError):
            tls_call(c.bootstrap_servers, ctx, API_VERSIONS, 3)


# ---- mTLS ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mtls_cluster(server_pair: tuple[str, str], ca: CA) -> Iterator[SandboxCluster]:
    cert, key = server_pair
    sec = SandboxSecurity(protocol="SSL", server_cert_pem=cert, server_key_pem=key, client_ca_pem=ca.cert_pem)
    with running_sandbox(brokers=1, controllers=1, speed=0, security=sec) as c:
        yield c


def test_it_accepts_a_client_certificate_from_its_ca_and_names_the_principal_after_it(
    mtls_cluster, ca, client_pair, tmp_path, caplog
):
    cert, key = client_pair
    caplog.set_level(logging.INFO, logger="sandbox.server")
    md, errors = confluent_metadata(
        mtls_cluster,
        {
            "security.protocol": "SSL",
            "ssl.ca.pem": ca.cert_pem,
            "ssl.certificate.pem": cert,
            "ssl.key.pem": key,
        },
    )
    assert md is not None, errors
    assert sorted(md.brokers) == [1]
    f = _files(tmp_path, ca=ca.cert_pem, cert=cert, key=key)
    brokers, error = python_cluster(
        mtls_cluster,
        security_protocol="SSL",
        ssl_cafile=f["ca"],
        ssl_certfile=f["cert"],
        ssl_keyfile=f["key"],
    )
    assert (brokers, error) == ([1], None)
    assert "node 1: connection from 127.0.0.1 as User:CN=console,O=Ops" in caplog.text
    # the controller's listener requires the certificate too
    ctx = client_ctx(ca.cert_pem, cert, key, tmp_path)
    assert tls_call(mtls_cluster.bootstrap_controllers, ctx, API_VERSIONS, 3).error_code == 0


def _refused(
    cluster: SandboxCluster, ca: CA, tmp: Path, cert: str | None, key: str | None
) -> tuple[list[str], str]:
    conf = {"security.protocol": "SSL", "ssl.ca.pem": ca.cert_pem}
    files = {"ssl_cafile": _files(tmp, ca=ca.cert_pem)["ca"]}
    if cert and key:
        conf |= {"ssl.certificate.pem": cert, "ssl.key.pem": key}
        f = _files(tmp, cert=cert, key=key)
        files |= {"ssl_certfile": f["cert"], "ssl_keyfile": f["key"]}
    md, errors = confluent_metadata(cluster, conf, REFUSED_S)
    assert md is None
    brokers, error = python_cluster(cluster, REFUSED_MS, security_protocol="SSL", **files)
    assert brokers is None
    return errors, error or ""


def _expired(ca: CA) -> tuple[str, str]:
    now = dt.datetime.now(dt.UTC)
    return ca.issue(
        "console", client=True, not_before=now - dt.timedelta(days=10), not_after=now - dt.timedelta(days=1)
    )


# What each client reports when the mTLS listener refuses it: (the client's pair, librdkafka's alert,
# kafka-python's error). TLS 1.3: the server asks for a certificate after the client finished its side,
# so the refusal arrives as an alert on the client's first read.
REFUSED_CLIENTS = {
    "without-a-certificate": (
        lambda ca: (None, None),
        "Receive failed: error:0A00045C:SSL routines::tlsv13 alert certificate required",
        "KafkaConnectionError: [SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED] tlsv13 alert certificate required",
    ),
    "certificate-from-another-ca": (
        lambda ca: make_ca("Rogue CA").issue("console", client=True),
        "Receive failed: error:0A000418:SSL routines::tlsv1 alert unknown ca",
        "KafkaConnectionError: [SSL: TLSV1_ALERT_UNKNOWN_CA] tlsv1 alert unknown ca",
    ),
    "expired-certificate": (
        _expired,
        "Receive failed: error:0A000415:SSL routines::ssl/tls alert certificate expired",
        "KafkaConnectionError: [SSL: SSLV3_ALERT_CERTIFICATE_EXPIRED] sslv3 alert certificate expired",
    ),
}


@pytest.mark.parametrize("case", REFUSED_CLIENTS)
def test_it_refuses_a_client(mtls_cluster, ca, tmp_path, case):
    pair, librdkafka_alert, python_error = REFUSED_CLIENTS[case]
    errors, error = _refused(mtls_cluster, ca, tmp_path, *pair(ca))
    assert any(librdkafka_alert in e for e in errors), errors
    assert "KafkaTimeoutError: Unable to bootstrap" in error, error
    assert python_error in error, error


def test_it_sends_the_refusal_alert_on_a_raw_handshake_without_a_certificate(mtls_cluster, ca):
    # the TLS 1.3 client finishes its side first; the refusal arrives as an alert on the first read
    sock = client_ctx(ca.cert_pem).wrap_socket(
        socket.create_connection(addr(mtls_cluster.bootstrap_servers), timeout=5), server_hostname="localhost"
    )
    API_VERSIONS.with_header(correlation_id=1, client_id="nocert")
    sock.sendall(API_VERSIONS.encode(version=3, header=True, framed=True))
    with pytest.raises(ssl.SSLError, match="TLSV13_ALERT_CERTIFICATE_REQUIRED"):
        recv_exact(sock, 4)
    sock.close()


# ---- SASL PLAIN and SCRAM ----------------------------------------------------------------------
USERS = {"admin": "admin-secret", "alice": "alice-pw"}
GENERIC = "Authentication failed during authentication due to invalid credentials with SASL mechanism {}"


@pytest.fixture(scope="module")
def sasl_cluster() -> Iterator[SandboxCluster]:
    sec = SandboxSecurity(
        protocol="SASL_PLAINTEXT", mechanisms=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"), users=USERS
    )
    with running_sandbox(brokers=1, controllers=1, speed=0, security=sec) as c:
        yield c


def _sasl(mechanism: str, user: str, password: str, protocol: str = "SASL_PLAINTEXT") -> tuple[dict, dict]:
    confluent = {
        "security.protocol": protocol,
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }
    python = {
        "security_protocol": protocol,
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }
    return confluent, python


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_it_authenticates_both_clients_with_sasl(sasl_cluster, mechanism, caplog):
    caplog.set_level(logging.INFO, logger="sandbox.server")
    confluent, python = _sasl(mechanism, "alice", "alice-pw")
    md, errors = confluent_metadata(sasl_cluster, confluent)
    assert md is not None, errors
    assert sorted(md.brokers) == [1]
    assert python_cluster(sasl_cluster, **python) == ([1], None)
    assert caplog.text.count(f"127.0.0.1 authenticated as User:alice with {mechanism}") >= 2


@pytest.mark.parametrize(
    ("mechanism", "message"),
    [
        ("PLAIN", "Authentication failed: Invalid username or password"),
        ("SCRAM-SHA-256", GENERIC.format("SCRAM-SHA-256")),
        ("SCRAM-SHA-512", GENERIC.format("SCRAM-SHA-512")),
    ],
)
@pytest.mark.parametrize(("user", "password"), [("alice", "wrong"), ("mallory", "alice-pw")])
def test_it_refuses_a_wrong_password_or_an_unknown_user_with_kafkas_message(
    sasl_cluster, mechanism, message, user, password
):
    confluent, python = _sasl(mechanism, user, password)
    md, errors = confluent_metadata(sasl_cluster, confluent, REFUSED_S)
    assert md is None
    assert any(f"SASL authentication error: {message} (after" in e for e in errors), errors
    brokers, error = python_cluster(sasl_cluster, REFUSED_MS, **python)
    assert brokers is None
    assert f"[Error 58] SaslAuthenticationFailedError: SaslAuthenticationFailedError: {message}" in error, (
        error
    )


def test_it_refuses_a_mechanism_that_is_not_enabled(sasl_cluster):
    confluent, python = _sasl("OAUTHBEARER", "alice", "x")  # enabled only with a JWKS
    confluent = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "oauth_cb": lambda _: ("t", 9e9),
    }
    md, errors = confluent_metadata(sasl_cluster, confluent, REFUSED_S)
    assert md is None
    assert any(
        "Unsupported SASL mechanism: broker's supported mechanisms: PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" in e
        for e in errors
    ), errors
    sec = SandboxSecurity(protocol="SASL_PLAINTEXT", mechanisms=("SCRAM-SHA-512",), users=USERS)
    with running_sandbox(brokers=1, controllers=0, speed=0, security=sec) as c:
        confluent, python = _sasl("PLAIN", "alice", "alice-pw")
        md, errors = confluent_metadata(c, confluent, REFUSED_S)
        assert md is None
        assert any("broker's supported mechanisms: SCRAM-SHA-512" in e for e in errors), errors
        brokers, error = python_cluster(c, REFUSED_MS, **python)
        assert brokers is None
        assert "UnsupportedSaslMechanismError" in error, error


def test_it_authenticates_scram_over_tls_with_a_client_certificate(
    server_pair, ca, client_pair, tmp_path, caplog
):
    cert, key = server_pair
    sec = SandboxSecurity(
        protocol="SASL_SSL", server_cert_pem=cert, server_key_pem=key, client_ca_pem=ca.cert_pem, users=USERS
    )
    caplog.set_level(logging.INFO, logger="sandbox.server")
    ccert, ckey = client_pair
    with running_sandbox(brokers=2, controllers=1, speed=0, security=sec) as c:
        confluent, python = _sasl("SCRAM-SHA-512", "admin", "admin-secret", "SASL_SSL")
        tls = {"ssl.ca.pem": ca.cert_pem, "ssl.certificate.pem": ccert, "ssl.key.pem": ckey}
        md, errors = confluent_metadata(c, confluent | tls)
        assert md is not None, errors
        assert sorted(md.brokers) == [1, 2]
        f = _files(tmp_path, ca=ca.cert_pem, cert=ccert, key=ckey)
        files = {"ssl_cafile": f["ca"], "ssl_certfile": f["cert"], "ssl_keyfile": f["key"]}
        assert python_cluster(c, **python, **files) == ([1, 2], None)
        # the SASL principal, not the certificate's, names the connection
        assert "authenticated as User:admin with SCRAM-SHA-512" in caplog.text
        # without the client certificate the TLS layer refuses before SASL starts
        md, errors = confluent_metadata(c, confluent | {"ssl.ca.pem": ca.cert_pem}, REFUSED_S)
        assert md is None
        assert any("tlsv13 alert certificate required" in e for e in errors), errors


# ---- the SASL exchange on the wire -------------------------------------------------------------
def _raw(cluster: SandboxCluster) -> socket.socket:
    return socket.create_connection(addr(cluster.bootstrap_servers), timeout=5)


def _handshake(cluster: SandboxCluster, mechanism: str, version: int = 1) -> tuple[socket.socket, object]:
    """A new raw connection to the first broker and the SaslHandshake answer on it."""
    from kafka.protocol.sasl import SaslHandshakeRequest

    sock = _raw(cluster)
    return sock, call(
        cluster.bootstrap_servers, SaslHandshakeRequest(mechanism=mechanism), version, sock=sock
    )


def _bearer(cluster: SandboxCluster, token: str, version: int = 2) -> tuple[socket.socket, Any]:
    """A new raw connection, its OAUTHBEARER handshake (which must succeed) and the SaslAuthenticate
    answer to RFC 7628's client-first message carrying ``token``."""
    from kafka.protocol.sasl import SaslAuthenticateRequest

    sock, hs = _handshake(cluster, "OAUTHBEARER")
    assert hs.error_code == 0
    first = f"n,,\x01auth=Bearer {token}\x01\x01".encode()
    return sock, call(
        cluster.bootstrap_servers, SaslAuthenticateRequest(auth_bytes=first), version, sock=sock
    )


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionError:
        return True


def test_it_closes_a_connection_whose_first_request_is_not_part_of_the_sasl_handshake(sasl_cluster):
    from kafka.protocol.metadata import MetadataRequest

    sock = _raw(sasl_cluster)
    req = MetadataRequest(topics=None, allow_auto_topic_creation=False)
    req.with_header(correlation_id=1, client_id="early")
    sock.sendall(req.encode(version=12, header=True, framed=True))
    assert _closed(sock)  # no answer: Kafka's InvalidRequestException during the handshake
    sock.close()
    # after ApiVersions, still only the handshake may come
    sock = _raw(sasl_cluster)
    assert call(sasl_cluster.bootstrap_servers, API_VERSIONS, 3, sock=sock).error_code == 0
    req = MetadataRequest(topics=None, allow_auto_topic_creation=False)
    req.with_header(correlation_id=2, client_id="early")
    sock.sendall(req.encode(version=12, header=True, framed=True))
    assert _closed(sock)
    sock.close()


def test_it_answers_illegal_sasl_state_to_another_request_after_the_handshake(sasl_cluster):
    from kafka.protocol.metadata import MetadataRequest

    sock, hs = _handshake(sasl_cluster, "PLAIN")
    assert (hs.error_code, hs.mechanisms) == (0, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
    md = call(
        sasl_cluster.bootstrap_servers,
        MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="t")]),
        12,
        sock=sock,
    )
    assert [(t.name, t.error_code) for t in md.topics] == [("t", 34)]  # ILLEGAL_SASL_STATE
    assert _closed(sock)
    sock.close()


def test_it_answers_unsupported_sasl_mechanism_with_the_enabled_list_then_closes(sasl_cluster):
    sock, hs = _handshake(sasl_cluster, "GSSAPI")
    assert (hs.error_code, hs.mechanisms) == (33, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
    assert _closed(sock)
    sock.close()


def test_it_authenticates_plain_over_sasl_authenticate_and_then_serves_requests(sasl_cluster):
    from kafka.protocol.sasl import SaslAuthenticateRequest

    sock, hs = _handshake(sasl_cluster, "PLAIN")
    host = sasl_cluster.bootstrap_servers
    assert hs.error_code == 0
    auth = call(host, SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00alice-pw"), 2, sock=sock)
    assert (auth.error_code, auth.error_message, auth.auth_bytes, auth.session_lifetime_ms) == (
        0,
        None,
        b"",
        0,
    )
    assert call(host, API_VERSIONS, 3, sock=sock).error_code == 0
    again = call(host, SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00alice-pw"), 2, sock=sock)
    assert (again.error_code, again.error_message) == (
        34,
        "SaslAuthenticate request received after successful authentication",
    )
    sock.close()


def test_it_exchanges_raw_tokens_after_a_v0_handshake(sasl_cluster):
    host = sasl_cluster.bootstrap_servers
    sock, hs = _handshake(sasl_cluster, "PLAIN", version=0)
    assert hs.error_code == 0
    token = b"\x00alice\x00alice-pw"
    sock.sendall(struct.pack(">i", len(token)) + token)
    assert recv_exact(sock, 4) == b"\x00\x00\x00\x00"  # PLAIN's empty challenge, size-prefixed
    assert call(host, API_VERSIONS, 3, sock=sock).error_code == 0
    sock.close()
    sock, hs = _handshake(sasl_cluster, "PLAIN", version=0)
    assert hs.error_code == 0
    token = b"\x00alice\x00nope"
    sock.sendall(struct.pack(">i", len(token)) + token)
    assert _closed(sock)  # v0 has no error response: the connection just ends
    sock.close()


# ---- SASL OAUTHBEARER --------------------------------------------------------------------------
class Jwks:
    """An identity provider's JWKS endpoint (http.server in a thread) and its signing keys."""

    def __init__(self) -> None:
        import http.server
        import json
        import threading

        from joserfc.jwk import RSAKey

        self.keys = {"k1": RSAKey.generate_key(2048, parameters={"kid": "k1"})}
        self.published = ["k1"]
        jwks = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                body = json.dumps(
                    {"keys": [jwks.keys[k].as_dict(private=False) for k in jwks.published]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def token(self, kid: str = "k1", signer: str | None = None, **claims: Any) -> str:
        from joserfc import jwt

        now = int(dt.datetime.now(dt.UTC).timestamp())
        body = {"sub": "console-svc", "aud": "kafka", "iss": "https://idp.test", "iat": now, "exp": now + 300}
        body.update(claims)
        return jwt.encode({"alg": "RS256", "kid": kid}, body, self.keys[signer or kid])


@pytest.fixture(scope="module")
def jwks() -> Iterator[Jwks]:
    j = Jwks()
    yield j
    j.server.shutdown()


@pytest.fixture(scope="module")
def oauth_cluster(jwks: Jwks) -> Iterator[SandboxCluster]:
    sec = SandboxSecurity(
        protocol="SASL_PLAINTEXT",
        mechanisms=("SCRAM-SHA-512", "OAUTHBEARER"),
        oauth_jwks_url=jwks.url,
        oauth_audience="kafka",
        oauth_issuer="https://idp.test",
    )
    with running_sandbox(brokers=1, controllers=1, speed=0, security=sec) as c:
        yield c


def _oauth(token: str) -> tuple[dict, dict]:
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        def token(self) -> str:
            return token

    # librdkafka is told the token lasts an hour whatever it says, so that the sandbox judges it
    far = dt.datetime.now(dt.UTC).timestamp() + 3600
    confluent = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "oauth_cb": lambda _: (token, far),
    }
    python = {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "OAUTHBEARER",
        "sasl_oauth_token_provider": Provider(),
    }
    return confluent, python


def test_it_authenticates_both_clients_with_a_valid_token(oauth_cluster, jwks, caplog):
    caplog.set_level(logging.INFO, logger="sandbox.server")
    confluent, python = _oauth(jwks.token())
    md, errors = confluent_metadata(oauth_cluster, confluent)
    assert md is not None, errors
    assert sorted(md.brokers) == [1]
    assert python_cluster(oauth_cluster, **python) == ([1], None)
    assert caplog.text.count("127.0.0.1 authenticated as User:console-svc with OAUTHBEARER") >= 2


def _invalid_token(cluster: SandboxCluster, token: str, caplog: Any) -> str:
    caplog.set_level(logging.INFO, logger="sandbox.server")
    confluent, python = _oauth(token)
    md, errors = confluent_metadata(cluster, confluent, REFUSED_S)
    assert md is None
    assert any('SASL authentication error: {"status":"invalid_token"} (after' in e for e in errors), errors
    brokers, error = python_cluster(cluster, REFUSED_MS, **python)
    assert brokers is None
    assert (
        '[Error 58] SaslAuthenticationFailedError: SaslAuthenticationFailedError: {"status":"invalid_token"}'
        in error
    )
    failures = [r.getMessage() for r in caplog.records if "OAUTHBEARER authentication from" in r.getMessage()]
    assert failures
    return failures[-1]  # the sandbox's log says why (the client is told only invalid_token)


def test_it_refuses_an_expired_token(oauth_cluster, jwks, caplog):
    now = int(dt.datetime.now(dt.UTC).timestamp())
    why = _invalid_token(oauth_cluster, jwks.token(iat=now - 600, exp=now - 60), caplog)
    assert "(claims: expired_token" in why, why


def test_it_accepts_a_token_expired_within_the_clock_skew_but_its_session_ends_at_once(oauth_cluster, jwks):
    # Kafka's session lifetime is the token's remaining life, never negative: 0 here, so the
    # connection authenticates and is closed at its next request
    now = int(dt.datetime.now(dt.UTC).timestamp())
    sock, auth = _bearer(oauth_cluster, jwks.token(iat=now - 600, exp=now - 10), version=1)
    assert (auth.error_code, auth.session_lifetime_ms) == (0, 0)
    API_VERSIONS.with_header(correlation_id=5, client_id="late")
    sock.sendall(API_VERSIONS.encode(version=3, header=True, framed=True))
    assert _closed(sock)
    sock.close()


def test_it_gives_the_session_the_tokens_lifetime_and_lets_the_client_reauthenticate(
    oauth_cluster, jwks, caplog
):
    from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

    caplog.set_level(logging.INFO, logger="sandbox.server")
    now = int(dt.datetime.now(dt.UTC).timestamp())
    host = oauth_cluster.bootstrap_servers
    sock = _raw(oauth_cluster)

    def authenticate(token: str) -> Any:
        assert call(host, SaslHandshakeRequest(mechanism="OAUTHBEARER"), 1, sock=sock).error_code == 0
        return call(
            host,
            SaslAuthenticateRequest(auth_bytes=f"n,,\x01auth=Bearer {token}\x01\x01".encode()),
            2,
            sock=sock,
        )

    first_exp = now + 3
    auth = authenticate(jwks.token(exp=first_exp))
    assert auth.error_code == 0 and 0 < auth.session_lifetime_ms <= 3000
    assert call(host, API_VERSIONS, 3, sock=sock).error_code == 0
    # KIP-368: a new handshake on the open connection renews the session with a fresh token
    again = authenticate(jwks.token(exp=now + 600))
    assert again.error_code == 0 and 590_000 < again.session_lifetime_ms <= 600_000
    import time

    time.sleep(
        max(0.0, first_exp - time.time()) + 0.3
    )  # past the first token's expiry: the renewed session serves
    assert call(host, API_VERSIONS, 3, sock=sock).error_code == 0
    # another principal may not take the connection over
    denied = authenticate(jwks.token(sub="someone-else"))
    assert (denied.error_code, denied.error_message) == (
        58,
        "Cannot change principals during re-authentication from User.console-svc: User.someone-else",
    )
    assert _closed(sock)
    sock.close()
    assert "re-authenticated as User:console-svc with OAUTHBEARER" in caplog.text


def test_it_closes_a_connection_whose_session_expired_without_reauthentication(oauth_cluster, jwks):
    import time

    now = int(dt.datetime.now(dt.UTC).timestamp())
    sock, auth = _bearer(oauth_cluster, jwks.token(exp=now + 1))
    assert auth.error_code == 0
    time.sleep(1.5)
    API_VERSIONS.with_header(correlation_id=9, client_id="expired")
    sock.sendall(API_VERSIONS.encode(version=3, header=True, framed=True))
    assert _closed(sock)
    sock.close()


def test_it_ends_plain_and_scram_sessions_after_connections_max_reauth_ms(jwks):
    from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

    sec = SandboxSecurity(
        protocol="SASL_PLAINTEXT", mechanisms=("PLAIN",), users=USERS, connections_max_reauth_ms=60_000
    )
    with running_sandbox(brokers=1, controllers=0, speed=0, security=sec) as c:
        sock = _raw(c)
        assert (
            call(c.bootstrap_servers, SaslHandshakeRequest(mechanism="PLAIN"), 1, sock=sock).error_code == 0
        )
        auth = call(c.bootstrap_servers, SaslAuthenticateRequest(auth_bytes=b"\x00bob\x00x"), 1, sock=sock)
        assert auth.error_code == 58
        sock.close()
        sock = _raw(c)
        assert (
            call(c.bootstrap_servers, SaslHandshakeRequest(mechanism="PLAIN"), 1, sock=sock).error_code == 0
        )
        auth = call(
            c.bootstrap_servers, SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00alice-pw"), 1, sock=sock
        )
        assert (auth.error_code, auth.session_lifetime_ms) == (0, 60_000)
        sock.close()


def test_it_refuses_a_token_for_another_audience(oauth_cluster, jwks, caplog):
    why = _invalid_token(oauth_cluster, jwks.token(aud="another-service"), caplog)
    assert "(claims: invalid_claim Invalid claim: 'aud')" in why, why


def test_it_refuses_a_token_from_another_issuer(oauth_cluster, jwks, caplog):
    why = _invalid_token(oauth_cluster, jwks.token(iss="https://evil.test"), caplog)
    assert "(claims: invalid_claim Invalid claim: 'iss')" in why, why


def test_it_refuses_a_token_whose_signature_does_not_match_the_jwks_key(oauth_cluster, jwks, caplog):
    from joserfc.jwk import RSAKey

    jwks.keys["forged"] = RSAKey.generate_key(2048, parameters={"kid": "k1"})  # claims to be k1
    why = _invalid_token(oauth_cluster, jwks.token(kid="k1", signer="forged"), caplog)
    assert "(signature: bad_signature)" in why, why


def test_it_refuses_a_token_signed_by_a_key_the_jwks_does_not_have_after_fetching_it_again(
    oauth_cluster, jwks, caplog
):
    from joserfc.jwk import RSAKey

    jwks.keys["k9"] = RSAKey.generate_key(2048, parameters={"kid": "k9"})  # not published
    validator = oauth_cluster.sasl_realm.validator
    before = validator.fetches
    why = _invalid_token(oauth_cluster, jwks.token(kid="k9"), caplog)
    assert f"(no key with kid 'k9' in the JWKS at {jwks.url})" in why, why
    assert validator.fetches > before  # an unknown kid makes it fetch the JWKS again


def test_it_picks_up_a_rotated_key_by_fetching_the_jwks_again(oauth_cluster, jwks):
    from joserfc.jwk import RSAKey

    confluent, _ = _oauth(jwks.token())
    assert confluent_metadata(oauth_cluster, confluent)[0] is not None  # the JWKS is cached now
    jwks.keys["k2"] = RSAKey.generate_key(2048, parameters={"kid": "k2"})
    jwks.published.append("k2")
    confluent, python = _oauth(jwks.token(kid="k2", sub="rotated"))
    md, errors = confluent_metadata(oauth_cluster, confluent)
    assert md is not None, errors
    assert python_cluster(oauth_cluster, **python) == ([1], None)


def test_it_answers_the_json_error_challenge_then_fails_on_the_clients_x01(oauth_cluster, jwks):
    from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

    host = oauth_cluster.bootstrap_servers
    sock, challenge = _bearer(oauth_cluster, jwks.token(aud="nope"))
    assert (challenge.error_code, challenge.auth_bytes) == (0, b'{"status":"invalid_token"}')
    final = call(host, SaslAuthenticateRequest(auth_bytes=b"\x01"), 2, sock=sock)
    assert (final.error_code, final.error_message) == (58, '{"status":"invalid_token"}')
    assert _closed(sock)
    sock.close()
    # a message that is not RFC 7628's gets the generic answer at once
    sock = _raw(oauth_cluster)
    assert call(host, SaslHandshakeRequest(mechanism="OAUTHBEARER"), 1, sock=sock).error_code == 0
    bad = call(host, SaslAuthenticateRequest(auth_bytes=b"Bearer x"), 2, sock=sock)
    assert (bad.error_code, bad.error_message) == (58, GENERIC.format("OAUTHBEARER"))
    sock.close()


def test_it_takes_sasl_extensions_and_an_authorization_id_matching_the_subject(oauth_cluster, jwks):
    from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

    host = oauth_cluster.bootstrap_servers
    for authzid, expected in (("console-svc", (0, None)), ("someone-else", (58, None))):
        sock = _raw(oauth_cluster)
        assert call(host, SaslHandshakeRequest(mechanism="OAUTHBEARER"), 1, sock=sock).error_code == 0
        first = f"n,a={authzid},\x01auth=Bearer {jwks.token()}\x01logicalCluster=lkc-1\x01\x01".encode()
        resp = call(host, SaslAuthenticateRequest(auth_bytes=first), 2, sock=sock)
        assert resp.error_code == expected[0], resp
        if resp.error_code:
            assert resp.error_message == (
                "Authentication failed: Client requested an authorization id (someone-else) that is different "
                "from the token's principal name (console-svc)"
            )
        sock.close()


def test_it_requires_sasl_on_the_controllers_too(sasl_cluster):
    import scramp
    from kafka.protocol.admin import DescribeClusterRequest
    from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

    host = sasl_cluster.bootstrap_controllers
    describe = DescribeClusterRequest(include_cluster_authorized_operations=False, endpoint_type=2)
    sock = socket.create_connection(addr(host), timeout=5)
    describe.with_header(correlation_id=1, client_id="early")
    sock.sendall(describe.encode(version=1, header=True, framed=True))
    assert _closed(sock)
    sock.close()
    sock = socket.create_connection(addr(host), timeout=5)
    assert call(host, SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), 1, sock=sock).error_code == 0
    client = scramp.ScramClient(["SCRAM-SHA-256"], "admin", "admin-secret")
    first = call(host, SaslAuthenticateRequest(auth_bytes=client.get_client_first().encode()), 2, sock=sock)
    client.set_server_first(first.auth_bytes.decode())
    final = call(host, SaslAuthenticateRequest(auth_bytes=client.get_client_final().encode()), 2, sock=sock)
    assert final.error_code == 0
    client.set_server_final(final.auth_bytes.decode())  # the server proved it knows the password too
    resp = call(host, describe, 1, sock=sock)
    assert (resp.error_code, [n.broker_id for n in resp.brokers]) == (0, [101])
    sock.close()


def test_both_clients_reauthenticate_before_their_tokens_expire(oauth_cluster, jwks, caplog):
    import time

    from kafka.net.sasl.oauth import AbstractTokenProvider

    caplog.set_level(logging.INFO, logger="sandbox.server")

    def fresh() -> tuple[str, float]:
        exp = int(time.time()) + 6
        return jwks.token(sub="short-lived", iat=exp - 6, exp=exp), float(exp)

    class Provider(AbstractTokenProvider):
        def token(self) -> str:
            return fresh()[0]

    admin = KafkaAdminClient(
        bootstrap_servers=oauth_cluster.bootstrap_servers,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="OAUTHBEARER",
        sasl_oauth_token_provider=Provider(),
    )
    confluent = AdminClient(
        {
            "bootstrap.servers": oauth_cluster.bootstrap_servers,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "oauth_cb": lambda _: fresh(),
        }
    )
    try:
        deadline = time.monotonic() + 8  # past the first tokens' lifetime: the sessions were renewed
        while time.monotonic() < deadline:
            assert [b["broker_id"] for b in admin.describe_cluster()["brokers"]] == [1]
            assert sorted(confluent.list_topics(timeout=5).brokers) == [1]
            confluent.poll(0.2)  # librdkafka asks oauth_cb for a new token from poll()
        renewed = [
            r.getMessage() for r in caplog.records if "re-authenticated as User:short-lived" in r.getMessage()
        ]
        assert len(renewed) >= 2, caplog.text  # a connection of each client at least
    finally:
        admin.close()


def test_it_lets_the_client_ask_api_versions_again_after_an_error_but_not_after_an_answer(sasl_cluster):
    from kafka.protocol.sasl import SaslHandshakeRequest

    host = sasl_cluster.bootstrap_servers
    sock = _raw(sasl_cluster)
    bad = ApiVersionsRequest(client_software_name="bad name!", client_software_version="1")
    bad.with_header(correlation_id=3, client_id="p")
    sock.sendall(bad.encode(version=3, header=True, framed=True))
    size = struct.unpack(">i", recv_exact(sock, 4))[0]
    assert recv_exact(sock, size) == bytes.fromhex("00000003002a010000000000")  # INVALID_REQUEST
    assert call(host, API_VERSIONS, 3, sock=sock).error_code == 0
    assert call(host, SaslHandshakeRequest(mechanism="PLAIN"), 1, sock=sock).error_code == 0
    sock.close()
    sock = _raw(sasl_cluster)
    assert call(host, API_VERSIONS, 3, sock=sock).error_code == 0
    API_VERSIONS.with_header(correlation_id=4, client_id="twice")
    sock.sendall(API_VERSIONS.encode(version=3, header=True, framed=True))
    assert _closed(sock)  # Kafka: "Unexpected ApiVersions request received during SASL authentication"
    sock.close()
