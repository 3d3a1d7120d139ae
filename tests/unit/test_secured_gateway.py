"""The gateway on secured sandbox listeners (issue 31): TLS, mTLS, SCRAM, PLAIN over SSL and
OAUTHBEARER work through both clients, and each misconfiguration is named exactly by
``test_connection`` (and by the first librdkafka read, which runs the same TLS probe).

OAUTHBEARER: the token endpoint and the JWKS the sandbox validates against are served here by a
small local HTTP server with a key made for this run (joserfc), not by the SSO tests' provider.
"""

from __future__ import annotations

import datetime as dt
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from urllib.parse import parse_qs

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from console.kafka import (
    OK,
    ClusterConnection,
    KafkaOperationError,
    NewTopic,
    OAuthSettings,
    close_all,
    get_gateway,
)
from console.kafka.oauth import token_source
from sandbox.pki import CA, make_ca
from sandbox.security import SandboxSecurity
from sandbox.testing import running_sandbox
from tests.local_http import LocalServer, QuietHandler

NOW = dt.datetime.now(dt.UTC)
HOSTS = ("localhost", "127.0.0.1")
USERS = {"admin": "admin-secret", "alice": "alice-secret"}
AUDIENCE, ISSUER = "kafka", "https://idp.test/realms/k"
CLIENT_ID, CLIENT_SECRET = "console", "console-client-secret-42"


@pytest.fixture(scope="module")
def client_pair(ca: CA) -> tuple[str, str]:
    return ca.issue("console", client=True)


@contextmanager
def cluster(security: SandboxSecurity, controllers: int = 1) -> Iterator:
    with running_sandbox(brokers=1, controllers=controllers, security=security) as c:
        try:
            yield c
        finally:
            close_all()


def connect(c, **kw) -> ClusterConnection:
    kw.setdefault("bootstrap_servers", c.bootstrap_servers)
    kw.setdefault("request_timeout_s", 5.0)
    kw.setdefault("connect_timeout_s", 3.0)
    return ClusterConnection(**kw)


def refused(conn: ClusterConnection) -> KafkaOperationError:
    """The error of ``test_connection`` (within the timeouts)."""
    start = time.monotonic()
    with pytest.raises(KafkaOperationError) as exc:
        get_gateway(conn).test_connection()
    assert time.monotonic() - start < conn.request_timeout_s + conn.connect_timeout_s + 2
    return exc.value


def works_end_to_end(conn: ClusterConnection) -> None:
    """Test connection, then a topic made (kafka-python), listed and deleted (librdkafka)."""
    gw = get_gateway(conn)
    check = gw.test_connection()
    assert check.broker_count == 1 and check.cluster_id
    name = f"secured-{uuid.uuid4().hex[:8]}"
    assert gw.create_topics([NewTopic(name, 1, 1)]) == {name: OK}
    assert name in {t.name for t in gw.list_topics_metadata().topics}
    assert gw.delete_topics([name]) == {name: OK}


# ---- TLS and mTLS ---------------------------------------------------------------------------
def test_it_speaks_tls_and_reports_the_server_certificate(ca, server_pair):
    cert, key = server_pair
    with cluster(SandboxSecurity("SSL", server_cert_pem=cert, server_key_pem=key)) as c:
        conn = connect(c, security_protocol="SSL", ca_cert_pem=ca.cert_pem)
        works_end_to_end(conn)
        check = get_gateway(conn).test_connection()
        assert check.server_certificate.subject == "CN=localhost"
        assert check.server_certificate.issuer == "CN=Sandbox Test CA"
        assert check.server_certificate.not_after > NOW + dt.timedelta(days=29)
        assert check.tls_version in ("TLSv1.2", "TLSv1.3") and check.client_certificate is None
        assert get_gateway(conn).tls_peer() == check.server_certificate


def test_it_speaks_mtls_and_reports_both_certificates(ca, server_pair, client_pair):
    cert, key = server_pair
    security = SandboxSecurity("SSL", server_cert_pem=cert, server_key_pem=key, client_ca_pem=ca.cert_pem)
    with cluster(security) as c:
        conn = connect(
            c,
            security_protocol="SSL",
            ca_cert_pem=ca.cert_pem,
            client_cert_pem=client_pair[0],
            client_key_pem=client_pair[1],
        )
        works_end_to_end(conn)
        check = get_gateway(conn).test_connection()
        assert check.client_certificate.subject == "CN=console"
        assert check.client_certificate.not_after > NOW + dt.timedelta(days=29)


def test_it_speaks_tls_to_the_controllers_kip_919(ca, server_pair, client_pair):
    cert, key = server_pair
    security = SandboxSecurity("SSL", server_cert_pem=cert, server_key_pem=key, client_ca_pem=ca.cert_pem)
    with cluster(security) as c:
        conn = ClusterConnection(
            bootstrap_controllers=c.bootstrap_controllers,
            security_protocol="SSL",
            ca_cert_pem=ca.cert_pem,
            client_cert_pem=client_pair[0],
            client_key_pem=client_pair[1],
            connect_timeout_s=3.0,
        )
        check = get_gateway(conn).test_connection()
        assert check.endpoint_type == "controller" and check.server_certificate.subject == "CN=localhost"
        assert get_gateway(conn).describe_quorum().leader_id >= 0


def test_it_names_an_unknown_ca(server_pair):
    cert, key = server_pair
    with cluster(SandboxSecurity("SSL", server_cert_pem=cert, server_key_pem=key)) as c:
        other = make_ca("Some Other CA")
        conn = connect(c, security_protocol="SSL", ca_cert_pem=other.cert_pem)
        err = refused(conn)
        assert err.name == "TLS_SERVER_CERTIFICATE_REJECTED"
        assert err.message.startswith(
            f"{c.bootstrap_servers}: the server certificate was not accepted: unable to get local issuer certificate "
            "(subject 'CN=localhost', issuer 'CN=Sandbox Test CA', valid until "
        )
        # the librdkafka path runs the same probe before its first use
        with pytest.raises(KafkaOperationError) as exc:
            get_gateway(conn).list_topics_metadata()
        assert exc.value.name == "TLS_SERVER_CERTIFICATE_REJECTED"


def test_it_names_a_hostname_mismatch_and_connects_when_the_check_is_off(ca):
    cert, key = ca.issue("kafka.example.org", sans=("kafka.example.org",))
    with cluster(SandboxSecurity("SSL", server_cert_pem=cert, server_key_pem=key)) as c:
        err = refused(connect(c, security_protocol="SSL", ca_cert_pem=ca.cert_pem))
        assert err.name == "TLS_SERVER_CERTIFICATE_REJECTED"
        assert err.message.startswith(
            f"{c.bootstrap_servers}: the server certificate was not accepted: "
            "IP address mismatch, certificate is not valid for '127.0.0.1'. "
            "(subject 'CN=kafka.example.org', issuer 'CN=Sandbox Test CA'"
        )
        works_end_to_end(
            connect(c, security_protocol="SSL", ca_cert_pem=ca.cert_pem, ssl_check_hostname=False)
        )


def test_it_names_an_expired_server_certificate(ca):
    cert, key = ca.issue(
        "localhost", sans=HOSTS, not_before=NOW - dt.timedelta(days=60), not_after=NOW - dt.timedelta(days=1)
    )
    with cluster(SandboxSecurity("SSL", server_cert_pem=cert, server_key_pem=key)) as c:
        conn = connect(c, security_protocol="SSL", ca_cert_pem=ca.cert_pem)
        err = refused(conn)
        assert err.name == "TLS_SERVER_CERTIFICATE_REJECTED"
        expiry = (NOW - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M")
        assert err.message == (
            f"{c.bootstrap_servers}: the server certificate was not accepted: certificate has expired "
            f"(subject 'CN=localhost', issuer 'CN=Sandbox Test CA', valid until {expiry} UTC)"
        )
        assert get_gateway(conn).tls_peer().not_after < NOW


def test_it_names_a_missing_client_certificate(ca, server_pair):
    cert, key = server_pair
    security = SandboxSecurity("SSL", server_cert_pem=cert, server_key_pem=key, client_ca_pem=ca.cert_pem)
    with cluster(security) as c:
        err = refused(connect(c, security_protocol="SSL", ca_cert_pem=ca.cert_pem))
        assert (err.name, err.message) == (
            "TLS_CLIENT_CERTIFICATE_REFUSED",
            f"{c.bootstrap_servers}: the server refused the client certificate (certificate required); "
            "no client certificate is configured",
        )


def test_it_names_an_expired_client_certificate(ca, server_pair):
    cert, key = server_pair
    old_cert, old_key = ca.issue(
        "console", client=True, not_before=NOW - dt.timedelta(days=60), not_after=NOW - dt.timedelta(days=2)
    )
    security = SandboxSecurity("SSL", server_cert_pem=cert, server_key_pem=key, client_ca_pem=ca.cert_pem)
    with cluster(security) as c:
        conn = connect(
            c,
            security_protocol="SSL",
            ca_cert_pem=ca.cert_pem,
            client_cert_pem=old_cert,
            client_key_pem=old_key,
        )
        err = refused(conn)
        expiry = (NOW - dt.timedelta(days=2)).strftime("%Y-%m-%d %H:%M")
        assert (err.name, err.message) == (
            "TLS_CLIENT_CERTIFICATE_REFUSED",
            f"{c.bootstrap_servers}: the server refused the client certificate (certificate expired); "
            f"the client certificate is 'CN=console' issued by 'CN=Sandbox Test CA', EXPIRED on {expiry} UTC",
        )


def test_it_enforces_the_minimum_tls_version_on_both_paths(ca, server_pair):
    cert, key = server_pair
    security = SandboxSecurity("SSL", server_cert_pem=cert, server_key_pem=key, tls_max_version="TLSv1.2")
    with cluster(security) as c:
        conn = connect(c, security_protocol="SSL", ca_cert_pem=ca.cert_pem, tls_min_version="TLSv1.3")
        err = refused(conn)
        assert (err.name, err.message) == (
            "TLS_VERSION_REFUSED",
            f"{c.bootstrap_servers}: no TLS version both sides accept (the console requires TLSv1.3 or newer)",
        )
        with pytest.raises(KafkaOperationError) as exc:
            get_gateway(conn).list_topics_metadata()  # librdkafka has no such setting: the probe refuses
        assert exc.value.name == "TLS_VERSION_REFUSED"
        assert (
            get_gateway(connect(c, security_protocol="SSL", ca_cert_pem=ca.cert_pem))
            .test_connection()
            .tls_version
            == "TLSv1.2"
        )


# ---- SASL PLAIN / SCRAM ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def sasl_ssl(server_pair):
    cert, key = server_pair
    security = SandboxSecurity(
        "SASL_SSL",
        server_cert_pem=cert,
        server_key_pem=key,
        mechanisms=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
        users=USERS,
    )
    with cluster(security) as c:
        yield c


def alice_over_sasl_ssl(c, ca, mechanism: str, password: str):
    """The connection of the user alice to ``c``'s SASL_SSL listener with ``mechanism`` and ``password``."""
    return connect(
        c,
        security_protocol="SASL_SSL",
        ca_cert_pem=ca.cert_pem,
        sasl_mechanism=mechanism,
        sasl_username="alice",
        sasl_password=password,
    )


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_it_authenticates_with_plain_and_scram_over_ssl(sasl_ssl, ca, mechanism):
    works_end_to_end(alice_over_sasl_ssl(sasl_ssl, ca, mechanism, "alice-secret"))


@pytest.mark.parametrize(
    ("mechanism", "kafka_says"),
    [
        ("PLAIN", "Authentication failed: Invalid username or password"),
        (
            "SCRAM-SHA-512",
            "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
        ),
    ],
)
def test_it_names_a_wrong_password(sasl_ssl, ca, mechanism, kafka_says):
    conn = alice_over_sasl_ssl(sasl_ssl, ca, mechanism, "not-the-password")
    err = refused(conn)
    assert err.name == "SASL_AUTHENTICATION_FAILED"
    assert err.message.startswith(f"{kafka_says} (")
    assert "not-the-password" not in err.message and "not-the-password" not in err.operator_text
    with pytest.raises(KafkaOperationError) as exc:
        get_gateway(conn).list_topics_metadata()
    assert exc.value.name == "SASL_AUTHENTICATION_FAILED", exc.value


def test_it_names_a_disabled_mechanism_and_lists_the_enabled_ones():
    plain_only = SandboxSecurity("SASL_PLAINTEXT", mechanisms=("PLAIN",), users=USERS)
    with cluster(plain_only) as c:
        err = refused(
            connect(
                c,
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="SCRAM-SHA-512",
                sasl_username="alice",
                sasl_password="alice-secret",
            )
        )
        assert (err.name, err.message) == (
            "UNSUPPORTED_SASL_MECHANISM",
            "the listener does not enable SCRAM-SHA-512; it enables: PLAIN",
        )


# ---- OAUTHBEARER ----------------------------------------------------------------------------
class IdP(LocalServer):
    """A token endpoint (client credentials, HTTP Basic) and its JWKS on 127.0.0.1."""

    def __init__(self) -> None:
        self.key = ECKey.generate_key("P-256", parameters={"kid": "k1"})
        self.lifetime = 300
        self.signing_key = self.key
        idp = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                self.reply(200, {"keys": [idp.key.as_dict(private=False)]})

            def do_POST(self) -> None:
                import base64

                form = parse_qs(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())
                auth = self.headers.get("Authorization", "")
                user, _, secret = base64.b64decode(auth.removeprefix("Basic ")).decode().partition(":")
                if form.get("grant_type") != ["client_credentials"] or (user, secret) != (
                    CLIENT_ID,
                    CLIENT_SECRET,
                ):
                    self.reply(
                        401, {"error": "invalid_client", "error_description": "Invalid client credentials"}
                    )
                    return
                now = int(time.time())
                claims = {
                    "sub": "svc-console",
                    "aud": AUDIENCE,
                    "iss": ISSUER,
                    "iat": now,
                    "exp": now + idp.lifetime,
                }
                token = jwt.encode({"alg": "ES256", "kid": "k1"}, claims, idp.signing_key)
                self.reply(200, {"access_token": token, "token_type": "Bearer", "expires_in": idp.lifetime})

        super().__init__(Handler)
        self.token_url, self.jwks_url = f"{self.base}/token", f"{self.base}/jwks"
        self.start()


@pytest.fixture(scope="module")
def idp():
    server = IdP()
    yield server
    server.close()


@pytest.fixture(scope="module")
def oauth_cluster(idp, server_pair):
    cert, key = server_pair
    security = SandboxSecurity(
        "SASL_SSL",
        server_cert_pem=cert,
        server_key_pem=key,
        mechanisms=("OAUTHBEARER",),
        oauth_jwks_url=idp.jwks_url,
        oauth_audience=AUDIENCE,
        oauth_issuer=ISSUER,
    )
    with cluster(security) as c:
        yield c


def oauth_conn(c, ca, token_url: str, secret: str = CLIENT_SECRET, scope: str = "") -> ClusterConnection:
    settings = OAuthSettings(token_url, CLIENT_ID, secret, scope=scope)
    return connect(
        c, security_protocol="SASL_SSL", ca_cert_pem=ca.cert_pem, sasl_mechanism="OAUTHBEARER", oauth=settings
    )


def test_it_authenticates_with_oauthbearer_on_both_clients(oauth_cluster, idp, ca):
    works_end_to_end(oauth_conn(oauth_cluster, ca, idp.token_url))


def test_it_names_a_wrong_client_secret(oauth_cluster, idp, ca):
    conn = oauth_conn(oauth_cluster, ca, idp.token_url, secret="wrong-secret-77")
    err = refused(conn)
    assert (err.name, err.message) == (
        "TOKEN_ENDPOINT_REFUSED",
        "token endpoint refused the client (401 invalid_client): Invalid client credentials",
    )
    assert "wrong-secret-77" not in err.operator_text
    with pytest.raises(KafkaOperationError) as exc:
        get_gateway(conn).list_topics_metadata()
    assert exc.value.name == "TOKEN_ENDPOINT_REFUSED"


def test_it_names_an_unreachable_token_endpoint(oauth_cluster, ca):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/token"
    err = refused(oauth_conn(oauth_cluster, ca, url, scope="unreachable"))
    assert err.name == "TOKEN_ENDPOINT_UNREACHABLE"
    assert (
        err.message.startswith(f"token endpoint unreachable: {url}: ") and "Connection refused" in err.message
    )


def test_it_names_an_expired_token(oauth_cluster, idp, ca):
    idp.lifetime = -120
    try:
        err = refused(oauth_conn(oauth_cluster, ca, idp.token_url, scope="expired"))
    finally:
        idp.lifetime = 300
    assert (err.name, err.message) == (
        "TOKEN_EXPIRED",
        f"token endpoint {idp.token_url} answered a token that has already expired",
    )


def test_it_passes_on_what_kafka_says_of_a_token_it_refuses(oauth_cluster, idp, ca):
    idp.signing_key = ECKey.generate_key("P-256", parameters={"kid": "k1"})  # not the key in the JWKS
    try:
        err = refused(oauth_conn(oauth_cluster, ca, idp.token_url, scope="forged"))
    finally:
        idp.signing_key = idp.key
    assert err.name == "SASL_AUTHENTICATION_FAILED"


# ---- no secret in any log line ----------------------------------------------------------------
def test_it_logs_no_secret_or_token_of_a_whole_good_and_bad_run(oauth_cluster, sasl_ssl, idp, ca, debug_logs):
    good = oauth_conn(oauth_cluster, ca, idp.token_url, scope="logged")
    works_end_to_end(good)
    token = token_source(good.oauth).token().value
    refused(oauth_conn(oauth_cluster, ca, idp.token_url, secret="wrong-secret-in-log"))
    plain = connect(
        sasl_ssl,
        security_protocol="SASL_SSL",
        ca_cert_pem=ca.cert_pem,
        sasl_mechanism="PLAIN",
        sasl_username="alice",
        sasl_password="password-in-log-77",
    )
    refused(plain)
    works_end_to_end(replace(plain, sasl_password="alice-secret"))
    text = debug_logs.text
    assert "SaslAuthenticateRequest(version=2, auth_bytes=<redacted>)" in text  # logged, blanked
    for secret in (CLIENT_SECRET, "wrong-secret-in-log", "password-in-log-77", "alice-secret", token):
        assert secret not in text


# ---- the GSSAPI path's substitute for librdkafka, and the one whole-cluster read -------------------
def test_the_whole_metadata_read_and_kafka_python_delete_answer_like_librdkafka(sandbox):
    """The whole-cluster read (kafka-python's bytes, decoded in C: metadata_read.py) gives librdkafka's
    answer on every topic and partition; DeleteTopics over kafka-python (GSSAPI) answers like it."""
    from confluent_kafka.admin import AdminClient

    from console.kafka import kp_admin

    gw = get_gateway(ClusterConnection(bootstrap_servers=sandbox.bootstrap_servers))
    name = f"kp-admin-{uuid.uuid4().hex[:8]}"
    assert gw.create_topics([NewTopic(name, 3, 2)]) == {name: OK}
    ours = gw.list_topics_metadata()
    theirs = AdminClient({"bootstrap.servers": sandbox.bootstrap_servers}).list_topics(timeout=10)
    assert (ours.cluster_id, ours.controller_id) == (theirs.cluster_id, theirs.controller_id)
    assert {b.id: (b.host, b.port) for b in ours.brokers} == {
        b: (m.host, m.port) for b, m in theirs.brokers.items()
    }
    assert [t.name for t in ours.topics] == sorted(theirs.topics)
    for t in ours.topics:
        assert {p.id: (p.leader, list(p.replicas), list(p.isr)) for p in t.partitions} == {
            p: (q.leader, q.replicas, q.isrs) for p, q in theirs.topics[t.name].partitions.items()
        }
    ours = kp_admin.delete_topics(gw._kp, [name, "no-such-topic-x"], 5.0)
    theirs = gw.delete_topics(["no-such-topic-x"])["no-such-topic-x"]
    assert ours[name] == OK
    assert (ours["no-such-topic-x"].code, ours["no-such-topic-x"].name) == (theirs.code, theirs.name)
    assert theirs.name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert name not in {t.name for t in gw.list_topics_metadata().topics}
